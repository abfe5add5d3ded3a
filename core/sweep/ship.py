"""The code travels with the job: a Dask cluster that has the requirements installed, but not this
repository, runs any sweep.

Dask pickles a task's function by reference (module and name) and unpickles the task graph in the
scheduler as well as in the workers, so both would have to import ``core``.  Instead, a job's tasks
carry this project's code themselves, and the scheduler sees only what the standard library and
Dask can rebuild:

- ``Shipped.of(fn)``: the ``.py`` sources of ``PACKAGES`` as one zip archive (179 kB), with those of
  the rules loaded from outside the project (``user_rules``: a rule file, or the package of a rule
  module), ``fn`` pickled (by reference: module and name), and this process's ``versions()``, in a
  small object whose
  class is pickled by value (cloudpickle: its code, not its name).  ``to_bytes()`` goes into the
  graph as the argument of one task, ``pickle.loads(bytes)``, so the scheduler holds opaque bytes; its
  result, the ``Shipped`` object, lives in a worker, other workers fetch it from there (it pickles
  back to the same bytes, ``__reduce__``), and the scheduler recomputes it if every copy is lost.
- Every batch task is ``dask.utils.apply(shipped, (args,))`` with its arguments pickled to bytes;
  its result comes back as bytes that ``unpack`` rebuilds in the client.
- In a worker, the first call writes the archive to the worker's local directory, puts it first on
  ``sys.path`` and imports ``fn`` from it: real imports, so the code runs exactly as here, lazy
  imports included.  A later job with other sources (another checkout, an edited file) has another
  digest: the worker forgets the modules it imported from the previous archive and imports the new
  ones, so it never runs stale code.  The rules from outside are then loaded under their names
  (``core.rules.registry.adopt``), whatever the worker's own ``EXPLORER_RULES``.  Only ``.py`` files travel: a module that read a data file
  beside itself would not find it in a worker (none in a sweep's path does).  A new module needs
  nothing: every ``.py`` file of ``PACKAGES`` is in every archive.

Why neither of the two tools Dask and cloudpickle offer on their own (docs/sweeps.md):

- ``cloudpickle.register_pickle_by_value`` copies the functions and classes a function reaches, not
  the modules behind them: this project's lazy imports (``core.bounds``' PEP 562 ``__getattr__``,
  the rules' imports inside functions) then fail in the worker (``No module named 'core'``); and
  Dask decides between pickle and cloudpickle on the outermost object only, so it would not apply
  to a task graph anyway;
- ``Client.upload_file`` (scheduler and workers) and the ``UploadDirectory`` plugin (workers)
  install the code for good: every later client and worker of the cluster inherits it; a second
  ``upload_file`` reloads only the top-level package, leaving stale submodules, and
  ``UploadDirectory`` reloads nothing unless it restarts the workers (and whatever they run).

The rebuilt code must compute what it computes here, so ``SHARED_PACKAGES`` must match: ``mismatch``
says where they do not (the engine refuses a sweep before computing anything), and a worker that
joins later with another environment refuses its batches.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

import cloudpickle

#: The project's packages: their sources travel with every job.
PACKAGES = ("core", "toy_models")
#: What must be the same in the client and every worker: numpy and scipy compute the numbers
#: (scipy carries HiGHS, whose version can change an LP's last digits), cloudpickle and Python's
#: minor version rebuild ``Shipped`` (bytecode differs between minor versions), dask and
#: distributed speak the protocol.  pyarrow and pandas are not here: only the client reads and
#: writes Parquet.
SHARED_PACKAGES = ("python", "numpy", "scipy", "cloudpickle", "dask", "distributed")
#: The scheduler runs none of this project's code: it needs only to speak Dask's protocol.
SCHEDULER_PACKAGES = ("python", "cloudpickle", "dask", "distributed")
#: The archive's file name in a worker: ``ARCHIVE_PREFIX + digest + ".zip"``.
ARCHIVE_PREFIX = "explorer-code-"
#: A fixed timestamp for every archive entry: the digest depends on the sources only.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def source_archive(packages=PACKAGES, extra: dict[str, bytes] | None = None) -> bytes:
    """The ``.py`` files of ``packages`` (as imported in this process) as a zip archive whose bytes
    depend on their paths and contents only; folders without ``__init__.py`` are left out.  ``extra``
    adds files by their path in the archive (the rules loaded from outside, ``user_rules``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in sorted((extra or {}).items()):
            archive.writestr(zipfile.ZipInfo(name, _EPOCH), data, compress_type=zipfile.ZIP_DEFLATED)
        for package in packages:
            root = Path(importlib.import_module(package).__file__).parent
            for path in sorted(root.rglob("*.py")):
                relative = path.relative_to(root.parent)
                if all((root.parent / Path(*relative.parts[:i]) / "__init__.py").exists()
                       for i in range(1, len(relative.parts))):
                    archive.writestr(zipfile.ZipInfo(relative.as_posix(), _EPOCH), path.read_bytes(),
                                     compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def user_rules() -> tuple[dict[str, bytes], list[str], list[str]]:
    """The rules this process loaded from outside the project (``core.rules.registry.user_rules``), as
    a worker takes them: their sources by path in the archive, their specifications as
    ``MODULE:CLASS`` of the archive's modules, and those modules' top-level names."""
    from core.rules.registry import USER_SPECS

    files: dict[str, bytes] = {}
    for spec in USER_SPECS.values():
        files.update(spec.files())
    texts = [f"{spec.module}:{spec.cls_name}" for spec in USER_SPECS.values()]
    return files, texts, sorted({spec.top for spec in USER_SPECS.values()})


def pack(obj) -> bytes:
    """``obj`` as bytes (cloudpickle: importable functions and classes by reference)."""
    return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(data: bytes):
    """The object ``pack`` pickled."""
    return pickle.loads(data)


def versions(packages=SHARED_PACKAGES) -> dict[str, str | None]:
    """This process's versions of ``packages``, as ``Client.get_versions`` reports them."""
    from distributed.versions import get_package_info

    found = get_package_info([p for p in packages if p != "python"])
    return {p: found.get(p) for p in packages}


def mismatch(here: dict, there: dict, where: str, here_name: str = "here") -> str | None:
    """The first package of ``here`` whose version differs in ``there``, as one clause ("numpy 2.4.6
    here, 2.3.0 on worker tcp://…"), or None.  Python counts by its minor version."""
    for package, mine in here.items():
        theirs = there.get(package)
        if package == "python":
            mine, theirs = (".".join(v.split(".")[:2]) if v else v for v in (mine, theirs))
        if mine != theirs:
            return f"{package} {mine or 'missing'} {here_name}, {theirs or 'missing'} on {where}"
    return None


def _code_folder() -> str:
    """The Dask worker's own local directory (removed when the worker closes), else the temp folder."""
    try:
        from distributed import get_worker

        return get_worker().local_directory
    except ValueError:
        return tempfile.gettempdir()


def _install(archive: bytes, digest: str, tops: tuple[str, ...] = ()) -> bool:
    """Make ``PACKAGES`` (and the rules' top-level modules ``tops``) importable from ``archive`` in this
    process; False if they already were.  Modules imported from anywhere else (another archive, a
    checkout on the path) are forgotten, so that the next import reads this archive."""
    import _imp   # the interpreter's import lock: two threads of a worker install one at a time

    path = os.path.join(_code_folder(), f"{ARCHIVE_PREFIX}{digest}.zip")
    _imp.acquire_lock()
    try:
        if getattr(sys.modules.get(PACKAGES[0]), "__file__", "").startswith(path + os.sep) and path in sys.path:
            return False
        if not os.path.exists(path):
            partial = f"{path}.{os.getpid()}.tmp"
            with open(partial, "wb") as out:
                out.write(archive)
            os.replace(partial, path)
        sys.path[:] = [path] + [p for p in sys.path if not os.path.basename(p).startswith(ARCHIVE_PREFIX)]
        for name in [m for m in sys.modules if m.partition(".")[0] in (*PACKAGES, *tops)]:
            del sys.modules[name]
        importlib.invalidate_caches()
        return True
    finally:
        _imp.release_lock()


class Shipped:
    """A function and the sources it runs from, built in the client, called in a worker (module
    docstring).  Its class travels by value: nothing here may refer to the rest of this project."""

    def __init__(self, archive: bytes, call: bytes, expected: dict, rules: tuple = (), tops: tuple = ()):
        self.archive, self.call, self.expected = archive, call, expected
        self.rules, self.tops = tuple(rules), tuple(tops)
        self.digest = hashlib.sha256(archive).hexdigest()[:16]
        self._fn: Callable | None = None

    @classmethod
    def of(cls, fn: Callable) -> "Shipped":
        files, rules, tops = user_rules()
        return cls(source_archive(extra=files), pack(fn), versions(), rules, tops)

    def to_bytes(self) -> bytes:
        """Bytes that ``pickle.loads`` turns back into this object in any process with the
        requirements (the class by value)."""
        module = sys.modules.get(__name__)
        # In the client this module is importable: pickle it by value, not by name.  In a worker the
        # class is already a copy (and cloudpickle pickles copies by value).
        if getattr(module, "Shipped", None) is Shipped and __name__ not in cloudpickle.list_registry_pickle_by_value():
            cloudpickle.register_pickle_by_value(module)
        return pack(_Call(Shipped, self.archive, self.call, self.expected, self.rules, self.tops))

    def __reduce__(self):
        # How Dask moves it between workers: as its bytes, rebuilt by the standard library.
        return pickle.loads, (self.to_bytes(),)

    def __call__(self, args: bytes) -> bytes:
        """``pack(fn(*unpack(args)))``, ``fn`` imported from the archive on the first call."""
        if self._fn is None:
            problem = mismatch(self.expected, versions(), "this worker", "in the client")
            if problem:
                raise RuntimeError(f"this Dask worker's environment differs from the client's ({problem}); "
                                   f"install the same requirements on every machine")
        if _install(self.archive, self.digest, self.tops) or self._fn is None:
            if self.rules:     # the rules from outside, under their names, before the call names them
                importlib.import_module("core.rules.registry").adopt(self.rules)
            self._fn = unpack(self.call)
        return pack(self._fn(*unpack(args)))


class _Call:
    """Pickles as the call ``fn(*args)``: what ``Shipped.to_bytes`` pickles, since pickling a
    ``Shipped`` itself goes through its ``__reduce__``."""

    def __init__(self, fn: Callable, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args
