// RUN: sparse-mla-opt %s -split-input-file --pass-pipeline='builtin.module(tile.kernel(tile-lower-channels))' -verify-diagnostics | FileCheck %s
// RUN: sparse-mla-opt %S/Inputs/lower-channels-stages.mlir -split-input-file --pass-pipeline='builtin.module(tile.kernel(tile-lower-channels{stages=4}))' -verify-diagnostics | FileCheck %S/Inputs/lower-channels-stages.mlir --check-prefix=STAGES
// A channel becomes its buffers and a 1 x 2S tile of mbarriers, full[s]
// expecting the producer partition's threads and free[s] those of every
// other partition that gets. Each partition counts its rounds of each side
// in an i32 carried by the loops and branches around them; round n is slot
// n % S in phase (n / S) & 1. A put waits for free[s] in the phase before
// (xor 1), a get for full[s] in the phase; the exits arrive. Only the get's
// wait and the put's arrival fence the proxies (a wgmma reads what was
// written or copied): a producer taking a free slot only writes it, a
// consumer leaving one has only read it. Counters that count the same
// rounds (both sides of the producer, here) share one register.

// One stage: the buffer itself, barriers 0 (full) and 1 (free). Warpgroup
// 0 puts and gets; warpgroup 1 gets: full and free expect 128 threads each.
// The producer waits on full for its own copies, and leaves its slot in
// program order: no arrival at free.
// CHECK-LABEL: tile.kernel @one_stage
// CHECK:       %[[BUF:.*]] = tile.alloc : !tile.smem<64x64xbf16>
// CHECK:       %[[BARS:.*]] = tile.alloc : !tile.smem<1x2xi64>
// CHECK:       %[[C128:.*]] = arith.constant 128 : index
// CHECK:       tile.mbarrier_init %[[BARS]], %[[C128]] :
// CHECK:       tile.warp_specialize
// CHECK:         scf.for {{.*}} iter_args(%[[PUT:.*]] = %{{.*}}, %[[GET:.*]] = %{{.*}}) -> (i32, i32)
// CHECK:           scf.if {{.*}} -> (i32, i32)
// CHECK:             %[[PHASE:.*]] = arith.andi %[[PUT]], %{{.*}} : i32
// CHECK:             %[[BEFORE:.*]] = arith.xori %[[PHASE]], %{{.*}} : i32
// CHECK:             tile.mbarrier_wait %[[BARS]][%{{.*}}], %[[BEFORE]] {for_writes}
// CHECK:             %[[TOK:.*]] = tile.gather_rows {{.*}} into %[[BUF]]
// CHECK:             tile.mbarrier_arrive %[[BARS]][%{{.*}}] {after_copies}
// CHECK:             %[[PUT1:.*]] = arith.addi %[[PUT]], %{{.*}} : i32
// The producer's get shares the put's counter.
// CHECK:             %[[GPHASE:.*]] = arith.andi %[[PUT]], %{{.*}} : i32
// CHECK:             tile.mbarrier_wait %[[BARS]][%{{.*}}], %[[GPHASE]] :
// CHECK:             tile.read %[[BUF]]
// CHECK-NOT:         tile.mbarrier_arrive
// CHECK:             scf.yield %[[PUT1]], %{{.*}} : i32, i32
// CHECK:           } else {
// CHECK:             scf.yield %[[PUT]], %[[PUT]] : i32, i32
// CHECK:       }, {
// CHECK:         scf.for {{.*}} iter_args(%[[R:.*]] = %{{.*}}) -> (i32)
// CHECK:           %[[P:.*]] = arith.andi %[[R]], %{{.*}} : i32
// CHECK:           tile.mbarrier_wait %[[BARS]][%{{.*}}], %[[P]]
// CHECK:           tile.read %[[BUF]]
// CHECK:           tile.mbarrier_arrive %[[BARS]][%{{.*}}] {reads_only}
// CHECK:           arith.addi %[[R]], %{{.*}} : i32
// CHECK-NOT:   tile.channel
// CHECK-NOT:   tile.put_
// CHECK-NOT:   tile.get_
!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
tile.kernel @one_stage(%kv: memref<?x?xbf16>, %n: index, %live: i1) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    scf.for %j = %c0 to %n step %c64 {
      scf.if %live {
        %in = tile.put_enter %ch : !chan
        %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
            : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
        tile.put_exit %ch after %t : !chan
        %out = tile.get_enter %ch : !chan
        %x = tile.read %out : !buf -> !tile.reg<64x64xbf16>
        tile.get_exit %ch : !chan
      }
    }
  }, {
    scf.for %j = %c0 to %n step %c64 {
      %out = tile.get_enter %ch : !chan
      %x = tile.read %out : !buf -> !tile.reg<64x64xbf16>
      tile.get_exit %ch : !chan
    }
  }
}

