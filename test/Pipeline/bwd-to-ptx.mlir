// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_bwd.mlir --sparse-mla-to-ptx="output=%t/bwd" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/bwd.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/bwd.json
// The main backward file becomes one kernel per variant (tile-specialize).
// Each reaches PTX as two warp-specialized roles: warpgroup 0 gathers K on
// cp.async that completes on an mbarrier, runs S^T and dP^T as two
// asynchronous wgmma groups (P from the first while the second runs) and
// hands P^T/dS^T over on mbarriers (the channels of the kernel), then
// scatters dKV columns [0, 128)
// while warpgroup 1 scatters the others; both scatter dKV with 16-byte
// vector reductions into the interleaved workspace, predicated per row,
// after lanes l and l ^ 4 traded halves so that each adds 128-byte runs
// (no TMA staging, which measured 2x slower for that warpgroup). Each
// skips empty blocks with a vote over its own warpgroup (a named barrier),
// and ptxas assembles every variant without spills (each role raises its
// register limit with setmaxnreg); the manifest carries
// each variant's shape parameters. The deterministic variants (det = 1)
// add dKV as 64-bit fixed-point integers instead, and nothing else changes.
// PTX-LABEL: .entry sparse_mla_bwd_d512_det0_dqk576_hp32_hw16
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 256;
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.mbarrier.arrive.noinc.shared::cta.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: bar.red.or.pred p, 1, 128, q;
// PTX-DAG: bar.red.or.pred p, 2, 128, q;
// PTX-NOT: cp.reduce.async.bulk
// PTX-LABEL: .entry sparse_mla_bwd_d512_det0_dqk512_hp32_hw16
// PTX-LABEL: .entry sparse_mla_bwd_d512_det0_dqk576_hp64_hw32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// PTX-DAG: mbarrier.arrive.shared::cta.b64
// PTX: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// PTX: @p red.relaxed.gpu.global.add.v4.f32
// PTX-NOT: cp.reduce.async.bulk
// PTX-LABEL: .entry sparse_mla_bwd_d512_det0_dqk512_hp64_hw32
// PTX-NOT: red.relaxed.gpu.global.add.v2.f32
// PTX-NOT: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX-NOT: cp.reduce.async.bulk
// PTX-NOT: red.relaxed.gpu.global.add.u64
// PTX-NOT: red.relaxed.gpu.global.or.b32
// PTX-LABEL: .entry sparse_mla_bwd_d512_det1_dqk576_hp32_hw16
// PTX-DAG: cvt.rni.s64.f32
// PTX-DAG: @p red.relaxed.gpu.global.add.u64
// PTX-DAG: @p red.relaxed.gpu.global.or.b32
// PTX-NOT: red.relaxed.gpu.global.add.v4.f32
// PTX-LABEL: .entry sparse_mla_bwd_d512_det1_dqk512_hp32_hw16
// PTX-LABEL: .entry sparse_mla_bwd_d512_det1_dqk576_hp64_hw32
// PTX-DAG: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// PTX-DAG: @p red.relaxed.gpu.global.add.u64
// PTX-DAG: @p red.relaxed.gpu.global.or.b32
// PTX-NOT: red.relaxed.gpu.global.add.v4.f32
// PTX-LABEL: .entry sparse_mla_bwd_d512_det1_dqk512_hp64_hw32
// JSON:      "name": "sparse_mla_bwd_d512_det0_dqk576_hp32_hw16",
// JSON-NEXT: "params": {
// JSON-NEXT:   "d": 512,
// JSON-NEXT:   "det": 0,
// JSON-NEXT:   "dqk": 576,
// JSON-NEXT:   "fixed_point_bits": 40,
// JSON-NEXT:   "hp": 32,
// JSON-NEXT:   "hw": 16,
// JSON-NEXT:   "range_window": 1
// JSON:      "spill_stores": 0,
// JSON-NEXT: "stack_bytes": 0,
// JSON-NEXT: "threads": 256
// JSON:      "name": "sparse_mla_bwd_d512_det0_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det0_dqk576_hp64_hw32",
// JSON:      "shared_bytes": 230432,
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det0_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det1_dqk576_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det1_dqk512_hp32_hw16",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det1_dqk576_hp64_hw32",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_bwd_d512_det1_dqk512_hp64_hw32",
// JSON:      "spill_stores": 0,
