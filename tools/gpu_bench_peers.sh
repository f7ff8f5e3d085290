#!/usr/bin/env bash
# On the GPU machine with the wheel installed (tools/gpu_run.sh) and
# cuDNN-frontend's wheels unpacked into /tmp/peers-site by
# ../shared/peers/install_on_gpu.sh (see ../shared/peers/README.md): the
# benchmark, sparse_mla next to cuDNN-frontend SM90, into $OUT.
# usage: tools/gpu_bench_peers.sh [python3 -m sparse_mla.bench options]
set -uo pipefail
site=/tmp/peers-site
out=${OUT:-/tmp/bench}
cd /tmp || exit 1
PYTHONPATH=$site:$site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1 \
  python3 -m sparse_mla.bench --out "$out" "$@"