// -----

// Two stages and two buffers: 3-D rings sliced at the slot n % 2, phase
// (n / 2) & 1, the free barrier of slot s at 2 + s. Producer and consumer
// have one warpgroup each: one count for all barriers.
// CHECK-LABEL: tile.kernel @two_stages
// CHECK:       %[[P:.*]] = tile.alloc : !tile.smem<2x64x32xbf16>
// CHECK:       %[[DS:.*]] = tile.alloc : !tile.smem<2x64x32xbf16>
// CHECK:       %[[BARS:.*]] = tile.alloc : !tile.smem<1x4xi64>
// CHECK:       tile.mbarrier_init %[[BARS]], %{{[a-z0-9_]+}} : !tile.smem<1x4xi64>
// CHECK:       scf.for {{.*}} iter_args(%[[N:.*]] = %{{.*}}) -> (i32)
// CHECK:         %[[LAP:.*]] = arith.divui %[[N]], %{{.*}} : i32
// CHECK:         %[[PH:.*]] = arith.andi %[[LAP]], %{{.*}} : i32
// CHECK:         %[[BEFORE:.*]] = arith.xori %[[PH]], %{{.*}} : i32
// CHECK:         %[[REM:.*]] = arith.remui %[[N]], %{{.*}} : i32
// CHECK:         %[[SLOT:.*]] = arith.index_castui %[[REM]] : i32 to index
// CHECK:         %[[FREE:.*]] = arith.addi %[[SLOT]], %{{.*}} : index
// CHECK:         tile.mbarrier_wait %[[BARS]][%[[FREE]]], %[[BEFORE]]
// CHECK:         tile.slice %[[P]][%{{.*}}, %{{.*}}, %{{.*}}] : !tile.smem<2x64x32xbf16> to !tile.smem<64x32xbf16>
// CHECK:         tile.slice %[[DS]][%{{.*}}, %{{.*}}, %{{.*}}] : !tile.smem<2x64x32xbf16> to !tile.smem<64x32xbf16>
// CHECK:         tile.mbarrier_arrive %[[BARS]][%{{.*}}] :
!probs = !tile.smem<64x32xbf16>
!pds = !tile.channel<!probs, !probs, stages = 2>
tile.kernel @two_stages(%n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ch = tile.channel : !pds
  tile.warp_specialize registers([240, 240]) {
    scf.for %j = %c0 to %n step %c1 {
      %p, %ds = tile.put_enter %ch : !pds
      %z = tile.splat %zero : !tile.reg<64x32xf32>
      tile.write %z, %p : !tile.reg<64x32xf32>, !probs
      tile.write %z, %ds : !tile.reg<64x32xf32>, !probs
      tile.put_exit %ch : !pds
    }
  }, {
    scf.for %j = %c0 to %n step %c1 {
      %p, %ds = tile.get_enter %ch : !pds
      %x = tile.read %ds : !probs -> !tile.reg<64x32xbf16>
      tile.get_exit %ch : !pds
    }
  }
}

// -----

// The rounds are counted through scf.for and scf.if only.
!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
tile.kernel @other_region(%n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{holds channel ops; tile-lower-channels counts their rounds through scf.for and scf.if only}}
    scf.while : () -> () {
      %in = tile.put_enter %ch : !chan
      tile.put_exit %ch : !chan
      %go = arith.constant false
      scf.condition(%go)
    } do {
      scf.yield
    }
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}

// -----

