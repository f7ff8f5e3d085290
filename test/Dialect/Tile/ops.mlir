// RUN: sparse-mla-opt %s | sparse-mla-opt | FileCheck %s
// RUN: sparse-mla-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD
// Every op of the tile dialect prints and parses back.

// The derive map of @derived below, printed as an alias.
// CHECK: #[[DERIVE:.*]] = affine_map<()[s0, s1] -> (s0 * 2, s1 - s0)>

// CHECK-LABEL: tile.kernel @all_ops
// CHECK-SAME: (%kv: memref<?x576xbf16>, %ws: memref<?x576xf32>, %idx: memref<?x?xi32>,
// CHECK-SAME: warpgroups(2)
// CHECK-NOT: arg_names
tile.kernel @all_ops(%kv: memref<?x576xbf16>, %ws: memref<?x576xf32>, %idx: memref<?x?xi32>,
                     %n: index, %s: f32, %fixed: memref<?x576xi64>,
                     %lost: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m1 = arith.constant -1 : i32
  %true_flag = arith.constant true
  // CHECK: tile.block_id  x
  %b = tile.block_id  x
  // CHECK: tile.warpgroup_id
  %w = tile.warpgroup_id
  // CHECK: tile.alloc : !tile.smem<64x576xbf16>
  %k = tile.alloc : !tile.smem<64x576xbf16>
  // CHECK: tile.alloc {offset = 0 : i64} : !tile.smem<2x64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  %ring = tile.alloc {offset = 0 : i64} : !tile.smem<2x64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // CHECK: tile.slice %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tile.smem<2x64x64xbf16, {{.*}}> to !tile.smem<64x64xbf16, {{.*}}>
  %st = tile.slice %ring[%c1, %c0, %c0] : !tile.smem<2x64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>> to !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}] pad %{{.*}} : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
  %rows = tile.load %idx[%b, %c0] bounds [%n] pad %m1 : memref<?x?xi32>, i32 -> !tile.reg<64xi32>
  // CHECK: tile.gather_rows %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}} : memref<?x576xbf16>, !tile.reg<64xi32>, !tile.smem<64x576xbf16>
  %t = tile.gather_rows %kv[%rows, %c0] into %k : memref<?x576xbf16>, !tile.reg<64xi32>, !tile.smem<64x576xbf16>
  // CHECK: tile.async_copy %{{.*}}[%{{.*}}, %{{.*}}] bound %{{.*}} into %{{.*}}
  %t2 = tile.async_copy %kv[%c0, %c0] bound %n into %k : memref<?x576xbf16>, !tile.smem<64x576xbf16>
  // CHECK: tile.wait %{{.*}}, %{{.*}}
  tile.wait %t, %t2
  // CHECK: tile.async_wait 1
  tile.async_wait 1
  // CHECK: tile.any %{{.*}} : !tile.reg<64xi1>
  %flags = tile.splat %true_flag : !tile.reg<64xi1>
  %any = tile.any %flags : !tile.reg<64xi1>
  // CHECK: tile.barrier
  tile.barrier
  // CHECK: tile.grid_dim  y
  %gy = tile.grid_dim  y
  // CHECK: tile.counter_add %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : memref<?x?xi32>
  tile.counter_add %idx[%b, %c1], %m1 : memref<?x?xi32>
  // CHECK: tile.counter_wait %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xi32>
  %reached = tile.counter_wait %idx[%c0, %gy], %m1, %m1 : memref<?x?xi32>
  // CHECK: tile.splat %{{.*}} : !tile.reg<64x64xf32, #tile.mma>
  %z = tile.splat %s : !tile.reg<64x64xf32, #tile.mma>
  // CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : !tile.smem<64x576xbf16>, !tile.smem<64x576xbf16>, !tile.reg<64x64xf32, #tile.mma>
  %acc = tile.gemm %k, %k, %z {transpose_b} : !tile.smem<64x576xbf16>, !tile.smem<64x576xbf16>, !tile.reg<64x64xf32, #tile.mma>
  // CHECK: %[[PROD:.*]] = tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {async, transpose_b}
  // CHECK: %[[PROD2:.*]] = tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {async, transpose_b}
  // CHECK: %[[JOIN:.*]] = tile.gemm %{{.*}}, %{{.*}}, %[[PROD2]] {async, transpose_b}
  // CHECK: tile.gemm_wait %[[PROD]] {pending = 1 : i64} : !tile.reg<64x64xf32, #tile.mma>
  // CHECK: tile.gemm_wait %[[JOIN]] {pending = 0 : i64} : !tile.reg<64x64xf32, #tile.mma>
  %run = tile.gemm %k, %k, %z {transpose_b, async} : !tile.smem<64x576xbf16>, !tile.smem<64x576xbf16>, !tile.reg<64x64xf32, #tile.mma>
  %run2 = tile.gemm %k, %k, %z {transpose_b, async} : !tile.smem<64x576xbf16>, !tile.smem<64x576xbf16>, !tile.reg<64x64xf32, #tile.mma>
  %joined = tile.gemm %k, %k, %run2 {transpose_b, async} : !tile.smem<64x576xbf16>, !tile.smem<64x576xbf16>, !tile.reg<64x64xf32, #tile.mma>
  %done = tile.gemm_wait %run {pending = 1} : !tile.reg<64x64xf32, #tile.mma>
  %done2 = tile.gemm_wait %joined {pending = 0} : !tile.reg<64x64xf32, #tile.mma>
  // CHECK: tile.map
  %e = tile.map %acc : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32, #tile.mma> {
  ^bb0(%x: f32):
    %y = math.exp2 %x : f32
    tile.yield %y : f32
  }
  // CHECK: tile.reduce  max %{{.*}} along 1 : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64xf32, #tile.slice<dim = 1, parent = #tile.mma>>
  %r = tile.reduce  max %e along 1 : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64xf32, #tile.slice<dim = 1, parent = #tile.mma>>
  // CHECK: tile.broadcast %{{.*}} along 1
  %bc = tile.broadcast %r along 1 : !tile.reg<64xf32, #tile.slice<dim = 1, parent = #tile.mma>> -> !tile.reg<64x64xf32, #tile.mma>
  // CHECK: tile.write
  tile.write %bc, %st : !tile.reg<64x64xf32, #tile.mma>, !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // CHECK: tile.read
  %rd = tile.read %st : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>> -> !tile.reg<64x64xbf16, #tile.mma>
  // CHECK: tile.scatter_add_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>, !tile.reg<64xi32>
  tile.scatter_add_rows %bc, %ws[%rows, %c0] : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>, !tile.reg<64xi32>
  // CHECK: tile.scatter_add_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {interleaved} : !tile.reg<64x64xf32, #tile.mma>
  tile.scatter_add_rows %bc, %ws[%rows, %c0] {interleaved} : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>, !tile.reg<64xi32>
  // CHECK: tile.scatter_add_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] scale %{{.*}} : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xi64>, !tile.reg<64xi32>
  tile.scatter_add_rows %bc, %fixed[%rows, %c0] scale %s : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xi64>, !tile.reg<64xi32>
  // CHECK: tile.scatter_add_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] scale %{{.*}} overflow(%{{.*}} : memref<?xi32>) : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xi64>, !tile.reg<64xi32>
  tile.scatter_add_rows %bc, %fixed[%rows, %c0] scale %s overflow(%lost : memref<?xi32>) : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xi64>, !tile.reg<64xi32>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] {interleaved} : memref<?x576xf32> -> !tile.reg<64x64xf32>
  %back = tile.load %ws[%c0, %c0] {interleaved} : memref<?x576xf32> -> !tile.reg<64x64xf32>
  // CHECK: tile.scatter_add_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] staging %{{.*}} : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>, !tile.reg<64xi32>, !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  %stage = tile.alloc : !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  tile.scatter_add_rows %bc, %ws[%rows, %c0] staging %stage : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>, !tile.reg<64xi32>, !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] bounds[%{{.*}}, %{{.*}}]
  tile.store %bc, %ws[%c0, %c0] bounds [%n, %n] : !tile.reg<64x64xf32, #tile.mma>, memref<?x576xf32>
  // CHECK: tile.pipelined_for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} stages(2) iter_args(%{{.*}} = %{{.*}}) -> (!tile.reg<64x64xf32, #tile.mma>)
  %sum = tile.pipelined_for %i = %c0 to %n step %c1 stages(2) iter_args(%a = %z) -> (!tile.reg<64x64xf32, #tile.mma>) {
    // CHECK: tile.yield %{{.*}} : !tile.reg<64x64xf32, #tile.mma>
    tile.yield %a : !tile.reg<64x64xf32, #tile.mma>
  }
  // CHECK: tile.pipelined_for %{{.*}} stages(1) {
  tile.pipelined_for %i = %c0 to %n step %c1 stages(1) {
  }
}

