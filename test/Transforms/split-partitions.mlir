// RUN: sparse-mla-opt %s -split-input-file --pass-pipeline='builtin.module(tile.kernel(tile-split-partitions))' -verify-diagnostics | FileCheck %s
// One body for both warpgroups becomes a region each. Tagged ops, and what
// uses their results, go to their partition; loop results go where the
// values yielded for them are; the loop, the key map, the skip vote and the
// channel's get run in both; what a partition does not use is erased.

// CHECK-LABEL: tile.kernel @one_loop
// CHECK:       tile.warp_specialize registers([240, 240]) {
// Partition 0: the put, its GEMM, its accumulator and the block count.
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (!tile.reg<64x64xf32>, i32)
// CHECK:           tile.load %{{.*}}[%{{.*}}]
// CHECK:           tile.any
// CHECK:           scf.if %{{.*}} -> (!tile.reg<64x64xf32>, i32)
// CHECK:             tile.put_enter
// CHECK:             tile.gather_rows
// CHECK:             tile.put_exit
// CHECK:             %[[K0:.*]] = tile.get_enter
// CHECK:             tile.gemm %[[K0]], %[[K0]], %{{.*}} {transpose_b}
// CHECK-NOT:         tile.gemm
// CHECK:             tile.get_exit
// CHECK:             arith.addi
// CHECK:           } else {
// CHECK:         tile.store %{{.*}}, %{{.*}}[%c0, %c0]
// CHECK-NOT:     tile.store
// CHECK-NOT:     tile.partition
// Partition 1: the get and its GEMM, without the put or the count.
// CHECK:       }, {
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (!tile.reg<64x64xf32>) {
// CHECK:           tile.load %{{.*}}[%{{.*}}]
// CHECK-NOT:       tile.put_enter
// CHECK:           scf.if %{{.*}} -> (!tile.reg<64x64xf32>)
// CHECK-NEXT:        %[[K1:.*]] = tile.get_enter
// CHECK-NEXT:        tile.gemm %[[K1]], %[[K1]], %{{.*}} :
// CHECK-NEXT:        tile.get_exit
// CHECK-NEXT:        scf.yield
// CHECK:         tile.store %{{.*}}, %{{.*}}[%c64, %c0]
// CHECK-NOT:     arith.addi
!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
!acc = !tile.reg<64x64xf32>
tile.kernel @one_loop(%kv: memref<?x?xbf16>, %keys: memref<?xi32>, %n: index,
                      %out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %zero_i32 = arith.constant 0 : i32
  %one_i32 = arith.constant 1 : i32
  %none = arith.constant -1 : i32
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %acc0, %acc1, %blocks = scf.for %j = %c0 to %n step %c64
        iter_args(%a0 = %init, %a1 = %init, %done = %zero_i32) -> (!acc, !acc, i32) {
      %rows = tile.load %keys[%j] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
      %ok = tile.map %rows : !tile.reg<64xi32> -> !tile.reg<64xi1> {
      ^bb0(%r: i32):
        %b = arith.cmpi sge, %r, %zero_i32 : i32
        tile.yield %b : i1
      }
      %live = tile.any %ok : !tile.reg<64xi1>
      %n0, %n1, %d = scf.if %live -> (!acc, !acc, i32) {
        %in = tile.put_enter %ch {tile.partition = 0} : !chan
        %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
            : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
        tile.put_exit %ch after %t {tile.partition = 0} : !chan
        %k = tile.get_enter %ch : !chan
        %x0 = tile.gemm %k, %k, %a0 {transpose_b, tile.partition = 0} : !buf, !buf, !acc
        %x1 = tile.gemm %k, %k, %a1 {tile.partition = 1} : !buf, !buf, !acc
        tile.get_exit %ch : !chan
        %more = arith.addi %done, %one_i32 {tile.partition = 0} : i32
        scf.yield %x0, %x1, %more : !acc, !acc, i32
      } else {
        scf.yield %a0, %a1, %done : !acc, !acc, i32
      }
      scf.yield %n0, %n1, %d : !acc, !acc, i32
    }
    tile.store %acc0, %out[%c0, %c0] : !acc, memref<?x?xf32>
    tile.store %acc1, %out[%c64, %c0] : !acc, memref<?x?xf32>
  }
}

