// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-assign-layouts,tile-allocate-shared,tile-materialize-waits,tile-group-gemms,tile-assign-barrier-ids),tile-record-manifest,convert-tile-to-nvvm)' -split-input-file -verify-diagnostics | FileCheck %s
// RUN: sparse-mla-opt %S/Inputs/unprepared.mlir --convert-tile-to-nvvm -split-input-file -verify-diagnostics

// Two warpgroups split a gather: each issues every other 16-byte chunk
// (the warpgroup index is broadcast from lane 0: warp-uniform for ptxas).
// CHECK-LABEL: gpu.func @split_gather
// CHECK: arith.divui {{.*}}, %c128_i32{{.*}} : i32
// CHECK: %[[WG:.*]], %{{.*}} = gpu.shuffle  idx
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[WG]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[MINE]]
// CHECK:   nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: arith.cmpi eq, %[[WG]], %c1_i32{{.*}} : i32
// CHECK: nvvm.cp.async.commit.group
// Barriers order thread writes before wgmma reads them.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
tile.kernel @split_gather(%kv: memref<?x64xbf16>, %rows: memref<64xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %t = tile.gather_rows %kv[%r, %c0] into %buf : memref<?x64xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  tile.wait %t
}

// A transposed store writes element by element, each under its bound.
// CHECK-LABEL: gpu.func @transposed_store
// CHECK-NOT: vector<2xf32>
// CHECK: scf.if
// CHECK:   llvm.store {{.*}} : f32, !llvm.ptr<1>
tile.kernel @transposed_store(%out: memref<?x?xf32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<64x16xf32, #tile.mma>
  tile.store %x, %out[%c0, %c0] bounds [%n, %c64] {transpose} : !tile.reg<64x16xf32, #tile.mma>, memref<?x?xf32>
}

// A bounded load of 2-element runs reads both at once only when the last
// is in bounds; else each element under its own bound (odd head counts).
// CHECK-LABEL: gpu.func @split_run_load
// CHECK: %[[ALL:.*]] = arith.cmpi slt
// CHECK: scf.if %[[ALL]] -> (vector<2xf32>)
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK: } else {
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> f32
tile.kernel @split_run_load(%in: memref<?xf32>, %out: memref<?x?xf32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %inf = arith.constant 0x7F800000 : f32
  %v = tile.load %in[%c0] bounds [%n] pad %inf : memref<?xf32>, f32 -> !tile.reg<16xf32, #tile.slice<dim = 0, parent = #tile.mma>>
  %b = tile.broadcast %v along 0 : !tile.reg<16xf32, #tile.slice<dim = 0, parent = #tile.mma>> -> !tile.reg<64x16xf32, #tile.mma>
  tile.store %b, %out[%c0, %c0] : !tile.reg<64x16xf32, #tile.mma>, memref<?x?xf32>
}

// An mma tile scatters as 16-byte reductions: lane pairs exchange half of
// their values (xor 1), then each adds four columns of one row, predicated
// on the row's validity (no branch).
// CHECK-LABEL: gpu.func @scatter_mma
// CHECK-COUNT-2: gpu.shuffle  xor {{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: %[[OK:.*]] = arith.cmpi sge
// CHECK-NOT: scf.if
// CHECK: %[[P:.*]] = arith.extui %[[OK]] : i1 to i32
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $5, 0; @p red.relaxed.gpu.global.add.v4.f32 [$0], {$1, $2, $3, $4}; }", "l,f,f,f,f,r" {{.*}}, %[[P]]
// CHECK-NOT: red.relaxed.gpu.global.add.v2
// CHECK: gpu.return
tile.kernel @scatter_mma(%dst: memref<?x64xf32>, %rows: memref<64xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %x = tile.splat %one : !tile.reg<64x8xf32, #tile.mma>
  tile.scatter_add_rows %x, %dst[%r, %c0] : !tile.reg<64x8xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<64xi32>
}

// Into an interleaved destination the pairs at columns c and c + 8 of a row
// are adjacent at column (c & ~15) + 2 * (c & 7), so each thread adds them
// straight from its registers as one v4: with one 16-column group per row
// nothing is exchanged.
// CHECK-LABEL: gpu.func @scatter_mma_interleaved
// CHECK-NOT: gpu.shuffle
// CHECK: arith.andi %{{.*}}, %c-16_i32
// CHECK: %[[OK:.*]] = arith.cmpi sge
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $5, 0; @p red.relaxed.gpu.global.add.v4.f32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: red.relaxed.gpu.global.add.v2
// CHECK: gpu.return
tile.kernel @scatter_mma_interleaved(%dst: memref<?x64xf32>, %rows: memref<64xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %x = tile.splat %one : !tile.reg<64x16xf32, #tile.mma>
  tile.scatter_add_rows %x, %dst[%r, %c0] {interleaved} : !tile.reg<64x16xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<64xi32>
}

