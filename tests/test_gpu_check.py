"""benchmarks/gpu_check.sh --dry-run: the GPU check's code path, run on a CPU with tiny sizes.

The figures of a dry run mean nothing; what is checked is that the script runs end to end, writes
one JSON file with every part the GPU run reports, and that greedy equality holds in float32."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_check_dry_run_writes_every_part(tmp_path):
    out = tmp_path / "gpu_check.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--dry-run", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    from core.decoding import decoder_methods
    assert report["dry_run"] is True and report["device"] == "cpu"
    assert set(report["results"]) == {"float32", "bfloat16"}
    for dtype, entry in report["results"].items():
        assert set(entry["greedy_equality"]) == set(decoder_methods())
        rows = entry["bench"]["rows"]
        assert {(r["method"], r["K"]) for r in rows} >= {("sd", 1), ("bv", 1), ("rbv", 4)}
        names = {b["name"] for b in entry["bench"]["baselines"]}
        assert {"autoregressive", "hf_generate", "hf_assisted"} <= names
        tree = entry["tree_attention"]
        assert tree["support"] == {"draft": None, "target": None} and tree["nodes"] == 14       # 13 nodes and the root
        assert all(g["attention"] == "tree attention" for g in entry["greedy_equality"].values())
        suite = entry["trees"]["rows"]
        drafts = {(r["method"], r["draft"], r["temperature"]) for r in suite}
        assert {("sd", "chains 1×4, iid", 0.7), ("traversal", "chains 4×4, iid", 0.0),
                ("otv", "chains 4×4, iid", 0.7), ("rrs", "b = (2, 2, 1, 1), greedy", 0.0),
                ("traversal", "b = (2, 2, 1, 1), wor", 0.7),
                ("rrs", "dynamic tree of 16 nodes, depth 4, top-4", 0.7)} <= drafts
        assert any(d.startswith("rank tree of 16 nodes") for _, d, _ in drafts)       # Sequoia's
        assert all(r["context"] == 64 and r["peak_cache_bytes"] > 0 and
                   set(r["iteration_ms"]) == {"draft", "target", "verify", "cache", "other"} for r in suite)
        assert len(entry["trees"]["goals"]["iteration_time_over_sd_K4_L4"]["all"]) == 6
        assert {g["temperature"] for g in entry["trees"]["goals"]["best_tree"]["all"]} == {0.7, 0.0}
        assert len(entry["greedy_equality_trees"]) == 2 * 9
    assert report["skipped"] == []
    # float32 on a CPU: every rule at T = 0 is the target's greedy decoding, token for token, on
    # every shape and law, and the tree row gives the rows' argmax at every node.
    f32 = report["results"]["float32"]
    assert all(g["equal"] for g in f32["greedy_equality"].values() if g["expected"])
    assert [m for m, g in f32["greedy_equality"].items() if not g["expected"]] == ["hf_ensemble"]
    assert all(g["equal"] and g["attention"] == "tree attention" for g in f32["greedy_equality_trees"].values())
    assert f32["tree_attention"]["argmax_differs_at"] == 0