// -----

// A branch on a value of partition 1 runs in partition 1 only, and so do
// the untagged ops inside it.
// CHECK-LABEL: tile.kernel @branch_of_one
// CHECK:       tile.warp_specialize
// CHECK-NOT:     tile.any
// CHECK-NOT:     tile.store
// CHECK:       }, {
// CHECK:         %[[ANY:.*]] = tile.any
// CHECK:         scf.if %[[ANY]] {
// CHECK:           tile.store
tile.kernel @branch_of_one(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  tile.warp_specialize registers([240, 240]) {
    %flags = tile.splat %true : !tile.reg<64xi1>
    %any = tile.any %flags {tile.partition = 1} : !tile.reg<64xi1>
    scf.if %any {
      %z = tile.splat %zero : !tile.reg<64x64xf32>
      tile.store %z, %out[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>
    }
  }
}

// -----

tile.kernel @two_partitions_meet(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tile.warp_specialize registers([240, 240]) {
    %a = tile.splat %zero {tile.partition = 0} : !tile.reg<64x64xf32>
    %b = tile.splat %zero {tile.partition = 1} : !tile.reg<64x64xf32>
    // expected-error @+1 {{runs in no partition: it takes values of different partitions, or of another than its 'tile.partition' (partitions hand data over through a tile.channel)}}
    %c = tile.map %a, %b : !tile.reg<64x64xf32>, !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      tile.yield %s : f32
    }
    tile.store %c, %out[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>
  }
}

// -----

tile.kernel @tag_against_operand(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tile.warp_specialize registers([240, 240]) {
    %a = tile.splat %zero {tile.partition = 0} : !tile.reg<64x64xf32>
    // expected-error @+1 {{runs in no partition}}
    tile.store %a, %out[%c0, %c0] {tile.partition = 1} : !tile.reg<64x64xf32>, memref<?x?xf32>
  }
}

// -----

tile.kernel @yield_of_two(%out: memref<?x?xf32>, %c: i1) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{yields values of different partitions as result #0}}
    %r = scf.if %c -> (!tile.reg<64x64xf32>) {
      %a = tile.splat %zero {tile.partition = 0} : !tile.reg<64x64xf32>
      scf.yield %a : !tile.reg<64x64xf32>
    } else {
      %b = tile.splat %zero {tile.partition = 1} : !tile.reg<64x64xf32>
      scf.yield %b : !tile.reg<64x64xf32>
    }
  }
}

// -----

// The channel rules hold once the body is split: an untagged put runs in
// both partitions, and a channel has one producer.
!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
tile.kernel @untagged_put() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{puts into a channel that partition #0 puts into: a channel has one producer}}
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}

// -----