// Groups come in pairs (32 columns) where a row has more: lanes l and l ^ 4
// (rows r and r + 1) trade one group of each pair, four values and their
// rows, all before the first reduction; then each reduction of a warp adds
// 128-byte runs: a whole pair of the even lane's row, then of the odd
// lane's. The third group has no partner and is added as it is.
// CHECK-LABEL: gpu.func @scatter_mma_interleaved_pairs
// CHECK-NOT: gpu.shuffle
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: %[[SEND:.*]] = arith.select %[[ODD]], %[[LEFT:.*]], %[[RIGHT:.*]] : f32
// CHECK: %[[GOT:.*]], %{{.*}} = gpu.shuffle  xor %[[SEND]], %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: arith.select %[[ODD]], %[[GOT]], %[[LEFT]] : f32
// CHECK: arith.select %[[ODD]], %[[RIGHT]], %[[GOT]] : f32
// CHECK-COUNT-3: gpu.shuffle  xor {{.*}}, %c4_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor {{.*}}, %c4_i32{{.*}} : i32
// CHECK-COUNT-4: gpu.shuffle  xor {{.*}}, %c4_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor {{.*}}, %c4_i32{{.*}} : i32
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-6: red.relaxed.gpu.global.add.v4.f32
// CHECK-NOT: red.relaxed
// CHECK: gpu.return
tile.kernel @scatter_mma_interleaved_pairs(%src: memref<64x48xf32>, %dst: memref<?x64xf32>, %rows: memref<64xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %x = tile.load %src[%c0, %c0] : memref<64x48xf32> -> !tile.reg<64x48xf32, #tile.mma>
  tile.scatter_add_rows %x, %dst[%r, %c0] {interleaved} : !tile.reg<64x48xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<64xi32>
}

// Into an i64 fixed-point destination, each element is scaled, rounded to
// the nearest integer and added with a 64-bit integer reduction (integer
// sums do not depend on their order), under its row's predicate; 8 columns
// are less than a line: no exchange.
// CHECK-LABEL: gpu.func @scatter_fixed_point
// CHECK-NOT: gpu.shuffle
// CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; .reg .s64 v; setp.ne.b32 p, $2, 0; cvt.rni.s64.f32 v, $1; @p red.relaxed.gpu.global.add.u64 [$0], v; }", "l,f,r" %{{.*}}, %[[X]], %{{.*}}
// CHECK-NOT: red.relaxed.gpu.global.add.v
tile.kernel @scatter_fixed_point(%dst: memref<?x64xi64>, %rows: memref<64xi32>, %s: f32) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<64x8xf32, #tile.mma>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  tile.scatter_add_rows %x, %dst[%r, %c0] scale %s : !tile.reg<64x8xf32, #tile.mma>, memref<?x64xi64>, !tile.reg<64xi32>
}

// With overflow flags, each element is also checked (NaN and |x| >= 2^63 do
// not convert: unordered compares), and each of the thread's two rows (r and
// r + 8 of an mma tile) sets its flag once, after its additions, where a row
// index is valid and an element was lost.
// CHECK-LABEL: gpu.func @scatter_fixed_point_overflow
// CHECK-DAG: %[[LIM:.*]] = arith.constant 9.22337203E+18 : f32
// CHECK-DAG: %[[NLIM:.*]] = arith.constant -9.22337203E+18 : f32
// CHECK: %[[X:.*]] = arith.mulf
// CHECK-DAG: %[[HI:.*]] = arith.cmpf uge, %[[X]], %[[LIM]] : f32
// CHECK-DAG: %[[LO:.*]] = arith.cmpf ule, %[[X]], %[[NLIM]] : f32
// CHECK: arith.ori %[[HI]], %[[LO]] : i1
// CHECK: cvt.rni.s64.f32 v, $1; @p red.relaxed.gpu.global.add.u64
// CHECK-COUNT-2: @p red.relaxed.gpu.global.or.b32 [$0], 1;
// CHECK-NOT: global.or.b32
// CHECK: gpu.return
tile.kernel @scatter_fixed_point_overflow(%dst: memref<?x64xi64>, %lost: memref<?xi32>, %rows: memref<64xi32>, %s: f32) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<64x8xf32, #tile.mma>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  tile.scatter_add_rows %x, %dst[%r, %c0] scale %s overflow(%lost : memref<?xi32>) : !tile.reg<64x8xf32, #tile.mma>, memref<?x64xi64>, !tile.reg<64xi32>
}

// An mma tile of 16k columns is added in whole 128-byte lines: per row half,
// the quads of four rows transpose the 4 x 4 values of each 16-column group
// (xor 8, then xor 4: two exchanges each); instruction k takes row k's index
// from lane (lane & ~12) | 4k and adds its 16 columns of the group.
// CHECK-LABEL: gpu.func @scatter_fixed_point_lines
// CHECK-COUNT-2: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK-COUNT-2: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK-COUNT-2: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK-COUNT-2: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK: gpu.shuffle idx
// CHECK-NOT: gpu.shuffle
// CHECK: @p red.relaxed.gpu.global.add.u64
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: red.relaxed
// CHECK: gpu.return
tile.kernel @scatter_fixed_point_lines(%dst: memref<?x64xi64>, %rows: memref<64xi32>, %s: f32) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<64x16xf32, #tile.mma>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  tile.scatter_add_rows %x, %dst[%r, %c0] scale %s : !tile.reg<64x16xf32, #tile.mma>, memref<?x64xi64>, !tile.reg<64xi32>
}

