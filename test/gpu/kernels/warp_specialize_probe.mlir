// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %s --sparse-mla-to-ptx="output=%t/probe" -o /dev/null
// RUN: FileCheck %s < %t/probe.ptx
// GPU probe of warp specialization (test/python/test_gpu_warp_specialize.py):
// warpgroup 0, with 40 registers, gathers 64-row blocks of `src` (rows
// picked by `idx`, -1: a zero row) into a ring of two stages and has each
// block's copies arrive on the stage's `full` mbarrier; warpgroup 1, with
// 232, waits for the block, reads it, frees the stage on `empty` and writes
// the rows to `out` as f32. The two meet only through the mbarriers and a
// barrier of the consumer's own. The PTX keeps both budgets (ptxas drops
// setmaxnreg from kernels without a register count at entry, nvvm.minctasm).
// CHECK: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.mbarrier.arrive.noinc.shared::cta.b64
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: setmaxnreg.dec.sync.aligned.u32 232;
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: bar.sync 2, 128;
// CHECK: mbarrier.arrive.shared::cta.b64
tile.kernel @warp_specialize_probe(%src: memref<?x64xbf16>, %idx: memref<?xi32>,
                                   %out: memref<?x64xf32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %none = arith.constant -1 : i32
  %one = arith.constant 1 : i32
  %ring = tile.alloc : !tile.smem<2x64x64xbf16>
  %full = tile.alloc : !tile.smem<1x2xi64>
  %empty = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %full, %c128 : !tile.smem<1x2xi64>
  tile.mbarrier_init %empty, %c128 : !tile.smem<1x2xi64>
  %blocks = arith.ceildivui %n, %c64 : index
  tile.warp_specialize registers([40, 232]) {
    scf.for %b = %c0 to %blocks step %c1 {
      %stage = arith.remui %b, %c2 : index
      %round = arith.divui %b, %c2 : index
      %round_i32 = arith.index_cast %round : index to i32
      %parity = arith.andi %round_i32, %one : i32
      // The stage is free once the consumer is done with its last block
      // (parity of the phase before: at once in the first round).
      %freed = arith.xori %parity, %one : i32
      tile.mbarrier_wait %empty[%stage], %freed : !tile.smem<1x2xi64>
      %r0 = arith.muli %b, %c64 : index
      %rows = tile.load %idx[%r0] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
      %buf = tile.slice %ring[%stage, %c0, %c0] : !tile.smem<2x64x64xbf16> to !tile.smem<64x64xbf16>
      %copied = tile.gather_rows %src[%rows, %c0] into %buf {per_warpgroup}
          : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
      tile.mbarrier_arrive %full[%stage] {after_copies} : !tile.smem<1x2xi64>
    }
  }, {
    scf.for %b = %c0 to %blocks step %c1 {
      %stage = arith.remui %b, %c2 : index
      %round = arith.divui %b, %c2 : index
      %round_i32 = arith.index_cast %round : index to i32
      %parity = arith.andi %round_i32, %one : i32
      tile.mbarrier_wait %full[%stage], %parity : !tile.smem<1x2xi64>
      %buf = tile.slice %ring[%stage, %c0, %c0] : !tile.smem<2x64x64xbf16> to !tile.smem<64x64xbf16>
      %v = tile.read %buf : !tile.smem<64x64xbf16> -> !tile.reg<64x64xbf16>
      tile.barrier warpgroups([1])
      tile.mbarrier_arrive %empty[%stage] : !tile.smem<1x2xi64>
      %f = tile.map %v : !tile.reg<64x64xbf16> -> !tile.reg<64x64xf32> {
      ^bb0(%x: bf16):
        %y = arith.extf %x : bf16 to f32
        tile.yield %y : f32
      }
      %r0 = arith.muli %b, %c64 : index
      tile.store %f, %out[%r0, %c0] bounds [%n, %c64] : !tile.reg<64x64xf32>, memref<?x64xf32>
    }
  }
}
