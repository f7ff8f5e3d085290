// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_fwd.mlir --sparse-mla-to-ptx="output=%t/fwd" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fwd.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/fwd.json
// The forward becomes one kernel per variant, warp-specialized: each
// warpgroup sets its register budget; warpgroup 0 gathers K with cp.async
// into a channel's ring and computes S^T on wgmma with n = the CTA's
// columns, takes each column's maximum across its four warps (shuffles over
// lanes 4, 8, 16, then the warps' partials through scratch between named
// barriers); both warpgroups wait on the channels' mbarriers for K and
// P^T and add their rows of O^T += V^T P^T (n = the CTA's columns). o and
// lse are written with plain stores: no atomic or reduction to global
// memory, so the same bits on every call. ptxas assembles every variant
// without spills; with D_tail = 64 and 64 columns, K's ring has its two
// stages in the 227 KiB a CTA may use (the scratch of both reductions in
// one region per warpgroup).
// PTX-LABEL: .entry sparse_mla_fwd_d512_dqk576_hp32_hw16
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 256;
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX-DAG: bar.sync {{.*}}, 128;
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: lg2.approx.ftz.f32
// PTX-DAG: st.global.b32
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// PTX-LABEL: .entry sparse_mla_fwd_d512_dqk512_hp32_hw16
// PTX-LABEL: .entry sparse_mla_fwd_d512_dqk576_hp64_hw32
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-NOT: wgmma.mma_async.sync.aligned.m64n32k16
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// PTX-LABEL: .entry sparse_mla_fwd_d512_dqk512_hp64_hw32
// JSON:      "name": "sparse_mla_fwd_d512_dqk576_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dqk576_hp64_hw32",
// JSON:      "shared_bytes": 232272,
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_fwd_d512_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