// Along dim 0 a row across all 128 lanes leaves each thread whole columns:
// the sum over rows stays in the thread, in row order (no shuffle).
// CHECK-LABEL: gpu.func @reduce_columns_in_thread
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-3: arith.addf
// CHECK-NOT: arith.addf
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
tile.kernel @reduce_columns_in_thread(%in: memref<?x?xf32>, %out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %x = tile.load %in[%c0, %c0] : memref<?x?xf32> -> !tile.reg<4x128xf32, #tile.blocked<vector = 1, lanes = 128>>
  %r = tile.reduce add %x along 0 : !tile.reg<4x128xf32, #tile.blocked<vector = 1, lanes = 128>> -> !tile.reg<128xf32>
  tile.store %r, %out[%c0] : !tile.reg<128xf32>, memref<?xf32>
}

// Along dim 0 of a #tile.mma tile (the 64 rows of a wgmma accumulator) a
// column spans the 8 quads of each warp and the warpgroup's 4 warps: the
// thread's two rows, a butterfly over lanes 4, 8 and 16, then each warp's
// first quad writes its partials to scratch between two warpgroup barriers
// and every thread combines the 4 warps' (the online softmax's column
// maximum in the forward).
// CHECK-LABEL: gpu.func @reduce_columns_across_warps
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32{{[_0-9]*}},
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32{{[_0-9]*}},
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{[_0-9]*}},
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: scf.if
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.maximumf
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: gpu.return
tile.kernel @reduce_columns_across_warps(%in: memref<?x?xf32>, %out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %x = tile.load %in[%c0, %c0] : memref<?x?xf32> -> !tile.reg<64x8xf32, #tile.mma>
  %r = tile.reduce max %x along 0 : !tile.reg<64x8xf32, #tile.mma> -> !tile.reg<8xf32>
  tile.store %r, %out[%c0] : !tile.reg<8xf32>, memref<?xf32>
}

