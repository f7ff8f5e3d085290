// RUN: sparse-mla-opt %kernels/sparse_mla_bwd.mlir --sparse-mla-bench-to-ptx="registers=256,248 channel-stages=2 idle-gathers" | FileCheck %s
// The schedule and ablation options of sparse-mla-bench-to-ptx reach their passes
// (bench/ablate.py builds with them): warpgroup 1's register budget, a
// second slot where shared memory holds it, K's first (copies fill it; hp =
// 32, D_tail = 64: 152096 + 72 KB + its barriers, and then no room for a
// second P^T/dS^T slot), and the gather idled behind a test of the grid.
// CHECK: name = "sparse_mla_bwd_d512_det0_dqk576_hp32_hw16"
// CHECK-SAME: shared_bytes = 225840
// CHECK: setmaxnreg.dec.sync.aligned.u32 248
// CHECK-SAME: 12345
