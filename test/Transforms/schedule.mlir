// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule))' | FileCheck %s --check-prefix=ASIS
// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{registers=232,248 partition-rows=0,128}))' | FileCheck %s --check-prefix=SET
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{registers=240}))' 2>&1 | FileCheck %s --check-prefix=BUDGETS
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{registers=240,264}))' 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{partition-rows=0,64,128}))' 2>&1 | FileCheck %s --check-prefix=SHARES
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{partition-rows=64,128}))' 2>&1 | FileCheck %s --check-prefix=SHARE
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-schedule{partition-cols=0,64}))' 2>&1 | FileCheck %s --check-prefix=NOCOLS
// A kernel's schedule knobs, as written and as options set them: the
// budgets of its warp_specialize and the shares of a GEMM that partitions
// share. An option must find its knob, and a value the op does not take
// is the op verifier's error.

// ASIS:  tile.warp_specialize registers([240, 240])
// ASIS:  tile.partition_rows = array<i64: 0, 64>

// SET:   tile.warp_specialize registers([232, 248])
// SET:   tile.partition_rows = array<i64: 0, 128>

// BUDGETS: error: 'tile.warp_specialize' op has 2 partitions; tile-schedule's registers gives 1 budgets
// BUDGET:  error: 'tile.warp_specialize' op
// BUDGET-SAME: 264
// SHARES:  error: 'tile.gemm' op is shared by 2 partitions; tile-schedule's partition-rows gives 3 shares
// SHARE:   error: 'tile.gemm' op 'tile.partition_rows' gives the first row of each of the 2 partitions: 0, then increasing
// NOCOLS:  error: tile-schedule: partition-cols is given, but the kernel has no tile.gemm with tile.partition_cols

!buf = !tile.smem<64x192xbf16>
!chan = !tile.channel<!buf>
!acc = !tile.reg<192x192xf32>
tile.kernel @knobs(%kv: memref<?x?xbf16>, %keys: memref<?xi32>, %n: index,
                   %out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant -1 : i32
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %rows = tile.load %keys[%c0] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
    %in = tile.put_enter %ch {tile.partition = 0} : !chan
    %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
    tile.put_exit %ch after %t {tile.partition = 0} : !chan
    %k = tile.get_enter %ch : !chan
    %init = tile.splat %zero : !acc
    // K^T K: partition 0 holds rows [0, 64), partition 1 the others.
    %x = tile.gemm %k, %k, %init {transpose_a, tile.partition_rows = array<i64: 0, 64>}
        : !buf, !buf, !acc
    tile.get_exit %ch : !chan
    tile.store %x, %out[%c0, %c0] : !acc, memref<?x?xf32>
  }
}
