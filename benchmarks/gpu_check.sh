#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py): tree attention against rows; greedy equality of every
# rule, and of rrs and traversal on every shape and law (chains, static trees by every law, a
# rank-path tree, EAGLE-2's dynamic tree); the decoder benchmark at K in {1, 4}; issue 27's tree
# suite at 64- and 700-token contexts (the bundled pair in float16 and bfloat16, SmolLM2 in
# bfloat16 when installed); one JSON file.  Bounded to 8 minutes; parts that would not fit are
# skipped and named.  Usage: benchmarks/gpu_check.sh [--out FILE] [--dry-run] [--budget-s S]
set -euo pipefail
cd "$(dirname "$0")/.."
exec timeout 480 python3 -m benchmarks.gpu_check "$@"
