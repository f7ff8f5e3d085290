#!/usr/bin/env bash
# Builds FlashMLA's SM90 sparse prefill as a plain shared library with the C
# entry point of flashmla_sm90.cu (here, with nvcc 13.0; no torch), for
# `python3 -m sparse_mla.bench --pass fwd` (SPARSE_MLA_FLASHMLA_LIB=<lib>).
# FLASHMLA_DIR: deepseek-ai/FlashMLA at 9241ae3e (the last commit of its
# main with the SM90 prefill) with CUTLASS 147f5673 in csrc/cutlass (its
# submodule; include/ and tools/util/include/ suffice). Carry the library to
# the GPU machine; never commit it.
#   bash bench/peers/build_flashmla.sh FLASHMLA_DIR OUT.so
set -euo pipefail
src=${1:?usage: build_flashmla.sh FLASHMLA_DIR OUT.so}
out=${2:?usage: build_flashmla.sh FLASHMLA_DIR OUT.so}
here=$(cd "$(dirname "$0")" && pwd)
export PATH=$PATH:/usr/local/cuda/bin
inst=$src/csrc/sm90/prefill/sparse/instantiations
nvcc -shared -Xcompiler -fPIC -O3 -std=c++20 -DNDEBUG -D_USE_MATH_DEFINES -DFLASH_MLA_DISABLE_FP16 \
  -Wno-deprecated-declarations -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ \
  -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr \
  --expt-extended-lambda --use_fast_math -gencode arch=compute_90a,code=sm_90a \
  --threads "${NVCC_THREADS:-2}" \
  -I"$src/csrc" -I"$src/csrc/kerutils/include" -I"$src/csrc/sm90" \
  -I"$src/csrc/cutlass/include" -I"$src/csrc/cutlass/tools/util/include" \
  "$here/flashmla_sm90.cu" "$inst/phase1_k512.cu" "$inst/phase1_k512_topklen.cu" \
  "$inst/phase1_k576.cu" "$inst/phase1_k576_topklen.cu" \
  -L/usr/local/cuda/lib64/stubs -lcuda -o "$out"
echo "built $out ($(du -h "$out" | cut -f1))"
