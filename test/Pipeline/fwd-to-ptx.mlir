// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_fwd.mlir --sparse-mla-to-ptx="output=%t/fwd" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fwd.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/fwd.json
// The forward becomes one kernel per variant. Each gathers K with cp.async
// a block ahead (two stages), computes S^T on wgmma with n = the
// warpgroup's columns and its half of O^T += V^T P^T with n = the CTA's
// columns (P^T and the factors of both warpgroups' columns handed over in
// shared memory), takes each column's maximum across the
// warpgroup's four warps (shuffles over lanes 4, 8, 16, then the warps'
// partials through scratch between named barriers), and writes o and lse
// with plain stores: no atomic or reduction to global memory, so the same
// bits on every call. ptxas assembles every variant without spills.
// PTX-LABEL: .entry sparse_mla_fwd_d512_dh256_dqk576_hp32_hw16
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX-DAG: bar.sync {{.*}}, 128;
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: lg2.approx.ftz.f32
// PTX-DAG: st.global.b32
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// PTX-LABEL: .entry sparse_mla_fwd_d512_dh256_dqk512_hp32_hw16
// PTX-LABEL: .entry sparse_mla_fwd_d512_dh256_dqk576_hp64_hw32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// PTX-LABEL: .entry sparse_mla_fwd_d512_dh256_dqk512_hp64_hw32
// JSON:      "name": "sparse_mla_fwd_d512_dh256_dqk576_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dh256_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dh256_dqk576_hp64_hw32",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dh256_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
