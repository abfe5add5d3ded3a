#!/usr/bin/env bash
# The GPU check on the bundled pair (benchmarks/gpu_check.py): tree attention against rows, greedy
# equality of every rule with tree attention, the decoder benchmark at K in {1, 4} and at 64- and
# 700-token contexts, in float16 and bfloat16, written to one JSON file.  Bounded to 8 minutes.  Usage: benchmarks/gpu_check.sh [--out FILE] [--dry-run]
set -euo pipefail
cd "$(dirname "$0")/.."
exec timeout 480 python3 -m benchmarks.gpu_check "$@"
