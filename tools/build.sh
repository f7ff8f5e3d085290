#!/usr/bin/env bash
# Builds the compiler and the runtime, compiles every kernel of kernels/ to
# PTX and cubin, assembles the bundle and packs the wheel:
#   bundle/sparse_mla/            the Python package (importable with PYTHONPATH=bundle)
#   bundle/sparse_mla/kernels/    <kernel>.ptx, .cubin, .json (manifest)
#   bundle/sparse_mla/lib/        libsparse_mla_runtime.so
#   dist/sparse_mla-<version>-py3-none-<platform>.whl
#   dist/test_kernels/            kernels only the GPU tests use (counting/: a
#                                 build whose backward counts its blocks)
# Needs what tools/setup.sh installs; the main job and the tests call it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bundle=${BUNDLE_DIR:-$root/bundle}
dist=${DIST_DIR:-$root/dist}
mlir_dir=${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}
export PATH=$PATH:/usr/local/cuda/bin

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$mlir_dir" -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
cmake --build "$build" --target sparse-mla-opt sparse_mla_runtime

rm -rf "$bundle"
mkdir -p "$bundle/sparse_mla/kernels" "$bundle/sparse_mla/lib"
cp -r "$root/python/sparse_mla/." "$bundle/sparse_mla/"
cp "$build/lib/libsparse_mla_runtime.so" "$bundle/sparse_mla/lib/"
# One PTX/cubin/manifest per kernel file; a generic kernel holds one kernel
# per variant of its shape parameters (tile-specialize).
for k in "$root"/kernels/*.mlir; do
  name=$(basename "$k" .mlir)
  "$build/bin/sparse-mla-opt" "$k" --sparse-mla-to-ptx="output=$bundle/sparse_mla/kernels/$name" -o /dev/null
  python3 - "$bundle/sparse_mla/kernels/$name.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k in m["kernels"]:
    print(f"  {k['name']}: {k['threads']} threads, {k['shared_bytes']} B shared, "
          f"{k.get('registers', '?')} registers, {k.get('spill_stores', '?')} B spilled")
PY
done
rm -rf "$dist/test_kernels" && mkdir -p "$dist/test_kernels/counting"
# The GPU tests' build that counts the blocks each CTA of the backward
# computes (sparse-mla-bench-to-ptx, never shipped), beside the shipped
# kernels it runs with.
cp "$bundle/sparse_mla/kernels/"* "$dist/test_kernels/counting/"
"$build/bin/sparse-mla-opt" "$root/kernels/sparse_mla_bwd.mlir" \
  --sparse-mla-bench-to-ptx="output=$dist/test_kernels/counting/sparse_mla_bwd count-op=tile.gemm" \
  -o /dev/null
python3 "$root/test/gpu/gen_gemm_probes.py" "$build/gemm_probes.mlir"
"$build/bin/sparse-mla-opt" "$build/gemm_probes.mlir" \
  --sparse-mla-to-ptx="output=$dist/test_kernels/gemm_probes" -o /dev/null
for k in "$root"/test/gpu/kernels/*.mlir; do
  "$build/bin/sparse-mla-opt" "$k" \
    --sparse-mla-to-ptx="output=$dist/test_kernels/$(basename "$k" .mlir)" -o /dev/null
done

# The commit the kernels come from (".dirty" with changes not committed).
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  commit=$commit.dirty
fi
python3 "$root/tools/build_wheel.py" "$bundle/sparse_mla" "$dist" "$commit"
