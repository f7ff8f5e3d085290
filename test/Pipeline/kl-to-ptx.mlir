// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_kl.mlir --sparse-mla-to-ptx="output=%t/kl" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/kl.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/kl.json
// The KL target's pass: per variant, K gathered a block ahead, S^T on wgmma,
// each slot's sum over the warpgroup's heads by shuffles within the quads
// (lanes 1 and 2), the two warpgroups' sums added in shared memory, and
// plain stores: no atomic or reduction to global memory. No spills.
// PTX-LABEL: .entry sparse_mla_kl_d512_dqk576_hp32_hw16
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: st.global.b32
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// PTX-LABEL: .entry sparse_mla_kl_d512_dqk576_hp64_hw32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-NOT: red.relaxed.gpu.global
// PTX-NOT: atom.global
// JSON:      "name": "sparse_mla_kl_d512_dqk576_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_kl_d512_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_kl_d512_dqk576_hp64_hw32",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_kl_d512_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