// Shape parameters: `{name}` dimensions, tile.param, and the variants.
// CHECK-LABEL: tile.kernel @generic
// CHECK-SAME: warpgroups(1) variants([{d = 512 : i64, hw = 16 : i64}, {d = 256 : i64, hw = 32 : i64}])
tile.kernel @generic(%x: memref<?x?xbf16>) warpgroups(1)
    variants([{hw = 16, d = 512}, {hw = 32, d = 256}]) {
  // CHECK: tile.param "hw" : index
  %hw = tile.param "hw" : index
  // CHECK: tile.alloc : !tile.smem<2x{hw}x{d}xbf16>
  %q = tile.alloc : !tile.smem<2x{hw}x{d}xbf16>
  // CHECK: tile.splat %{{.*}} : !tile.reg<{d}x{hw}xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : !tile.reg<{d}x{hw}xf32>
}

// Derived shape parameters.
// CHECK-LABEL: tile.kernel @derived
// CHECK-SAME: derive([w2, wd] = #[[DERIVE]][hw, d]) variants([{d = 512 : i64, hw = 16 : i64}])
tile.kernel @derived(%x: memref<?x?xbf16>) warpgroups(1)
    derive([w2, wd] = affine_map<()[hw, d] -> (hw * 2, d - hw)>[hw, d])
    variants([{hw = 16, d = 512}]) {
  %q = tile.alloc : !tile.smem<{w2}x{wd}xbf16>
}

