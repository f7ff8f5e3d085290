#!/usr/bin/env bash
# The test suite, from a bare Debian machine: installs what is missing,
# builds (tools/build.sh), then runs the lit tests of the dialect, passes and
# pipeline (with ptxas where the CUDA toolkit is installed), the runtime's
# unit tests, the Python tests against the bundle (GPU tests skip without a
# GPU), a one-minute fuzz of sparse-mla-opt, and installs the wheel into a
# new virtual environment and runs the Python tests from outside the
# repository against it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
export PATH=$PATH:/usr/local/cuda/bin

bash "$root/tools/setup.sh"
BUILD_DIR=$build bash "$root/tools/build.sh" >/dev/null
cmake --build "$build" --target RuntimeTest fake_cuda
cmake --build "$build" --target check-sparse-mla-lit
(cd "$build" && ctest --output-on-failure)
PYTHONPATH="$root/bundle" python3 -m pytest -q "$root/test/python"
python3 "$root/tools/fuzz_opt.py" --seconds "${FUZZ_SECONDS:-60}"

# The wheel, as a user installs it: a new environment (torch from the
# system's site-packages), no network, tests run from elsewhere.
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-index --no-deps "$root"/dist/sparse_mla-*.whl
(cd "$venv" && SPARSE_MLA_USE_INSTALLED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$root/test/python")
(cd "$venv" && "$venv/bin/python" -c "import sparse_mla; print('installed', sparse_mla.__version__, 'from', sparse_mla.__file__)")
