#!/usr/bin/env bash
# On the GPU machine with bundle/ carried: the GPU tests, compute-sanitizer
# memcheck and racecheck on a small backward, and the benchmark sweep.
# Logs and the benchmark JSON go to $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu_run}
mkdir -p "$out"
timeout 300 bash "$root/tools/gpu_run.sh" -q
export PYTHONPATH=$root/bundle
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 \
    python3 "$root/test/gpu/sanitize_bwd.py" 2>&1 | tail -4 | tee "$out/sanitizer-$tool.log"
done
timeout 400 python3 "$root/bench/bench_bwd.py" --commit "${COMMIT:-unknown}" \
  --out "$out/bench.json" "$@" 2>&1 | tee "$out/bench.log"
