// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %kernels/../tools/specialize_bwd.py %kernels/sparse_mla_bwd.mlir %t 32,512,64 > /dev/null
// RUN: sparse-mla-opt %t/sparse_mla_bwd_h32_d512_t64.mlir --sparse-mla-to-ptx="output=%t/bwd" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/bwd.ptx
// RUN: FileCheck %s --check-prefix=NOV2 < %t/bwd.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/bwd.json
// RUN: sparse-mla-opt %kernels/sparse_mla_bwd.mlir --sparse-mla-to-ptx -o /dev/null
// The main backward (32 heads per CTA) reaches PTX with the gather on
// cp.async, the GEMMs on wgmma, the dKV scatter on 16-byte vector reductions, and
// ptxas assembles it without spills; the 64-head kernel file itself lowers.
// PTX: .entry sparse_mla_bwd_h32_d512_t64
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: red.relaxed.gpu.global.add.v4.f32
// PTX-DAG: ex2.approx.ftz.f32
// NOV2-NOT: red.relaxed.gpu.global.add.v2.f32
// JSON: "name": "sparse_mla_bwd_h32_d512_t64"
// JSON: "spill_stores": 0
// JSON: "threads": 256
