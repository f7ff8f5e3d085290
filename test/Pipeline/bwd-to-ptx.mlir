// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_bwd.mlir --sparse-mla-to-ptx="output=%t/bwd" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/bwd.ptx
// RUN: FileCheck %s --check-prefix=NOV2 < %t/bwd.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/bwd.json
// The main backward file becomes one kernel per variant (tile-specialize).
// Each reaches PTX with the gather on cp.async in two stages where shared
// memory holds them (32 columns per CTA), the GEMMs on wgmma, the dKV
// scatter on 16-byte vector reductions straight from the GEMM's registers
// into the interleaved workspace (no lane exchange, so no butterfly
// shuffle; no TMA staging, which would take the second stage), S^T and
// dP^T as two asynchronous groups (P from the first while the second runs), the
// columns' lse2 and Delta read back from shared tables in the loop, and
// ptxas assembles it without spills; the manifest carries each variant's
// shape parameters.
// PTX-LABEL: .entry sparse_mla_bwd_d512_dqk576_hp32_hw16
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: ld.shared.v2.b32
// PTX-DAG: red.relaxed.gpu.global.add.v4.f32
// PTX-LABEL: .entry sparse_mla_bwd_d512_dqk512_hp32_hw16
// PTX-LABEL: .entry sparse_mla_bwd_d512_dqk576_hp64_hw32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// PTX-NOT: shfl.sync.bfly.b32
// PTX: red.relaxed.gpu.global.add.v4.f32
// PTX-NOT: shfl.sync.bfly.b32
// PTX-LABEL: .entry sparse_mla_bwd_d512_dqk512_hp64_hw32
// NOV2-NOT: red.relaxed.gpu.global.add.v2.f32
// NOV2-NOT: shfl.sync.bfly
// NOV2-NOT: cp.reduce.async.bulk
// JSON:      "name": "sparse_mla_bwd_d512_dqk576_hp32_hw16",
// JSON-NEXT: "params": {
// JSON-NEXT:   "d": 512,
// JSON-NEXT:   "dqk": 576,
// JSON-NEXT:   "hp": 32,
// JSON-NEXT:   "hw": 16
// JSON:      "shared_bytes": 227328,
// JSON:      "spill_stores": 0,
// JSON-NEXT: "stack_bytes": 0,
// JSON-NEXT: "threads": 256
// JSON:      "name": "sparse_mla_bwd_d512_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_dqk576_hp64_hw32",
// JSON:      "shared_bytes": 231424,
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
