#!/usr/bin/env bash
# The test suite: lit tests of the dialect, passes and pipeline (with ptxas
# where the CUDA toolkit is installed), the runtime's unit tests, and the
# Python tests against a freshly built bundle (GPU tests skip without a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
export PATH=$PATH:/usr/local/cuda/bin

BUILD_DIR=$build "$root/tools/build_kernels.sh" >/dev/null
cmake --build "$build" --target RuntimeTest fake_cuda
/usr/lib/llvm-22/bin/lit -sv "$build/test"
(cd "$build" && ctest --output-on-failure)
PYTHONPATH="$root/bundle" python3 -m pytest -q "$root/test/python"
