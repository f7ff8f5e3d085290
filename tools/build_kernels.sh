#!/usr/bin/env bash
# The main job: installs what is missing (tools/setup.sh), builds the compiler
# and the runtime, compiles every kernel, packs the wheel into dist/
# (tools/build.sh) and, where a GPU is present, installs the wheel and runs
# the GPU tests against it (tools/gpu.sh test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/setup.sh"
bash "$root/tools/build.sh"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU found: installing the wheel and running the GPU tests"
  bash "$root/tools/gpu.sh" test
else
  echo "no GPU here: carry dist/ to a GPU machine and run tools/gpu.sh test there"
fi
