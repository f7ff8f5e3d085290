#!/usr/bin/env bash
# On a GPU machine (no LLVM, no compiler, no network needed) with dist/
# carried (tools/build.sh made it): installs the wheel and runs the Python
# tests, GPU tests included, against the installed package from outside the
# repository. Logs go to $OUT when it is set. Exits with pytest's status.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu_run}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --force-reinstall "$root"/dist/sparse_mla-*.whl \
  2>&1 | tee "$out/pip.log" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$out/gpu.txt"
cd /tmp || exit 1
python3 -c "import sparse_mla; print('sparse_mla', sparse_mla.__version__, 'from', sparse_mla.__file__)" \
  | tee "$out/installed.txt"
export SPARSE_MLA_USE_INSTALLED=1 PYTHONUNBUFFERED=1
python3 -m pytest -v -rs -p no:cacheprovider "$root/test/python" "$@" 2>&1 | tee "$out/pytest.log"