// A slot its producer wrote with its own threads: the producer's get is
// the partition's named barrier (its arrival at full fenced the writes),
// not a round trip through full. Two warpgroups put; the third gets: full
// expects 256 threads, free 128.
// CHECK-LABEL: tile.kernel @written_by_producer
// CHECK:       %[[BARS:.*]] = tile.alloc : !tile.smem<1x2xi64>
// CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:   %[[C128:.*]] = arith.constant 128 : index
// CHECK:       tile.mbarrier_init %[[BARS]], %[[C256]], %[[C128]]
// CHECK:       tile.warp_specialize
// CHECK:         tile.mbarrier_wait %[[BARS]][%{{.*}}], %{{.*}} {for_writes}
// CHECK:         tile.write
// CHECK:         tile.mbarrier_arrive %[[BARS]][%{{.*}}] :
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    tile.barrier warpgroups([0, 1])
// CHECK-NEXT:    tile.read
// CHECK-NOT:     tile.mbarrier_arrive
// CHECK:         scf.yield
// CHECK:       }, {
// CHECK:         tile.mbarrier_wait
// CHECK:         tile.mbarrier_arrive %[[BARS]][%{{.*}}] {reads_only}
!probs = !tile.smem<64x32xbf16>
!chan = !tile.channel<!probs>
tile.kernel @written_by_producer(%n: index) warpgroups(3) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ch = tile.channel : !chan
  tile.warp_specialize warpgroups([2, 1]) registers([160, 160]) {
    scf.for %j = %c0 to %n step %c1 {
      %p = tile.put_enter %ch : !chan
      %z = tile.splat %zero : !tile.reg<64x32xf32>
      tile.write %z, %p : !tile.reg<64x32xf32>, !probs
      tile.put_exit %ch : !chan
      %q = tile.get_enter %ch : !chan
      %x = tile.read %q : !probs -> !tile.reg<64x32xbf16>
      tile.get_exit %ch : !chan
    }
  }, {
    scf.for %j = %c0 to %n step %c1 {
      %q = tile.get_enter %ch : !chan
      %x = tile.read %q : !probs -> !tile.reg<64x32xbf16>
      tile.get_exit %ch : !chan
    }
  }
}

// -----

// Only the producer gets: no free barriers, no wait to put.
// CHECK-LABEL: tile.kernel @only_the_producer_gets
// CHECK:       %[[BARS:.*]] = tile.alloc : !tile.smem<1x1xi64>
// CHECK:       tile.warp_specialize
// CHECK-NOT:     {for_writes}
// CHECK:         tile.mbarrier_arrive %[[BARS]][%{{.*}}] {after_copies}
// CHECK:         tile.mbarrier_wait %[[BARS]][%{{.*}}], %{{.*}} :
// CHECK-NOT:     tile.mbarrier_arrive
// CHECK:       }, {
!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
tile.kernel @only_the_producer_gets(%kv: memref<?x?xbf16>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    scf.for %j = %c0 to %n step %c64 {
      %in = tile.put_enter %ch : !chan
      %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
          : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
      tile.put_exit %ch after %t : !chan
      %out = tile.get_enter %ch : !chan
      %x = tile.read %out : !buf -> !tile.reg<64x64xbf16>
      tile.get_exit %ch : !chan
    }
  }, {
  }
}

// -----

// stages(2) on tile.warp_specialize: each of its channels up to two stages
// while the shared memory holds them, the ring that copies fill first (its
// depth hides their latency): K's 72 KB ring gets its second stage, and
// then the 8 KB one has no room for its own (72 KB x 3 + 8 KB x 2 > 227
// KB).
// CHECK-LABEL: tile.kernel @copies_first
// CHECK-DAG:   tile.alloc : !tile.smem<2x64x576xbf16>
// CHECK-DAG:   tile.alloc : !tile.smem<64x64xbf16>
// CHECK:       tile.warp_specialize registers([240, 240]) stages(2) {
!k = !tile.smem<64x576xbf16>
!p = !tile.smem<64x64xbf16>
tile.kernel @copies_first(%kv: memref<?x576xbf16>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %q = tile.alloc : !k
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  %a = tile.channel : !tile.channel<!k>
  %b = tile.channel : !tile.channel<!p>
  tile.warp_specialize registers([240, 240]) stages(2) {
    scf.for %j = %c0 to %n step %c1 {
      %x = tile.put_enter %a : !tile.channel<!k>
      %t = tile.gather_rows %kv[%rows, %c0] into %x {per_warpgroup}
          : memref<?x576xbf16>, !tile.reg<64xi32>, !k
      tile.put_exit %a after %t : !tile.channel<!k>
      %y = tile.put_enter %b : !tile.channel<!p>
      %zy = tile.splat %zero : !tile.reg<64x64xf32>
      tile.write %zy, %y : !tile.reg<64x64xf32>, !p
      tile.put_exit %b : !tile.channel<!p>
    }
  }, {
    scf.for %j = %c0 to %n step %c1 {
      %x = tile.get_enter %a : !tile.channel<!k>
      %rx = tile.read %x : !k -> !tile.reg<64x576xbf16>
      tile.get_exit %a : !tile.channel<!k>
      %y = tile.get_enter %b : !tile.channel<!p>
      %ry = tile.read %y : !p -> !tile.reg<64x64xbf16>
      tile.get_exit %b : !tile.channel<!p>
    }
  }
}