// Elements by position, iota, scans, row stores, tables and per-warpgroup
// gathers.
// CHECK-LABEL: tile.kernel @by_position
tile.kernel @by_position(%lse: memref<?x?xf32>, %out: memref<?x?xi32>, %q: memref<?x64xbf16>,
                         %dq: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %inf = arith.constant 0x7F800000 : f32
  // CHECK: tile.iota along 1 : !tile.reg<1x1024xi32>
  %i = tile.iota along 1 : !tile.reg<1x1024xi32>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] pad %{{.*}} : memref<?x?xf32>, !tile.reg<1x1024xi32>, f32 -> !tile.reg<1x1024xf32>
  %g = tile.gather %lse[%i] pad %inf : memref<?x?xf32>, !tile.reg<1x1024xi32>, f32 -> !tile.reg<1x1024xf32>
  %buf = tile.alloc : !tile.smem<1x1024xi32>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] : !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32> -> !tile.reg<1x1024xi32>
  %g2 = tile.gather %buf[%i] : !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32> -> !tile.reg<1x1024xi32>
  // CHECK: tile.atomic_rmw  or %{{.*}}, %{{.*}}[%{{.*}}] : !tile.reg<1x1024xi32>, !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32>
  %old = tile.atomic_rmw or %i, %buf[%i] : !tile.reg<1x1024xi32>, !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32>
  // CHECK: tile.atomic_rmw  add
  %old2 = tile.atomic_rmw add %g2, %out[%i] : !tile.reg<1x1024xi32>, memref<?x?xi32>, !tile.reg<1x1024xi32>
  // CHECK: tile.scan  add %{{.*}} : !tile.reg<1x1024xi32>
  %sum = tile.scan add %old : !tile.reg<1x1024xi32>
  // CHECK: tile.scan  max %{{.*}} : !tile.reg<1x1024xf32>
  %most = tile.scan max %g : !tile.reg<1x1024xf32>
  // CHECK: tile.scatter %{{.*}}, %{{.*}}[%{{.*}}] : !tile.reg<1x1024xi32>, memref<?x?xi32>, !tile.reg<1x1024xi32>
  tile.scatter %sum, %out[%i] : !tile.reg<1x1024xi32>, memref<?x?xi32>, !tile.reg<1x1024xi32>
  %cols = tile.iota along 0 : !tile.reg<16xi32>
  %table = tile.alloc : !tile.smem<1x16xi32>
  // CHECK: tile.write %{{.*}}, %{{.*}} : !tile.reg<16xi32>, !tile.smem<1x16xi32>
  tile.write %cols, %table : !tile.reg<16xi32>, !tile.smem<1x16xi32>
  // CHECK: tile.read %{{.*}} : !tile.smem<1x16xi32> -> !tile.reg<16xi32>
  %rows = tile.read %table : !tile.smem<1x16xi32> -> !tile.reg<16xi32>
  %qs = tile.alloc : !tile.smem<16x64xbf16>
  // CHECK: tile.gather_rows %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}} {per_warpgroup}
  %t = tile.gather_rows %q[%rows, %c0] into %qs {per_warpgroup} : memref<?x64xbf16>, !tile.reg<16xi32>, !tile.smem<16x64xbf16>
  tile.wait %t
  %z = arith.constant 0.0 : bf16
  %v = tile.splat %z : !tile.reg<64x16xbf16>
  // CHECK: tile.store_rows %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {transpose} : !tile.reg<64x16xbf16>, memref<?x64xbf16>, !tile.reg<16xi32>
  tile.store_rows %v, %dq[%rows, %c0] {transpose} : !tile.reg<64x16xbf16>, memref<?x64xbf16>, !tile.reg<16xi32>
}


