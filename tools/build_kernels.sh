#!/usr/bin/env bash
# The main job: build the compiler and the runtime, compile every kernel of
# kernels/ to PTX and cubin, and assemble the bundle that a GPU machine loads:
#   bundle/sparse_mla/            the Python package
#   bundle/sparse_mla/kernels/    <kernel>.ptx, .cubin, .json (manifest)
#   bundle/sparse_mla/lib/        libsparse_mla_runtime.so
#   bundle/src/                   the runtime sources, to rebuild it there
# Where a GPU is present, the GPU tests then run against the bundle.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bundle=${BUNDLE_DIR:-$root/bundle}
mlir_dir=${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}
export PATH=$PATH:/usr/local/cuda/bin

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$mlir_dir" -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
cmake --build "$build" --target sparse-mla-opt sparse_mla_runtime

rm -rf "$bundle"
mkdir -p "$bundle/sparse_mla/kernels" "$bundle/sparse_mla/lib" "$bundle/src"
cp -r "$root/python/sparse_mla/." "$bundle/sparse_mla/"
cp "$build/lib/libsparse_mla_runtime.so" "$bundle/sparse_mla/lib/"
cp -r "$root/lib/Runtime" "$bundle/src/"
mkdir -p "$bundle/src/include/sparse-mla" && cp -r "$root/include/sparse-mla/Runtime" "$bundle/src/include/sparse-mla/"
# One PTX/cubin/manifest per kernel file; the backward holds one kernel per
# variant of its shape parameters (tile-specialize).
for k in "$root"/kernels/*.mlir; do
  name=$(basename "$k" .mlir)
  "$build/bin/sparse-mla-opt" "$k" --sparse-mla-to-ptx="output=$bundle/sparse_mla/kernels/$name" -o /dev/null
  python3 - "$bundle/sparse_mla/kernels/$name.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k in m["kernels"]:
    regs = k.get("registers", "?")
    print(f"  {k['name']}: {k['threads']} threads, {k['shared_bytes']} B shared, "
          f"{regs} registers, {k.get('spill_stores', '?')} B spilled")
PY
done
# Kernels that only the GPU tests use.
mkdir -p "$bundle/test_kernels"
python3 "$root/test/gpu/gen_gemm_probes.py" "$build/gemm_probes.mlir"
"$build/bin/sparse-mla-opt" "$build/gemm_probes.mlir" \
  --sparse-mla-to-ptx="output=$bundle/test_kernels/gemm_probes" -o /dev/null
echo "kernels and runtime in $bundle/sparse_mla (PTX, cubin when ptxas is present, manifests)"

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU found: running the GPU tests"
  PYTHONPATH="$bundle" python3 -m pytest -q "$root/test/python"
else
  echo "no GPU here: to run the kernels, carry bundle/ to a GPU machine and run tools/gpu_run.sh"
fi
