#!/usr/bin/env bash
# On a GPU machine (no LLVM needed), with bundle/ built by tools/build_kernels.sh:
# rebuilds the runtime library against that machine's C++ runtime and runs the
# Python tests (GPU tests included). Logs go to $OUT when it is set. Exits
# with pytest's status.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${BUNDLE_DIR:-$root/bundle}
out=${OUT:-$root/build/gpu_run}
mkdir -p "$out"
g++ -O2 -std=c++17 -shared -fPIC -I"$bundle/src/include" "$bundle"/src/Runtime/*.cpp \
  -ldl -o "$bundle/sparse_mla/lib/libsparse_mla_runtime.so" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$out/gpu.txt"
export PYTHONPATH=$bundle PYTHONUNBUFFERED=1
python3 -m pytest -v -rs "$root/test/python" "$@" 2>&1 | tee "$out/pytest.log"
