#!/usr/bin/env bash
# On a machine with two or more GPUs and the wheel installed (tools/gpu_run.sh):
# context parallelism over NCCL (issue 28). Runs the two-rank test of
# examples/context_parallel.py on both backends (H=16 and 64, even and uneven
# splits), then times one step of 2 x 8192 queries over Skv = 16384 against
# one GPU's call over the whole sequence (the communication's share). Logs
# go to $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu_cp}
mkdir -p "$out"
n=$(nvidia-smi -L | wc -l)
[ "$n" -ge 2 ] || { echo "gpu_cp: needs two GPUs, found $n"; exit 1; }
cd /tmp || exit 1
export SPARSE_MLA_USE_INSTALLED=1 PYTHONUNBUFFERED=1
python3 -m pytest -v -p no:cacheprovider "$root/test/python/test_gpu_context_parallel.py" \
  2>&1 | tee "$out/cp-test.log"
status=${PIPESTATUS[0]}
for h in 16 64; do
  timeout 500 python3 "$root/examples/context_parallel.py" --backend nccl --world 2 \
    --tokens 16384 --heads $h --topk 2048 --time 2>&1 | tee -a "$out/cp-time.log"
done
exit "$status"