// A GEMM whose rows the partitions share: each computes its rows of the
// result from its slice of A (columns, transposed), on an accumulator of
// that many rows, and stores them from its first row's column on.
// CHECK-LABEL: tile.kernel @shared_rows
// CHECK:       tile.warp_specialize
// CHECK:         %[[I0:.*]] = tile.splat %{{.*}} : !tile.reg<128x32xf32>
// CHECK:         scf.for {{.*}} iter_args(%[[A0:.*]] = %[[I0]]) -> (!tile.reg<128x32xf32>)
// CHECK:           %[[S0:.*]] = tile.slice %{{.*}}[%c0{{.*}}, %c0{{.*}}] : !tile.smem<64x192xbf16> to !tile.smem<64x128xbf16>
// CHECK:           tile.gemm %[[S0]], %{{.*}}, %[[A0]] {transpose_a} : !tile.smem<64x128xbf16>, !tile.smem<64x32xbf16>, !tile.reg<128x32xf32>
// CHECK:         tile.map {{.*}} : !tile.reg<128x32xf32> -> !tile.reg<128x32xbf16>
// CHECK:         tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {transpose} : !tile.reg<128x32xbf16>
// CHECK:       }, {
// CHECK:         tile.splat %{{.*}} : !tile.reg<64x32xf32>
// CHECK:         %[[S1:.*]] = tile.slice %{{.*}}[%c0{{.*}}, %c128{{.*}}] : !tile.smem<64x192xbf16> to !tile.smem<64x64xbf16>
// CHECK:         tile.gemm %[[S1]], {{.*}} : !tile.smem<64x64xbf16>, !tile.smem<64x32xbf16>, !tile.reg<64x32xf32>
// CHECK:         tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %c128{{.*}}] {transpose} : !tile.reg<64x32xbf16>
!k = !tile.smem<64x192xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<192x32xf32>
tile.kernel @shared_rows(%n: index, %dq: memref<?x?xbf16>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  %rows = tile.iota along 0 : !tile.reg<32xi32>
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %dq_t = scf.for %j = %c0 to %n step %c1 iter_args(%a = %init) -> (!acc) {
      %next = tile.gemm %k, %ds, %a {transpose_a, tile.partition_rows = array<i64: 0, 128>}
          : !k, !ds, !acc
      scf.yield %next : !acc
    }
    %out = tile.map %dq_t : !acc -> !tile.reg<192x32xbf16> {
    ^bb0(%x: f32):
      %r = arith.truncf %x : f32 to bf16
      tile.yield %r : bf16
    }
    tile.store_rows %out, %dq[%rows, %c0] {transpose}
        : !tile.reg<192x32xbf16>, memref<?x?xbf16>, !tile.reg<32xi32>
  }
}

// -----

// A per-column factor broadcast along the shared rows (the forward's
// online-softmax rescale of O^T) carries each partition's share: its
// broadcast narrows with the accumulator.
// CHECK-LABEL: tile.kernel @broadcast_rows
// CHECK:         %[[F0:.*]] = tile.broadcast %{{.*}} along 0 : !tile.reg<32xf32> -> !tile.reg<128x32xf32>
// CHECK:         tile.map %{{.*}}, %[[F0]] : !tile.reg<128x32xf32>, !tile.reg<128x32xf32> -> !tile.reg<128x32xf32>
// CHECK:       }, {
// CHECK:         %[[F1:.*]] = tile.broadcast %{{.*}} along 0 : !tile.reg<32xf32> -> !tile.reg<64x32xf32>
// CHECK:         tile.map %{{.*}}, %[[F1]] : !tile.reg<64x32xf32>, !tile.reg<64x32xf32> -> !tile.reg<64x32xf32>
!k = !tile.smem<64x192xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<192x32xf32>
tile.kernel @broadcast_rows(%n: index, %f: memref<?xf32>, %dq: memref<?x?xbf16>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  %rows = tile.iota along 0 : !tile.reg<32xi32>
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %dq_t = scf.for %j = %c0 to %n step %c1 iter_args(%a = %init) -> (!acc) {
      %fv = tile.load %f[%c0] : memref<?xf32> -> !tile.reg<32xf32>
      %fb = tile.broadcast %fv along 0 : !tile.reg<32xf32> -> !acc
      %scaled = tile.map %a, %fb : !acc, !acc -> !acc {
      ^bb0(%x: f32, %y: f32):
        %r = arith.mulf %x, %y : f32
        tile.yield %r : f32
      }
      %next = tile.gemm %k, %ds, %scaled {transpose_a, tile.partition_rows = array<i64: 0, 128>}
          : !k, !ds, !acc
      scf.yield %next : !acc
    }
    %out = tile.map %dq_t : !acc -> !tile.reg<192x32xbf16> {
    ^bb0(%x: f32):
      %r = arith.truncf %x : f32 to bf16
      tile.yield %r : bf16
    }
    tile.store_rows %out, %dq[%rows, %c0] {transpose}
        : !tile.reg<192x32xbf16>, memref<?x?xbf16>, !tile.reg<32xi32>
  }
}

// -----