// Warp specialization: a region per warpgroup with its register budget,
// mbarriers (arrive, arrive after copies, arrive with a transaction count,
// wait for a phase) and a barrier of some warpgroups.
// CHECK-LABEL: tile.kernel @partitions
// CHECK: tile.mbarrier_init %{{.*}}, %{{.*}} : !tile.smem<1x2xi64>
// CHECK: tile.warp_specialize registers([40, 232]) {
// CHECK:   tile.mbarrier_wait %{{.*}}[%{{.*}}], %{{.*}} : !tile.smem<1x2xi64>
// CHECK:   tile.mbarrier_arrive %{{.*}}[%{{.*}}] {after_copies} : !tile.smem<1x2xi64>
// CHECK:   tile.mbarrier_arrive %{{.*}}[%{{.*}}] expect_tx %{{.*}} : !tile.smem<1x2xi64>
// CHECK: }, {
// CHECK:   tile.barrier warpgroups([1])
// CHECK:   tile.mbarrier_arrive %{{.*}}[%{{.*}}] : !tile.smem<1x2xi64>
// CHECK: }
tile.kernel @partitions(%n: index, %p: i32) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %bars, %n : !tile.smem<1x2xi64>
  tile.warp_specialize registers([40, 232]) {
    tile.mbarrier_wait %bars[%c0], %p : !tile.smem<1x2xi64>
    tile.mbarrier_arrive %bars[%c0] {after_copies} : !tile.smem<1x2xi64>
    tile.mbarrier_arrive %bars[%c0] expect_tx %n : !tile.smem<1x2xi64>
  }, {
    tile.barrier warpgroups([1])
    tile.mbarrier_arrive %bars[%c0] : !tile.smem<1x2xi64>
  }
}

// Channels: a ring of one or more buffers; the producer puts (its copies
// land on the slot with `after`), every partition that reads gets; the
// types of the slot's buffers come from the channel. Barriers may expect a
// count each.
// CHECK-LABEL: tile.kernel @channels
// CHECK: %[[K:.*]] = tile.channel : !tile.channel<!tile.smem<64x64xbf16>>
// CHECK: %[[PDS:.*]] = tile.channel : !tile.channel<!tile.smem<64x32xbf16>, !tile.smem<64x32xbf16>, stages = 2>
// CHECK: tile.mbarrier_init %{{.*}}, %{{.*}}, %{{.*}} : !tile.smem<1x2xi64>
// CHECK:   %[[IN:.*]] = tile.put_enter %[[K]] : !tile.channel<!tile.smem<64x64xbf16>>
// CHECK:   %[[T:.*]] = tile.gather_rows %{{.*}} into %[[IN]]
// CHECK:   tile.put_exit %[[K]] after %[[T]] : !tile.channel<!tile.smem<64x64xbf16>>
// CHECK:   %{{.*}}:2 = tile.put_enter %[[PDS]]
// CHECK:   tile.put_exit %[[PDS]] :
// CHECK: }, {
// CHECK:   %{{.*}} = tile.get_enter %[[K]]
// CHECK:   tile.get_exit %[[K]]
// CHECK:   %{{.*}}:2 = tile.get_enter %[[PDS]]
// CHECK:   tile.get_exit %[[PDS]]
!chan_k = !tile.channel<!tile.smem<64x64xbf16>>
!chan_pds = !tile.channel<!tile.smem<64x32xbf16>, !tile.smem<64x32xbf16>, stages = 2>
tile.kernel @channels(%kv: memref<?x?xbf16>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %rows = tile.iota along 0 : !tile.reg<64xi32>
  %k = tile.channel : !chan_k
  %pds = tile.channel : !chan_pds
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %bars, %n, %n : !tile.smem<1x2xi64>
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %k : !chan_k
    %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
    tile.put_exit %k after %t : !chan_k
    %p, %ds = tile.put_enter %pds : !chan_pds
    tile.put_exit %pds : !chan_pds
  }, {
    %out = tile.get_enter %k : !chan_k
    tile.get_exit %k : !chan_k
    %p, %ds = tile.get_enter %pds : !chan_pds
    tile.get_exit %pds : !chan_pds
  }
}