// A view's rows are apart by its descriptor's stride, not its width: the
// gather and the row store address rows by the stride of the metadata.
// CHECK-LABEL: gpu.func @strided_rows
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[PITCH:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK: arith.muli %{{.*}}, %[[PITCH]] : i64
// CHECK: nvvm.cp.async.shared.global
// CHECK: memref.extract_strided_metadata %arg2
tile.kernel @strided_rows(%q: memref<?x?xbf16, strided<[?, 1]>>, %rows: memref<64xi32>,
                          %out: memref<?x?xbf16, strided<[?, 1]>>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %t = tile.gather_rows %q[%r, %c0] into %buf : memref<?x?xbf16, strided<[?, 1]>>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  tile.wait %t
  %v = tile.read %buf : !tile.smem<64x64xbf16> -> !tile.reg<64x64xbf16>
  tile.store_rows %v, %out[%r, %c0] : !tile.reg<64x64xbf16>, memref<?x?xbf16, strided<[?, 1]>>, !tile.reg<64xi32>
}

// exp2 and log2 of f32 are one MUFU instruction each.
// CHECK-LABEL: gpu.func @mufu_math
// CHECK: nvvm.inline_ptx "lg2.approx.ftz.f32 $0, $1;"
// CHECK: nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
tile.kernel @mufu_math(%out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %x = tile.splat %two : !tile.reg<128xf32>
  %y = tile.map %x : !tile.reg<128xf32> -> !tile.reg<128xf32> {
  ^bb0(%a: f32):
    %l = math.log2 %a : f32
    %e = math.exp2 %l : f32
    tile.yield %e : f32
  }
  tile.store %y, %out[%c0] : !tile.reg<128xf32>, memref<?xf32>
}

// A coalesced tile (four columns a thread) adds its two pairs apart, and an
// interleaved load reads pairs back from their stored columns under the
// bounds of their natural ones: a pair wholly inside in one access, else
// element by element (an odd bound keeps the pair's first element).
// CHECK-LABEL: gpu.func @interleaved_blocked
// CHECK: scf.if
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK: else
// CHECK:   scf.if %{{.*}} -> (f32)
// CHECK:     llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK:   scf.if %{{.*}} -> (f32)
// CHECK:   vector.from_elements
// CHECK: red.relaxed.gpu.global.add.v2.f32
// CHECK-NOT: red.relaxed.gpu.global.add.v4
// CHECK: gpu.return
tile.kernel @interleaved_blocked(%src: memref<?x?xf32>, %dst: memref<?x?xf32>, %rows: memref<64xi32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %r = tile.load %rows[%c0] : memref<64xi32> -> !tile.reg<64xi32>
  %x = tile.load %src[%c0, %c0] bounds [%n, %n] pad %zero {interleaved} : memref<?x?xf32>, f32 -> !tile.reg<64x64xf32>
  tile.scatter_add_rows %x, %dst[%r, %c0] {interleaved} : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// Adjacent GEMMs (slices in between) form one wgmma group: one fence, one
// commit, one wait.
// CHECK-LABEL: gpu.func @gemm_group
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
tile.kernel @gemm_group(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<32x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %b2 = tile.slice %b[%c0, %c0] : !tile.smem<32x64xbf16> to !tile.smem<32x64xbf16>
  %t = tile.gemm %a, %b2, %s {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  tile.store %t, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}

// Asynchronous products are one group each and nobody waits at them; the
// wait gives the older one (pending 1) and its registers pass through empty
// asm, so their readers come after the wait; the younger one waits for 0.
// CHECK-LABEL: gpu.func @gemm_async
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: llvm.store
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.store
// CHECK: gpu.return
tile.kernel @gemm_async(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<32x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {transpose_b, async} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %t = tile.gemm %a, %b, %acc {transpose_b, async} : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x32xf32>
  %s2 = tile.gemm_wait %s {pending = 1} : !tile.reg<64x32xf32>
  tile.store %s2, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
  %t2 = tile.gemm_wait %t {pending = 0} : !tile.reg<64x32xf32>
  tile.store %t2, %out[%c64, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}

// An asynchronous product that accumulates into the one before joins its
// group: one fence, one commit for both, and the wait leaves the next
// product's group running.
// CHECK-LABEL: gpu.func @gemm_async_joined
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: llvm.store
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
tile.kernel @gemm_async_joined(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x32xbf16>
  %b = tile.alloc : !tile.smem<32x32xbf16>
  %acc = tile.splat %zero : !tile.reg<64x32xf32>
  %s = tile.gemm %a, %b, %acc {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %s1 = tile.gemm %a, %b, %s {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %t = tile.gemm %a, %b, %acc {async} : !tile.smem<64x32xbf16>, !tile.smem<32x32xbf16>, !tile.reg<64x32xf32>
  %s2 = tile.gemm_wait %s1 {pending = 1} : !tile.reg<64x32xf32>
  tile.store %s2, %out[%c0, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
  %t2 = tile.gemm_wait %t {pending = 0} : !tile.reg<64x32xf32>
  tile.store %t2, %out[%c64, %c0] : !tile.reg<64x32xf32>, memref<?x?xf32>
}

// N above 256 is cut into wgmma pieces of at most 256 columns: 384 = 256 +
// 128, each a chain over K (two k16 steps).
// CHECK-LABEL: gpu.func @gemm_wide
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
tile.kernel @gemm_wide(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x32xbf16>
  %b = tile.alloc : !tile.smem<32x384xbf16>
  %acc = tile.splat %zero : !tile.reg<64x384xf32>
  %s = tile.gemm %a, %b, %acc : !tile.smem<64x32xbf16>, !tile.smem<32x384xbf16>, !tile.reg<64x384xf32>
  tile.store %s, %out[%c0, %c0] : !tile.reg<64x384xf32>, memref<?x?xf32>
}

// The warpgroup id is broadcast from lane 0, so ptxas sees it warp-uniform.
// An mma tile written to a 64-byte-swizzled tile: the runs of the next
// 16-byte chunks are the thread's swizzled address XOR a constant.
// CHECK-LABEL: gpu.func @mma_write
// CHECK: gpu.shuffle  idx {{.*}}, %c0_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: arith.xori {{.*}}, %c16_i32{{.*}} : i32
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: arith.xori {{.*}}, %c32_i32{{.*}} : i32
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: arith.xori {{.*}}, %c48_i32{{.*}} : i32
tile.kernel @mma_write(%out: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %wg = tile.warpgroup_id
  %p = tile.alloc : !tile.smem<2x64x32xbf16>
  %pw = tile.slice %p[%wg, %c0, %c0] : !tile.smem<2x64x32xbf16> to !tile.smem<64x32xbf16>
  %x = tile.splat %one : !tile.reg<64x32xf32, #tile.mma>
  tile.write %x, %pw : !tile.reg<64x32xf32, #tile.mma>, !tile.smem<64x32xbf16>
}

// tile.any: each thread ORs its elements, bar.red.or combines the CTA.
// CHECK-LABEL: gpu.func @any_valid
// CHECK: %[[MINE:.*]] = vector.reduction <or>, %{{.*}} : vector<{{[0-9]+}}xi1> into i1
// CHECK: %[[P:.*]] = arith.extui %[[MINE]] : i1 to i32
// CHECK: %[[ALL:.*]] = nvvm.barrier #nvvm.reduction<or> %[[P]] -> i32
// CHECK: arith.cmpi ne, %[[ALL]], %{{.*}} : i32
tile.kernel @any_valid(%idx: memref<?xi32>, %out: memref<?xi32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : i32
  %z = arith.constant 0 : i32
  %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %ok = tile.map %rows : !tile.reg<64xi32> -> !tile.reg<64xi1> {
  ^bb0(%r: i32):
    %v = arith.cmpi sge, %r, %z : i32
    tile.yield %v : i1
  }
  %live = tile.any %ok : !tile.reg<64xi1>
  scf.if %live {
    tile.store %rows, %out[%c0] : !tile.reg<64xi32>, memref<?xi32>
  }
}

// A staged scatter: wait until the warpgroup's earlier bulk reductions have
// read the staging tile, write it, fence for the async proxy, then the owner
// of each row index has the TMA add its 256-byte row; the kernel waits for
// the bulk groups before it returns.
// CHECK-LABEL: gpu.func @staged_scatter
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: scf.if
// CHECK:   llvm.inline_asm has_side_effects {{.*}}"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], $2;", "l,r,r"
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NEXT: gpu.return
tile.kernel @staged_scatter(%ws: memref<?x?xf32>, %idx: memref<?xi32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : i32
  %zero = arith.constant 0.0 : f32
  %wg = tile.warpgroup_id
  %all = tile.alloc : !tile.smem<2x64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  %mine = tile.slice %all[%wg, %c0, %c0] : !tile.smem<2x64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>> to !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  %v = tile.gemm %a, %a, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.scatter_add_rows %v, %ws[%rows, %c0] staging %mine : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>, !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
}

// Staged into an interleaved destination, each pair is written to the
// staging row at its stored column; the rows are then added whole.
// CHECK-LABEL: gpu.func @staged_interleaved
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: arith.andi %{{.*}}, %c-16_i32
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
tile.kernel @staged_interleaved(%ws: memref<?x?xf32>, %idx: memref<?xi32>, %n: index) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : i32
  %zero = arith.constant 0.0 : f32
  %stage = tile.alloc : !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  %v = tile.gemm %a, %a, %acc {transpose_b} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.scatter_add_rows %v, %ws[%rows, %c0] staging %stage {interleaved} : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>, !tile.smem<64x64xf32, #tile.shared<swizzle = 0, pitch = 272, block_stride = 17408>>
}

// An iota is the thread's base coordinate plus each element's offset.
// A gather from a global tensor with a pad reads each element under its
// position's check; from a shared table without a pad, at linear offsets
// (4 bytes a position), unguarded.
// CHECK-LABEL: gpu.func @gathers
// CHECK: %[[BASE:.*]] = vector.broadcast %{{.*}} : i32 to vector<8xi32>
// CHECK: arith.addi %[[BASE]], %{{.*}} : vector<8xi32>
// CHECK: %[[OK:.*]] = arith.cmpi sge, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: scf.if %[[OK]] -> (f32)
// CHECK:   llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK: else
// CHECK:   scf.yield %{{.*}} : f32
// CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %c4_i32{{.*}} : i32
// CHECK-NOT: scf.if
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
tile.kernel @gathers(%m: memref<?xf32>, %out: memref<?xf32>, %out2: memref<?xi32>) warpgroups(1) {
  %inf = arith.constant 0x7F800000 : f32
  %i = tile.iota along 1 : !tile.reg<1x1024xi32>
  %g = tile.gather %m[%i] pad %inf : memref<?xf32>, !tile.reg<1x1024xi32>, f32 -> !tile.reg<1x1024xf32>
  %t = tile.alloc : !tile.smem<1x1024xi32>
  %h = tile.gather %t[%i] : !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32> -> !tile.reg<1x1024xi32>
  tile.scatter %g, %out[%i] : !tile.reg<1x1024xf32>, memref<?xf32>, !tile.reg<1x1024xi32>
  tile.scatter %h, %out2[%i] : !tile.reg<1x1024xi32>, memref<?xi32>, !tile.reg<1x1024xi32>
}

// Atomics on shared memory return the old value of each element (0 where
// the position is negative); a scatter of a sliced tile is written by the
// thread that owns each element.
// CHECK-LABEL: gpu.func @atomics_and_owned_scatter
// CHECK: scf.if %{{.*}} -> (i32)
// CHECK:   llvm.atomicrmw _or %{{.*}}, %{{.*}} monotonic : !llvm.ptr<3>, i32
// CHECK: llvm.atomicrmw add
// CHECK: %[[OWNER:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[DO:.*]] = arith.andi %[[OWNER]], %{{.*}} : i1
// CHECK: scf.if %[[DO]]
// CHECK:   llvm.store {{.*}} : i32, !llvm.ptr<1>
tile.kernel @atomics_and_owned_scatter(%out: memref<?xi32>) warpgroups(1) {
  %i = tile.iota along 1 : !tile.reg<1x1024xi32>
  %t = tile.alloc : !tile.smem<1x1024xi32>
  %o = tile.atomic_rmw or %i, %t[%i] : !tile.reg<1x1024xi32>, !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32>
  %o2 = tile.atomic_rmw add %o, %t[%i] : !tile.reg<1x1024xi32>, !tile.smem<1x1024xi32>, !tile.reg<1x1024xi32>
  tile.scatter %o2, %out[%i] : !tile.reg<1x1024xi32>, memref<?xi32>, !tile.reg<1x1024xi32>
  %c = tile.iota along 0 : !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
  tile.scatter %c, %out[%c] : !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>, memref<?xi32>, !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
}

// A scan over rows of 128 lanes: in-thread sums, shuffles up the lanes of
// each warp, each warp's total from lane 31 to the scratch between two
// warpgroup barriers, then the totals of the warps to the left.
// CHECK-LABEL: gpu.func @scan_rows
// CHECK-COUNT-5: gpu.shuffle  up {{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  up {{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  idx {{.*}}, %c31_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: scf.if
// CHECK:   llvm.store {{.*}} : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: arith.cmpi ult
tile.kernel @scan_rows(%out: memref<?xi32>) warpgroups(1) {
  %i = tile.iota along 1 : !tile.reg<1x512xi32>
  %s = tile.scan add %i : !tile.reg<1x512xi32>
  tile.scatter %s, %out[%i] : !tile.reg<1x512xi32>, memref<?xi32>, !tile.reg<1x512xi32>
}

// A transposed row store: column j of the tile to row rows[j], element by
// element, under the row's validity; tables of per-column values are read
// as 1-D tiles, two columns at once; a per-warpgroup gather of rows is not
// split between the warpgroups.
// CHECK-LABEL: gpu.func @columns
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xi32>
// CHECK-NOT: arith.cmpi eq
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: arith.cmpi eq
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: arith.cmpi eq
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[OK:.*]] = arith.cmpi sge
// CHECK: scf.if %[[OK]]
// CHECK:   llvm.store {{.*}} : f32, !llvm.ptr<1>
tile.kernel @columns(%q: memref<?x64xbf16>, %dq: memref<?x64xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : !tile.smem<1x16xi32>
  %rows = tile.read %t : !tile.smem<1x16xi32> -> !tile.reg<16xi32, #tile.slice<dim = 0, parent = #tile.mma>>
  %b = tile.alloc : !tile.smem<32x64xbf16>
  %t2 = tile.alloc : !tile.smem<1x32xi32>
  %r2 = tile.read %t2 : !tile.smem<1x32xi32> -> !tile.reg<32xi32>
  %g = tile.gather_rows %q[%r2, %c0] into %b {per_warpgroup} : memref<?x64xbf16>, !tile.reg<32xi32>, !tile.smem<32x64xbf16>
  tile.wait %g
  %one = arith.constant 1.0 : f32
  %v = tile.splat %one : !tile.reg<64x16xf32, #tile.mma>
  tile.store_rows %v, %dq[%rows, %c0] {transpose} : !tile.reg<64x16xf32, #tile.mma>, memref<?x64xf32>, !tile.reg<16xi32, #tile.slice<dim = 0, parent = #tile.mma>>
}
// -----
// The conversion's own rules, once layouts and offsets are in place.
tile.kernel @uncoalesced_copy(%x: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : !tile.smem<3x64xbf16>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{cannot spread}}
  %t = tile.async_copy %x[%c0, %c0] into %a : memref<?x64xbf16>, !tile.smem<3x64xbf16>
}
// -----
tile.kernel @async_write_of_2_byte_runs(%x: bf16, %r: index) warpgroups(1) cluster(2) {
  %c0 = arith.constant 0 : index
  %v = tile.splat %x : !tile.reg<64x64xbf16, #tile.blocked<vector = 1, lanes = 32>>
  %t = tile.alloc : !tile.smem<64x64xbf16>
  %bars = tile.alloc : !tile.smem<1x1xi64>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{writes asynchronously in runs of 4, 8 or 16 bytes (st.async); '!tile.reg<64x64xbf16, #tile.blocked<vector = 1, lanes = 32>>' gives each thread runs of 2}}
  tile.write %v, %t cta %r on %bars[%c0] : !tile.reg<64x64xbf16, #tile.blocked<vector = 1, lanes = 32>>, !tile.smem<64x64xbf16>, !tile.smem<1x1xi64>
}
// -----
tile.kernel @atomic_on_replicas(%m: memref<?xi32>) warpgroups(1) {
  %p = tile.iota along 0 : !tile.reg<64xi32>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{needs a layout that holds each element in one thread}}
  %o = tile.atomic_rmw add %p, %m[%p] : !tile.reg<64xi32>, memref<?xi32>, !tile.reg<64xi32>
}
// -----
tile.kernel @gemm_unswizzled(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16, #tile.shared<swizzle = 0, pitch = 128, block_stride = 8192>>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{needs a swizzled shared layout}}
  %r = tile.gemm %a, %a, %acc {transpose_b} : !tile.smem<64x64xbf16, #tile.shared<swizzle = 0, pitch = 128, block_stride = 8192>>, !tile.smem<64x64xbf16, #tile.shared<swizzle = 0, pitch = 128, block_stride = 8192>>, !tile.reg<64x64xf32>
  tile.store %r, %out[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>
}
// -----
tile.kernel @reduce_across_warps(%out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %x = tile.splat %one : !tile.reg<2x256xf32, #tile.blocked<vector = 4, lanes = 64>>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{reduction across warps is not supported}}
  %r = tile.reduce add %x along 1 : !tile.reg<2x256xf32, #tile.blocked<vector = 4, lanes = 64>> -> !tile.reg<2xf32>
  tile.store %r, %out[%c0] : !tile.reg<2xf32>, memref<?xf32>
}
// -----

// A from registers: per k16 step the thread's next 8 bf16 of the #tile.mma
// tile, packed in pairs into 4 b32, go to an inline wgmma (the NVVM op takes
// A from shared memory only): 32 accumulators out ($0-$31) tied to 32 in,
// A ($64-$67), B's descriptor ($68), the scale-d flag ($69, 0 on the first
// step of a zero accumulator); B transposed (K-major) gives imm-trans-b 0.
// CHECK-LABEL: gpu.func @register_a
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 0;\0A}"
// CHECK-SAME: "=f,{{.*}},=f,0,1,{{.*}},31,r,r,r,r,l,r"
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
tile.kernel @register_a(%out: memref<?x?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tile.alloc : !tile.smem<64x64xbf16>
  %a = tile.splat %zero : !tile.reg<64x64xf32>
  %ab = tile.map %a : !tile.reg<64x64xf32> -> !tile.reg<64x64xbf16> {
  ^bb0(%v: f32):
    %t = arith.truncf %v : f32 to bf16
    tile.yield %t : bf16
  }
  %r = tile.gemm %ab, %b, %a {transpose_b} : !tile.reg<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  tile.store %r, %out[%c0, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>
}


// -----

// Warp specialization: each region under `if (warpgroup == w)`, first
// setting its register budget down from the even share (256 each for two
// warpgroups); mbarriers initialized by thread 0 then fenced and published
// by a CTA barrier (NVVM ops); parity waits with NVVM's try_wait loop and
// a suspend hint; arrivals in PTX on 32-bit shared addresses; a barrier of warpgroup 1 alone is named barrier 2 of 128
// threads, one of warpgroups 0 and 2 of three the first id after theirs (4).
// CHECK-LABEL: gpu.func @partitions
// CHECK: scf.if
// CHECK:   nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[W0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK: scf.if %[[W0]]
// CHECK:   "setmaxnreg.dec.sync.aligned.u32 40;"
// CHECK:   nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK:   "fence.proxy.async.shared::cta;"
// CHECK:   "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r"
// CHECK:   "{{.*}}@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], $2;{{.*}}@!p mbarrier.arrive.shared::cta.b64 _, [$1];{{.*}}", "r,r,r"
// CHECK: %[[W1:.*]] = arith.cmpi eq, %{{.*}}, %c1_i32
// CHECK: scf.if %[[W1]]
// CHECK:   "setmaxnreg.dec.sync.aligned.u32 232;"
// CHECK:   nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c128_i32
// CHECK:   "fence.proxy.async.shared::cta;"
// CHECK-NEXT: "mbarrier.arrive.shared::cta.b64 _, [$0];", "r"
// A wait before writes only and an arrival after reads only hand nothing
// between the proxies: no fence.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: fence.proxy
// CHECK:     "mbarrier.arrive.shared::cta.b64 _, [$0];", "r"
// CHECK-NOT: fence.proxy
// CHECK: gpu.return
tile.kernel @partitions(%n: index, %p: i32) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %bars, %n : !tile.smem<1x2xi64>
  tile.warp_specialize registers([40, 232]) {
    tile.mbarrier_wait %bars[%c0], %p : !tile.smem<1x2xi64>
    tile.mbarrier_arrive %bars[%c1] {after_copies} : !tile.smem<1x2xi64>
    tile.mbarrier_arrive %bars[%c1] expect_tx %n : !tile.smem<1x2xi64>
  }, {
    tile.barrier warpgroups([1])
    tile.mbarrier_arrive %bars[%c0] : !tile.smem<1x2xi64>
    tile.mbarrier_wait %bars[%c1], %p {for_writes} : !tile.smem<1x2xi64>
    tile.mbarrier_arrive %bars[%c0] {reads_only} : !tile.smem<1x2xi64>
  }
}

// CHECK-LABEL: gpu.func @pair_barrier
// CHECK: "setmaxnreg.inc.sync.aligned.u32 232;"
// CHECK: nvvm.barrier id = %c4_i32{{.*}} number_of_threads = %c256_i32
// CHECK: "setmaxnreg.dec.sync.aligned.u32 24;"
// CHECK: nvvm.barrier id = %c4_i32{{.*}} number_of_threads = %c256_i32
tile.kernel @pair_barrier() warpgroups(3) {
  tile.warp_specialize registers([232, 24, 240]) {
    tile.barrier warpgroups([0, 2])
  }, {
  }, {
    tile.barrier warpgroups([0, 2])
  }
}


// A partition of several warpgroups runs under `first <= warpgroup < first
// + count`; a vote inside it combines that partition's threads only, on a
// named barrier (inline PTX: NVVM reduces on barrier 0 alone): warpgroups
// 1 and 2 get the first id after the single ones (4), 256 threads.
// CHECK-LABEL: gpu.func @partition_vote
// CHECK: %[[W0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK: scf.if %[[W0]]
// CHECK:   "setmaxnreg.dec.sync.aligned.u32 40;"
// CHECK: %[[REL:.*]] = arith.subi %{{.*}}, %c1_i32
// CHECK: %[[W12:.*]] = arith.cmpi ult, %[[REL]], %c2_i32
// CHECK: scf.if %[[W12]]
// CHECK:   "setmaxnreg.inc.sync.aligned.u32 232;"
// CHECK:   vector.reduction <or>
// CHECK:   llvm.inline_asm has_side_effects {{.*}}bar.red.or.pred p, 4, 256, q;{{.*}}"=r,r"
tile.kernel @partition_vote(%idx: memref<?xi32>, %out: memref<?xi32>, %n: index) warpgroups(3) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : i32
  %z = arith.constant 0 : i32
  tile.warp_specialize warpgroups([1, 2]) registers([40, 232]) {
  }, {
    %rows = tile.load %idx[%c0] bounds [%n] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
    %ok = tile.map %rows : !tile.reg<64xi32> -> !tile.reg<64xi1> {
    ^bb0(%r: i32):
      %v = arith.cmpi sge, %r, %z : i32
      tile.yield %v : i1
    }
    %live = tile.any %ok : !tile.reg<64xi1>
    scf.if %live {
      tile.store %rows, %out[%c0] : !tile.reg<64xi32>, memref<?xi32>
    }
  }
}

// The progress clock: one relaxed reduction per warpgroup (its first
// thread, from %tid.x read in place by an asm, which LLVM does not hoist
// out of a branch); a wait reads with volatile loads, votes across the warp
// and sleeps between reads, for at most `polls` more reads.
// CHECK-LABEL: gpu.func @counters
// CHECK: gpu.grid_dim  x
// CHECK: %[[TID:.*]] = llvm.inline_asm "mov.u32 $0, %tid.x;", "=r"  : () -> i32
// CHECK: %[[IN_WG:.*]] = arith.remui %[[TID]], %c128_i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[IN_WG]], %c0_i32
// CHECK: scf.if %[[FIRST]]
// CHECK:   llvm.inline_asm has_side_effects {{.*}}"red.relaxed.gpu.global.add.s32 [$0], $1;", "l,r"
// CHECK: llvm.load volatile %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: nvvm.vote.sync  any
// CHECK: scf.while
// CHECK:   arith.cmpi slt
// CHECK:   scf.condition
// CHECK:   nvvm.nanosleep
// CHECK:   llvm.load volatile
// CHECK:   nvvm.vote.sync  any
tile.kernel @counters(%clock: memref<?x?xi32>, %out: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %polls = arith.constant 8 : i32
  %n = tile.grid_dim x
  tile.counter_add %clock[%c0, %n], %one : memref<?x?xi32>
  %reached = tile.counter_wait %clock[%c0, %c0], %one, %polls : memref<?x?xi32>
  scf.if %reached {
    tile.counter_add %clock[%c0, %c0], %one : memref<?x?xi32>
  }
}

// -----

// A cluster kernel: its shape on the gpu.func and in the manifest; the rank
// from %cluster_ctarank; mbarriers published to the cluster (a peer may
// arrive remotely); a write into the peer's tile through the mapa'd pointer
// (address space 7, st.shared::cluster); a remote arrival that releases at
// cluster scope; waits that acquire at it; a cluster barrier before return.
// CHECK-LABEL: module attributes
// CHECK-SAME: cluster = 2 : i64, grid = [], name = "pair"
// CHECK: gpu.func @pair
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<7>
// CHECK: "fence.proxy.async.shared::cluster;"
// CHECK: "{{.*}}mapa.shared::cluster.u32 remote, $0, $1;{{.*}}mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];{{.*}}", "r,r"
// CHECK: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// An asynchronous write: each 16-byte run as four words, completing on the
// peer's barrier, whose address is mapped once.
// CHECK: %[[BAR:.*]] = llvm.inline_asm "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r"
// CHECK: vector.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [$0], {$1, $2, $3, $4}, [$5];", "r,r,r,r,r,r" {{.*}}, %[[BAR]]
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
tile.kernel @pair(%p: i32, %x: f32) warpgroups(1) cluster(2) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %rank = tile.cluster_rank
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %inbox = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %bars, %c128 : !tile.smem<1x2xi64>
  tile.write %v, %inbox cta %rank : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
  tile.mbarrier_arrive %bars[%c0] cta %rank : !tile.smem<1x2xi64>
  tile.mbarrier_wait %bars[%c0], %p : !tile.smem<1x2xi64>
  tile.write %v, %inbox cta %rank on %bars[%c0] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
}

// -----

// A layout conversion: the warpgroup's barrier, its runs stored into its
// scratch region (offset + warpgroup x 16 KiB), the barrier again, and its
// runs in the new layout loaded back; the same layout: nothing.
// CHECK-LABEL: gpu.func @convert
// CHECK: %[[WG:[^,]*]], %{{.*}} = gpu.shuffle idx
// CHECK: arith.muli %[[WG]], %c16384_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
tile.kernel @convert(%src: memref<?x64xf32>, %out: memref<?x64xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %x = tile.load %src[%c0, %c0] : memref<?x64xf32> -> !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  %m = tile.convert_layout %x : !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>> -> !tile.reg<64x64xf32, #tile.mma>
  %same = tile.convert_layout %m : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32, #tile.mma>
  tile.store %same, %out[%c0, %c0] : !tile.reg<64x64xf32, #tile.mma>, memref<?x64xf32>
}