// A broadcast along the columns gives every row its own value: it does not
// narrow with a share of the rows.
!k = !tile.smem<64x128xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<128x32xf32>
tile.kernel @broadcast_across_shared_rows(%f: memref<?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %fv = tile.load %f[%c0] : memref<?xf32> -> !tile.reg<128xf32>
    // expected-error @+1 {{computes rows that a tile.gemm shares between partitions; only splats, broadcasts along rows, maps, loops and branches may carry them}}
    %init = tile.broadcast %fv along 1 : !tile.reg<128xf32> -> !acc
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 64>}
        : !k, !ds, !acc
  }
}

// -----

// A GEMM whose columns the partitions share: each computes its columns of
// the result from its slice of B, and scatters them from its first column
// on (a constant, so that tile-split-d sees one column).
// CHECK-LABEL: tile.kernel @shared_cols
// CHECK:       tile.warp_specialize
// CHECK:         %[[B0:.*]] = tile.slice %{{.*}}[%c0{{.*}}, %c0{{.*}}] : !tile.smem<32x192xbf16> to !tile.smem<32x128xbf16>
// CHECK:         %[[R0:.*]] = tile.gemm %{{.*}}, %[[B0]], %{{.*}} : !tile.smem<64x32xbf16>, !tile.smem<32x128xbf16>, !tile.reg<64x128xf32>
// CHECK:         tile.scatter_add_rows %[[R0]], %{{.*}}[%{{.*}}, %c0{{.*}}] : !tile.reg<64x128xf32>
// CHECK:       }, {
// CHECK:         %[[B1:.*]] = tile.slice %{{.*}}[%c0{{.*}}, %c128{{.*}}] : !tile.smem<32x192xbf16> to !tile.smem<32x64xbf16>
// CHECK:         %[[R1:.*]] = tile.gemm %{{.*}}, %[[B1]], %{{.*}} : !tile.smem<64x32xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x64xf32>
// CHECK:         tile.scatter_add_rows %[[R1]], %{{.*}}[%{{.*}}, %c128{{.*}}] : !tile.reg<64x64xf32>
tile.kernel @shared_cols(%dkv: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %ds = tile.alloc : !tile.smem<64x32xbf16>
  %q = tile.alloc : !tile.smem<32x192xbf16>
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !tile.reg<64x192xf32>
    %r = tile.gemm %ds, %q, %init {tile.partition_cols = array<i64: 0, 128>}
        : !tile.smem<64x32xbf16>, !tile.smem<32x192xbf16>, !tile.reg<64x192xf32>
    tile.scatter_add_rows %r, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  }
}

// -----

!k = !tile.smem<64x192xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<192x32xf32>
tile.kernel @share_not_whole_blocks() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    // expected-error @+1 {{gives partition #0 rows [0, 96) of 192: each share is a multiple of 64 rows within them}}
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 96>}
        : !k, !ds, !acc
  }
}

// -----

!k = !tile.smem<64x192xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<192x32xf32>
tile.kernel @rows_to_an_unknown_user(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 128>}
        : !k, !ds, !acc
    // expected-error @+1 {{uses rows that a tile.gemm shares between partitions; only maps, loops, branches and transposed row stores may}}
    tile.store %r, %out[%c0, %c0] : !acc, memref<?x?xf32>
  }
}

// -----

!k = !tile.smem<64x{m}xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<{m}x32xf32>
tile.kernel @rows_not_known() warpgroups(2) variants([{m = 128}]) {
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    // expected-error @+1 {{shares its rows between partitions: its shape must be known (run tile-split-partitions after tile-specialize)}}
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 64>}
        : !k, !ds, !acc
  }
}

// -----

