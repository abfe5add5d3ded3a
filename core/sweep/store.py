"""The results folder: a Parquet dataset written batch by batch, resumable, never overwritten.

``OUT.parquet/`` holds ``_sweep.json`` (the configuration) and one ``part-….parquet`` file per batch.
A batch is written to a hidden temporary name and renamed into place, so a file is either whole or
absent: an interrupted sweep leaves whole batches only, and rerunning the same command computes the
instances no file holds yet.  A folder made by another configuration, or anything else at that path,
is refused with one sentence: results are never overwritten silently.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from core.sweep.config import DraftKey, InstanceKey, SweepConfig, SweepError
from core.sweep.work import KEY_COLUMNS, group_columns

CONFIG_FILE = "_sweep.json"
FORMAT = 1


def _read_config(path: Path) -> SweepConfig:
    try:
        saved = json.loads((path / CONFIG_FILE).read_text())
        return SweepConfig.from_json(saved["config"])
    except (OSError, ValueError, KeyError, TypeError):
        raise SweepError(f"{path} is not a sweep results folder (no readable {CONFIG_FILE}); "
                         f"choose another --out or remove it") from None


def _first_difference(a: SweepConfig, b: SweepConfig) -> str:
    """The first field where ``b`` (saved) and ``a`` (asked for) differ, e.g. "seed 0 there, 1 here"."""
    def show(value):
        if value is None:
            return "none"
        return ",".join(show(v) if isinstance(v, list) else str(v) for v in value) if isinstance(value, list) \
            else str(value)
    ja, jb = a.to_json(), b.to_json()
    key = next(k for k in {**ja, **jb} if ja.get(k) != jb.get(k))
    return f"{key} {show(jb.get(key))} there, {show(ja.get(key))} here"


class ResultsStore:
    """A results folder opened for one configuration: created if absent, else checked against it."""

    def __init__(self, path, config: SweepConfig):
        self.path = Path(path)
        self.config = config
        if not self.path.exists():
            self.path.mkdir(parents=True)
            self._write_atomic(self.path / CONFIG_FILE,
                               json.dumps({"format": FORMAT, "config": config.to_json()}, indent=1).encode())
        elif not self.path.is_dir():
            raise SweepError(f"{self.path} exists and is not a sweep results folder; "
                             f"choose another --out or remove it")
        else:
            saved = _read_config(self.path)
            if saved != config:
                raise SweepError(f"{self.path} holds a sweep with another configuration "
                                 f"({_first_difference(config, saved)}); choose another --out")

    @staticmethod
    def _write_atomic(path: Path, data: bytes) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def done(self) -> set[InstanceKey] | set[DraftKey]:
        """The instances (a draft sweep's units) the folder holds rows for (a batch file is whole,
        so all its methods, shapes and laws)."""
        if not any(self.path.glob("part-*.parquet")):
            return set()
        key = self.config.key_type
        table = read_table(self.path, columns=list(key._fields))
        return set(map(key._make, zip(*(table.column(c).to_pylist() for c in key._fields))))

    def write(self, rows: list[dict]) -> Path:
        """Write one batch's rows as a new file, named after its first and last instance."""
        first, last = rows[0], rows[-1]
        cell = (f"L{first['L']}-n{first['budget']}" if self.config.drafts
                else f"K{first['K']}-L{first['L']}")
        name = f"part-{first['family']}-V{first['V']}-{cell}-{first['index']:06d}-{last['index']:06d}.parquet"
        sink = pa.BufferOutputStream()
        # every column any row has (a failed rule's row adds ``failure``), in order of first appearance
        columns = list(dict.fromkeys(key for row in rows for key in row))
        pq.write_table(pa.Table.from_pydict({c: [row.get(c) for row in rows] for c in columns}), sink)
        self._write_atomic(self.path / name, sink.getvalue().to_pybytes())
        return self.path / name


def read_table(path, columns: list[str] | None = None) -> pa.Table:
    """Every row of a results folder (or of one Parquet file), or ``SweepError`` if it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise SweepError(f"no results at {path}")
    try:
        dataset = ds.dataset(path, format="parquet")
        schemas = {f.physical_schema for f in dataset.get_fragments()}
        if len(schemas) > 1:
            # Sweeps of different kinds under one folder (a draft sweep's rows have more columns):
            # every column of every file, absent ones null, not only the first file's.
            dataset = ds.dataset(path, format="parquet", schema=pa.unify_schemas(list(schemas)))
        return dataset.to_table(columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise SweepError(f"{path} is not a readable sweep results file: "
                         f"{str(exc).splitlines()[0]}") from None


def read_results(path) -> pd.DataFrame:
    """The rows of a results folder as a DataFrame, sorted by instance (and draft), then method name."""
    frame = read_table(path).to_pandas()
    missing = {*KEY_COLUMNS, "method", "expected_accepted", "fidelity_tv"} - set(frame.columns)
    if missing:
        raise SweepError(f"{path} is not a sweep results file (no column {sorted(missing)[0]!r})")
    return frame.sort_values([*group_columns(frame), "method"], kind="stable").reset_index(drop=True)
