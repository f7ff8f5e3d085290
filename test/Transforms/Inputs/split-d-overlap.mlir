// Input of split-d.mlir's third RUN (overlap, the default): the dKV shape of
// @joined on one warpgroup, whose registers hold two pieces. Pieces 0 and 1
// sum dS^T Q and P^T dO, piece 2 has dS^T Q only; each piece is one
// asynchronous group (its products join the first), issued before the
// previous piece's wait, which leaves it running.

// OVERLAP-LABEL: tile.kernel @overlapped
// OVERLAP-NOT: scf.for
// OVERLAP: %[[ROWS:.*]] = tile.load
// OVERLAP: %[[Z0:.*]] = tile.splat %{{.*}} : !tile.reg<64x64xf32>
// OVERLAP: %[[P0A:.*]] = tile.gemm %{{.*}}, %{{.*}}, %[[Z0]] {async}
// OVERLAP: %[[P0:.*]] = tile.gemm %{{.*}}, %{{.*}}, %[[P0A]] {async}
// OVERLAP: %[[OFF1:.*]] = arith.constant 64 : index
// OVERLAP: %[[P1A:.*]] = tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {async}
// OVERLAP: %[[P1:.*]] = tile.gemm %{{.*}}, %{{.*}}, %[[P1A]] {async}
// OVERLAP: %[[D0:.*]] = tile.gemm_wait %[[P0]] {pending = 1 : i64}
// OVERLAP: tile.scatter_add_rows %[[D0]], %{{.*}}[%[[ROWS]], %{{.*}}]
// OVERLAP: %[[OFF2:.*]] = arith.constant 128 : index
// OVERLAP: %[[P2:.*]] = tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {async}
// OVERLAP: %[[D1:.*]] = tile.gemm_wait %[[P1]] {pending = 1 : i64}
// OVERLAP: tile.scatter_add_rows %[[D1]], %{{.*}}[%[[ROWS]], %[[OFF1]]]
// OVERLAP: %[[D2:.*]] = tile.gemm_wait %[[P2]] {pending = 0 : i64}
// OVERLAP: tile.scatter_add_rows %[[D2]], %{{.*}}[%[[ROWS]], %[[OFF2]]]
// OVERLAP-NOT: tile.gemm
// OVERLAP-NOT: tile.scatter_add_rows
tile.kernel @overlapped(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x192xbf16>
  %sdo = tile.alloc : !tile.smem<16x128xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %p = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x192xf32>
  %zv = tile.splat %zero : !tile.reg<64x128xf32>
  %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
  tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  %b = tile.gemm %p, %sdo, %zv : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %b, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// Two pieces do not fit beside the 64 registers of dQ^T, live across the
// scatter, in the partition's budget of 160 (64 + 2 x 32 + what the scatter
// needs): a loop, one piece at a time.

// OVERLAP-LABEL: tile.kernel @over_budget
// OVERLAP: scf.for
// OVERLAP-NOT: async
// OVERLAP: tile.scatter_add_rows
// OVERLAP-NOT: tile.gemm_wait
tile.kernel @over_budget(%dkv: memref<?x?xf32>, %dq: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x192xbf16>
  %sk = tile.alloc : !tile.smem<16x128xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %dst = tile.alloc : !tile.smem<16x64xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.warp_specialize registers([256, 160]) {
  }, {
    %zq = tile.splat %zero : !tile.reg<128x64xf32>
    %dqt = tile.gemm %sk, %dst, %zq {transpose_a} : !tile.smem<16x128xbf16>, !tile.smem<16x64xbf16>, !tile.reg<128x64xf32>
    %z = tile.splat %zero : !tile.reg<64x192xf32>
    %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
    tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
    tile.store %dqt, %dq[%c0, %c0] : !tile.reg<128x64xf32>, memref<?x?xf32>
  }
}

// -----

// Two warpgroups share the pieces of a chain: a loop, as without overlap.

// OVERLAP-LABEL: tile.kernel @shared_chain
// OVERLAP: tile.warpgroup_id
// OVERLAP: scf.for
// OVERLAP-NOT: async
// OVERLAP: tile.scatter_add_rows
tile.kernel @shared_chain(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x192xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x192xf32>
  %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
  tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// A fixed-point scatter needs more registers beside the pieces (72: 64-bit
// values and addresses, transposed row halves) than an fp32 one (40): beside
// the 64 registers of dQ^T in a budget of 184, two fp32 pieces fit
// (64 + 64 + 40) and two fixed-point ones do not (64 + 64 + 72).

// OVERLAP-LABEL: tile.kernel @fp32_fits
// OVERLAP-NOT: scf.for
// OVERLAP: tile.gemm {{.*}} {async}
// OVERLAP-LABEL: tile.kernel @fixed_point_does_not_fit
// OVERLAP: scf.for
// OVERLAP-NOT: async
// OVERLAP: tile.scatter_add_rows {{.*}} scale
tile.kernel @fp32_fits(%dkv: memref<?x?xf32>, %dq: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x192xbf16>
  %sk = tile.alloc : !tile.smem<16x128xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %dst = tile.alloc : !tile.smem<16x64xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.warp_specialize registers([256, 184]) {
  }, {
    %zq = tile.splat %zero : !tile.reg<128x64xf32>
    %dqt = tile.gemm %sk, %dst, %zq {transpose_a} : !tile.smem<16x128xbf16>, !tile.smem<16x64xbf16>, !tile.reg<128x64xf32>
    %z = tile.splat %zero : !tile.reg<64x192xf32>
    %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
    tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
    tile.store %dqt, %dq[%c0, %c0] : !tile.reg<128x64xf32>, memref<?x?xf32>
  }
}

tile.kernel @fixed_point_does_not_fit(%dkv: memref<?x?xi64>, %dq: memref<?x?xf32>, %idx: memref<?xi32>, %s: f32) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x192xbf16>
  %sk = tile.alloc : !tile.smem<16x128xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %dst = tile.alloc : !tile.smem<16x64xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.warp_specialize registers([256, 184]) {
  }, {
    %zq = tile.splat %zero : !tile.reg<128x64xf32>
    %dqt = tile.gemm %sk, %dst, %zq {transpose_a} : !tile.smem<16x128xbf16>, !tile.smem<16x64xbf16>, !tile.reg<128x64xf32>
    %z = tile.splat %zero : !tile.reg<64x192xf32>
    %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
    tile.scatter_add_rows %a, %dkv[%rows, %c0] scale %s : !tile.reg<64x192xf32>, memref<?x?xi64>, !tile.reg<64xi32>
    tile.store %dqt, %dq[%c0, %c0] : !tile.reg<128x64xf32>, memref<?x?xf32>
  }
}