// Buffers handed over by data: K, gathered by partition 0 and read by both,
// gets a channel of its own; P and dS, written by partition 0 before either
// is read, share one. Partition 0 gets its own channels as it puts them;
// a read by an asynchronous GEMM lasts until its wait.
// CHECK-LABEL: tile.kernel @handover
// CHECK:       %[[K:.*]] = tile.channel : !tile.channel<!tile.smem<64x64xbf16>>
// CHECK:       %[[PDS:.*]] = tile.channel : !tile.channel<!tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>>
// CHECK-NOT:   tile.alloc
// CHECK:       tile.warp_specialize
// CHECK:         %[[KP:.*]] = tile.put_enter %[[K]]
// CHECK:         %[[T:.*]] = tile.gather_rows %{{.*}} into %[[KP]]
// CHECK:         tile.put_exit %[[K]] after %[[T]]
// CHECK:         %[[KG:.*]] = tile.get_enter %[[K]]
// CHECK-NEXT:    tile.gemm %[[KG]], %[[KG]], %{{.*}} :
// CHECK-NEXT:    %[[S:.*]] = tile.gemm %[[KG]], %[[KG]], %{{.*}} {async, transpose_b}
// CHECK:         %[[SW:.*]] = tile.gemm_wait %[[S]]
// CHECK-NEXT:    tile.get_exit %[[K]]
// CHECK:         %[[P:.*]]:2 = tile.put_enter %[[PDS]]
// CHECK-NEXT:    tile.write %[[SW]], %[[P]]#0
// CHECK-NEXT:    tile.write %[[SW]], %[[P]]#1
// CHECK-NEXT:    tile.put_exit %[[PDS]] :
// CHECK-NEXT:    %[[G:.*]]:2 = tile.get_enter %[[PDS]]
// CHECK-NEXT:    tile.gemm %[[G]]#0, %[[G]]#1
// CHECK-NEXT:    tile.get_exit %[[PDS]]
// CHECK:       }, {
// CHECK-NOT:     tile.put_enter
// CHECK:         tile.get_enter %[[K]]
// CHECK:         tile.get_exit %[[K]]
// CHECK:         tile.get_enter %[[PDS]]
// CHECK-NEXT:    tile.gemm
// CHECK-NEXT:    tile.get_exit %[[PDS]]
!buf = !tile.smem<64x64xbf16>
!acc = !tile.reg<64x64xf32>
tile.kernel @handover(%kv: memref<?x?xbf16>, %keys: memref<?xi32>, %n: index,
                      %out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant -1 : i32
  %k = tile.alloc : !buf
  %p = tile.alloc : !buf
  %ds = tile.alloc : !buf
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %acc = scf.for %j = %c0 to %n step %c64 iter_args(%a = %init) -> (!acc) {
      %rows = tile.load %keys[%j] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
      %t = tile.gather_rows %kv[%rows, %c0] into %k {per_warpgroup, tile.partition = 0}
          : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
      %x = tile.gemm %k, %k, %a : !buf, !buf, !acc
      %s_run = tile.gemm %k, %k, %init {transpose_b, async, tile.partition = 0} : !buf, !buf, !acc
      %s = tile.gemm_wait %s_run {pending = 0} : !acc
      tile.write %s, %p : !acc, !buf
      tile.write %s, %ds : !acc, !buf
      %y = tile.gemm %p, %ds, %x : !buf, !buf, !acc
      scf.yield %y : !acc
    }
    tile.store %acc, %out[%c0, %c0] : !acc, memref<?x?xf32>
  }
}

// -----

!buf = !tile.smem<64x64xbf16>
tile.kernel @two_writers(%kv: memref<?x?xbf16>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  // expected-error @+1 {{is written inside tile.warp_specialize by more than one partition: one partition puts what the others get}}
  %k = tile.alloc : !buf
  tile.warp_specialize registers([240, 240]) {
    %t = tile.gather_rows %kv[%rows, %c0] into %k {per_warpgroup, tile.partition = 0}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
    %u = tile.gather_rows %kv[%rows, %c0] into %k {per_warpgroup, tile.partition = 1}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
  }
}

// -----

!buf = !tile.smem<64x64xbf16>
!acc = !tile.reg<64x64xf32>
tile.kernel @read_before_write(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{is read inside tile.warp_specialize before its last write: partitions hand over a buffer once it is written}}
  %p = tile.alloc : !buf
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %x = tile.gemm %p, %p, %init : !buf, !buf, !acc
    %s = tile.splat %zero {tile.partition = 0} : !acc
    tile.write %s, %p : !acc, !buf
    tile.store %x, %out[%c0, %c0] : !acc, memref<?x?xf32>
  }
}