// Partitions of several warpgroups, and a vote inside one.
// CHECK-LABEL: tile.kernel @wide_partitions
// CHECK: tile.warp_specialize warpgroups([2, 1]) registers([232, 40]) {
// CHECK:   tile.any %{{.*}} : !tile.reg<64xi1>
// CHECK:   tile.barrier warpgroups([0, 1])
// CHECK: }, {
// CHECK: }
tile.kernel @wide_partitions(%b: i1) warpgroups(3) {
  tile.warp_specialize warpgroups([2, 1]) registers([232, 40]) {
    %p = tile.splat %b : !tile.reg<64xi1>
    %live = tile.any %p : !tile.reg<64xi1>
    tile.barrier warpgroups([0, 1])
  }, {
  }
}

// Clusters: the kernel's cluster size, the CTA's rank in it, a write into a
// peer CTA's tile, an arrival at its barrier, and an asynchronous write that
// completes on it.
// CHECK-LABEL: tile.kernel @pair
// CHECK-SAME: warpgroups(1) cluster(2)
// CHECK: %[[R:.*]] = tile.cluster_rank
// CHECK: tile.write %{{.*}}, %{{.*}} cta %[[R]] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
// CHECK: tile.mbarrier_arrive %{{.*}}[%{{.*}}] cta %[[R]] : !tile.smem<1x2xi64>
// CHECK: tile.write %{{.*}}, %{{.*}} cta %[[R]] on %{{.*}}[%{{.*}}] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
tile.kernel @pair(%n: index, %x: f32) warpgroups(1) cluster(2) {
  %c0 = arith.constant 0 : index
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %rank = tile.cluster_rank
  %inbox = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.write %v, %inbox cta %rank : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
  tile.mbarrier_arrive %bars[%c0] cta %rank : !tile.smem<1x2xi64>
  tile.write %v, %inbox cta %rank on %bars[%c0] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
}

// A layout conversion, and one to the layout the tile has, which folds away.
// CHECK-LABEL: tile.kernel @convert
// CHECK: tile.convert_layout %{{.*}} : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>> -> !tile.reg<64x64xf32, #tile.mma>
// CHECK: tile.convert_layout %{{.*}} : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32, #tile.mma>
// FOLD-LABEL: tile.kernel @convert
// FOLD: %[[M:.*]] = tile.convert_layout
// FOLD-NOT: tile.convert_layout
// FOLD: tile.store %[[M]]
tile.kernel @convert(%out: memref<?x64xf32>, %x: f32) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %b = tile.splat %x : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  %m = tile.convert_layout %b : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>> -> !tile.reg<64x64xf32, #tile.mma>
  %same = tile.convert_layout %m : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32, #tile.mma>
  tile.store %same, %out[%c0, %c0] : !tile.reg<64x64xf32, #tile.mma>, memref<?x64xf32>
}

// A kernel's index space and tensor extents, declared once in its
// signature: the sizes print as they were written, `?` where any extent
// will do.
// CHECK-LABEL: tile.kernel @index_space
// CHECK-SAME: (%keys: memref<?x?xi32> [%tiles * %groups, ?],
// CHECK-SAME: %bits: memref<?x?xi32> [%tiles * %groups, %keys[1]] optional,
// CHECK-SAME: %rows: memref<?xf32> [%batch * (%seq - 1) + (%seq ceildiv {t}) mod 3]
// CHECK-SAME: warpgroups(1)
// CHECK-SAME: grid([b : %batch, tile : %seq ceildiv {t}] window(slot : %tiles from %first), [g : %groups])
// CHECK-SAME: constants({bits = 40 : i64}) variants([{t = 2 : i64}])
// CHECK: tile.work_id "b"
// CHECK: tile.work_id "slot"
// CHECK: tile.work_id "g"
tile.kernel @index_space(%keys: memref<?x?xi32> [%tiles * %groups, ?],
                         %bits: memref<?x?xi32> [%tiles * %groups, %keys[1]] optional,
                         %rows: memref<?xf32> [%batch * (%seq - 1) + (%seq ceildiv {t}) mod 3],
                         %batch: index, %seq: index, %first: index, %tiles: i32, %groups: i64)
    warpgroups(1)
    grid([b : %batch, tile : %seq ceildiv {t}] window(slot : %tiles from %first), [g : %groups])
    constants({bits = 40}) variants([{t = 2}]) {
  %b = tile.work_id "b"
  %slot = tile.work_id "slot"
  %g = tile.work_id "g"
}
