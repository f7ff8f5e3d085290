#!/usr/bin/env bash
# On the GPU machine with bundle/ carried, and cuDNN-frontend's wheels
# unpacked by ../shared/peers/install_on_gpu.sh (its scripts copied into
# .whl/peers/bin, see ../shared/peers/README.md): sparse_mla (token tiles by
# default, and per token) next to cuDNN-frontend SM90, one pattern per call.
# usage: tools/gpu_bench_peers.sh PATTERN SHAPES   (SHAPES: SxH,...)
# Writes $OUT/peers-PATTERN.json; exits non-zero if the run fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pattern=${1:?usage: gpu_bench_peers.sh PATTERN SHAPES}
shapes=${2:?usage: gpu_bench_peers.sh PATTERN SHAPES}
out=${OUT:-$root/build/gpu_run}
site=/tmp/peers-site
export PEERS_BIN=${PEERS_BIN:-$root/.whl/peers/bin}
export PYTHONPATH=$site:$site/nvidia_cutlass_dsl/dsl_packages:$root/bundle PYTHONUNBUFFERED=1
python3 "$root/bench/side_by_side.py" --pattern "$pattern" --shapes "$shapes" \
  --commit "${COMMIT:-unknown}" --out "$out/peers-$pattern.json"