// -----

!buf = !tile.smem<64x64xbf16>
!acc = !tile.reg<64x64xf32>
tile.kernel @read_in_another_block(%n: index, %out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %p = tile.alloc : !buf
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    scf.for %j = %c0 to %n step %c1 {
      %s = tile.splat %zero {tile.partition = 0} : !acc
      tile.write %s, %p : !acc, !buf
    }
    // expected-error @+1 {{uses a buffer that partitions hand over outside the block that writes it: its accesses must share one block}}
    %x = tile.gemm %p, %p, %init : !buf, !buf, !acc
    tile.store %x, %out[%c0, %c0] : !acc, memref<?x?xf32>
  }
}

// -----

// An empty body: each partition runs nothing.
// CHECK-LABEL: tile.kernel @nothing
// CHECK:       tile.warp_specialize registers([240, 240]) {
// CHECK-NEXT:  }, {
// CHECK-NEXT:  }
tile.kernel @nothing() warpgroups(2) {
  tile.warp_specialize registers([240, 240]) {
  }
}

// -----

!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<128x32xf32>
tile.kernel @rows_from_registers(%a: memref<?x?xbf16>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %q = tile.load %a[%c0, %c0] : memref<?x?xbf16> -> !tile.reg<128x64xbf16>
    %init = tile.splat %zero : !acc
    // expected-error @+1 {{shares its rows between partitions: the operand that computes them must be a shared tile}}
    %r = tile.gemm %q, %ds, %init {tile.partition_rows = array<i64: 0, 64>}
        : !tile.reg<128x64xbf16>, !ds, !acc
  }
}

// -----

!k = !tile.smem<64x128xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<128x32xf32>
tile.kernel @acc_from_outside() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  %init = tile.splat %zero : !acc
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{shares its rows, but a value that carries them is defined outside tile.warp_specialize}}
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 64>}
        : !k, !ds, !acc
  }
}

// -----

!k = !tile.smem<64x128xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<128x32xf32>
tile.kernel @acc_through_while(%go: i1) warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    %out = scf.while (%a = %init) : (!acc) -> !acc {
      scf.condition(%go) %a : !acc
    } do {
    ^bb0(%b: !acc):
      // expected-error @+1 {{shares its rows between partitions, but they flow into a block argument it cannot narrow}}
      %next = tile.gemm %k, %ds, %b {transpose_a, tile.partition_rows = array<i64: 0, 64>}
          : !k, !ds, !acc
      scf.yield %next : !acc
    }
  }
}

// -----

!k = !tile.smem<64x128xbf16>
!ds = !tile.smem<64x32xbf16>
!acc = !tile.reg<128x32xf32>
tile.kernel @acc_loaded(%m: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %k = tile.alloc : !k
  %ds = tile.alloc : !ds
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{computes rows that a tile.gemm shares between partitions; only splats, broadcasts along rows, maps, loops and branches may carry them}}
    %init = tile.load %m[%c0, %c0] : memref<?x?xf32> -> !acc
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 0, 64>}
        : !k, !ds, !acc
  }
}

// -----

!buf = !tile.smem<64x64xbf16>
!acc = !tile.reg<64x64xf32>
tile.kernel @view_both_sides(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %p = tile.alloc : !buf
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !acc
    // expected-error @+1 {{is a view that partitions both write and read: take one view for each side}}
    %v = tile.slice %p[%c0, %c0] : !buf to !buf
    %s = tile.splat %zero {tile.partition = 0} : !acc
    tile.write %s, %v : !acc, !buf
    %x = tile.gemm %v, %v, %init {tile.partition = 1} : !buf, !buf, !acc
    tile.store %x, %out[%c0, %c0] {tile.partition = 1} : !acc, memref<?x?xf32>
  }
}
