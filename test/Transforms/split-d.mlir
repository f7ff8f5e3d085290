// RUN: sparse-mla-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile.kernel(tile-split-d{overlap=0}))' | FileCheck %s
// RUN: sparse-mla-opt %S/Inputs/split-d-interleaved-chunk.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile.kernel(tile-split-d{chunk=24}))'
// RUN: sparse-mla-opt %S/Inputs/split-d-overlap.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile.kernel(tile-split-d))' | FileCheck %S/Inputs/split-d-overlap.mlir --check-prefix=OVERLAP
// RUN: sparse-mla-opt %S/Inputs/split-d-bad-chunk.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile.kernel(tile-split-d{chunk=12}))'

// The dKV shape in small: dkv += dS^T Q over 192 columns and dkv[:, :128] +=
// P^T dO. Pieces 0 and 1 get all four GEMMs and one scatter; piece 2 only
// dS^T Q. With two warpgroups, the loop over pieces [lo, hi) starts at
// lo + (wg - lo) mod 2 and steps by 2. The scatters' columns are two
// constants of one value (as tile-split-partitions leaves them): one column.

// CHECK-LABEL: tile.kernel @joined
// CHECK-NOT: !tile.reg<64x192xf32>
// CHECK: %[[SQ:.*]] = tile.alloc : !tile.smem<32x192xbf16>
// CHECK: %[[SDO:.*]] = tile.alloc : !tile.smem<32x128xbf16>
// CHECK: %[[ROWS:.*]] = tile.load
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[WG:.*]] = tile.warpgroup_id
// CHECK: %[[LO:.*]] = arith.constant 0 : index
// CHECK: %[[R:.*]] = arith.remui %[[WG]], %[[C2]]
// CHECK: %[[START:.*]] = arith.addi %[[LO]], %[[R]]
// CHECK: %[[HI:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[I:.*]] = %[[START]] to %[[HI]] step %[[C2]] {
// CHECK:   %[[OFF:.*]] = arith.muli %[[I]], %[[C64]]
// CHECK:   %[[Q0:.*]] = tile.slice %[[SQ]][%c0, %[[OFF]]] : !tile.smem<32x192xbf16> to !tile.smem<16x64xbf16>
// CHECK:   %[[Q1:.*]] = tile.slice %[[SQ]][%c16, %[[OFF]]] : !tile.smem<32x192xbf16> to !tile.smem<16x64xbf16>
// CHECK:   %[[O0:.*]] = tile.slice %[[SDO]][%c0, %[[OFF]]] : !tile.smem<32x128xbf16> to !tile.smem<16x64xbf16>
// CHECK:   %[[O1:.*]] = tile.slice %[[SDO]][%c16, %[[OFF]]] : !tile.smem<32x128xbf16> to !tile.smem<16x64xbf16>
// CHECK:   %[[Z:.*]] = tile.splat %{{.*}} : !tile.reg<64x64xf32>
// CHECK:   %[[A0:.*]] = tile.gemm %[[DS0:.*]], %[[Q0]], %[[Z]]
// CHECK:   %[[A1:.*]] = tile.gemm %[[DS1:.*]], %[[Q1]], %[[A0]]
// CHECK:   %[[A2:.*]] = tile.gemm %[[DS0]], %[[O0]], %[[A1]]
// CHECK:   %[[A3:.*]] = tile.gemm %[[DS1]], %[[O1]], %[[A2]] : !tile.smem<64x16xbf16>, !tile.smem<16x64xbf16>, !tile.reg<64x64xf32>
// CHECK:   tile.scatter_add_rows %[[A3]], %{{.*}}[%[[ROWS]], %[[OFF]]]
// CHECK-NEXT: }
// CHECK: %[[LO2:.*]] = arith.constant 2 : index
// CHECK: %[[R2:.*]] = arith.remui %[[WG]], %[[C2]]
// CHECK: %[[START2:.*]] = arith.addi %[[LO2]], %[[R2]]
// CHECK: scf.for %{{.*}} = %[[START2]] to %c3 step %[[C2]] {
// CHECK-COUNT-2: tile.gemm
// CHECK-NEXT: tile.scatter_add_rows
// CHECK-NEXT: }
// CHECK-NOT: tile.gemm
// CHECK-NOT: tile.scatter_add_rows
tile.kernel @joined(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<32x192xbf16>
  %sdo = tile.alloc : !tile.smem<32x128xbf16>
  %ds0 = tile.alloc : !tile.smem<64x16xbf16>
  %ds1 = tile.alloc : !tile.smem<64x16xbf16>
  %q0 = tile.slice %sq[%c0, %c0] : !tile.smem<32x192xbf16> to !tile.smem<16x192xbf16>
  %q1 = tile.slice %sq[%c16, %c0] : !tile.smem<32x192xbf16> to !tile.smem<16x192xbf16>
  %do0 = tile.slice %sdo[%c0, %c0] : !tile.smem<32x128xbf16> to !tile.smem<16x128xbf16>
  %do1 = tile.slice %sdo[%c16, %c0] : !tile.smem<32x128xbf16> to !tile.smem<16x128xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x192xf32>
  %zv = tile.splat %zero : !tile.reg<64x128xf32>
  %a0 = tile.gemm %ds0, %q0, %z : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
  %a1 = tile.gemm %ds1, %q1, %a0 : !tile.smem<64x16xbf16>, !tile.smem<16x192xbf16>, !tile.reg<64x192xf32>
  tile.scatter_add_rows %a1, %dkv[%rows, %c0] : !tile.reg<64x192xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  %b0 = tile.gemm %ds0, %do0, %zv : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  %b1 = tile.gemm %ds1, %do1, %b0 : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  %col = arith.constant 0 : index
  tile.scatter_add_rows %b1, %dkv[%rows, %col] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// Not joined: the second chain starts from 1.0, and a barrier separates the
// third from the second. Each chain gets its own loop and scatter; one
// warpgroup takes every piece. B transposed is cut along its rows. A chain
// no wider than a piece is left alone.

// CHECK-LABEL: tile.kernel @separate
// CHECK: %[[ONE:.*]] = arith.constant 1.0
// CHECK: %[[BT:.*]] = tile.alloc : !tile.smem<128x16xbf16>
// CHECK: %[[B:.*]] = tile.alloc : !tile.smem<16x128xbf16>
// CHECK: %[[LO:.*]] = arith.constant 0 : index
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %c2 step %c1 {
// CHECK:   %[[OFF:.*]] = arith.muli %[[I]], %c64
// CHECK:   %[[BP:.*]] = tile.slice %[[BT]][%[[OFF]], %{{.*}}] : !tile.smem<128x16xbf16> to !tile.smem<64x16xbf16>
// CHECK:   tile.gemm %{{.*}}, %[[BP]], %{{.*}} {transpose_b} : !tile.smem<64x16xbf16>, !tile.smem<64x16xbf16>, !tile.reg<64x64xf32>
// CHECK:   tile.scatter_add_rows
// CHECK-NEXT: }
// CHECK: scf.for
// CHECK:   tile.slice %[[B]][%{{.*}}, %{{.*}}] : !tile.smem<16x128xbf16> to !tile.smem<16x64xbf16>
// CHECK:   tile.splat %[[ONE]] : !tile.reg<64x64xf32>
// CHECK:   tile.scatter_add_rows
// CHECK: tile.barrier
// CHECK: scf.for
// CHECK:   tile.scatter_add_rows
// CHECK: tile.gemm {{.*}} : !tile.smem<64x16xbf16>, !tile.smem<16x64xbf16>, !tile.reg<64x64xf32>
// CHECK-NEXT: tile.scatter_add_rows {{.*}} : !tile.reg<64x64xf32>
tile.kernel @separate(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m1 = arith.constant -1 : i32
  %bt = tile.alloc : !tile.smem<128x16xbf16>
  %b = tile.alloc : !tile.smem<16x128xbf16>
  %nb = tile.alloc : !tile.smem<16x64xbf16>
  %a = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x128xf32>
  %o = tile.splat %one : !tile.reg<64x128xf32>
  %z64 = tile.splat %zero : !tile.reg<64x64xf32>
  %x = tile.gemm %a, %bt, %z {transpose_b} : !tile.smem<64x16xbf16>, !tile.smem<128x16xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %x, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  %y = tile.gemm %a, %b, %o : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %y, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  tile.barrier
  %w = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %w, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  %n = tile.gemm %a, %nb, %z64 : !tile.smem<64x16xbf16>, !tile.smem<16x64xbf16>, !tile.reg<64x64xf32>
  tile.scatter_add_rows %n, %dkv[%rows, %c0] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// The pieces are emitted at the scatter, so a chain whose GEMM would move
// past a write of shared memory (here of its own B operand) is left as written.

// CHECK-LABEL: tile.kernel @pinned
// CHECK-NOT: scf.for
// CHECK: tile.gemm {{.*}} : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
// CHECK-NEXT: tile.write
// CHECK-NEXT: tile.scatter_add_rows {{.*}} : !tile.reg<64x128xf32>
tile.kernel @pinned(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %b = tile.alloc : !tile.smem<16x128xbf16>
  %a = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x128xf32>
  %zb = tile.splat %zero : !tile.reg<16x128xf32>
  %x = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.write %zb, %b : !tile.reg<16x128xf32>, !tile.smem<16x128xbf16>
  tile.scatter_add_rows %x, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

tile.kernel @ragged(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %b = tile.alloc : !tile.smem<16x96xbf16>
  %a = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x96xf32>
  %x = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x96xbf16>, !tile.reg<64x96xf32>
  // expected-error @+1 {{tile-split-d: the columns of the chains into this destination must be multiples of the chunk (64)}}
  tile.scatter_add_rows %x, %dkv[%rows, %c0] : !tile.reg<64x96xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// The passes after tile-specialize need the sizes.
// expected-error @+1 {{has shape parameters; run tile-specialize first}}
tile.kernel @generic(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 64}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// An interleaved scatter keeps its column order in every piece, and is not
// joined with one in the natural order.

// CHECK-LABEL: tile.kernel @interleaved
// CHECK: scf.for
// CHECK:   tile.scatter_add_rows {{.*}} {interleaved} : !tile.reg<64x64xf32>
// CHECK-NEXT: }
// CHECK: scf.for
// CHECK:   tile.scatter_add_rows
// CHECK-NOT: interleaved
// CHECK-SAME: !tile.reg<64x64xf32>
tile.kernel @interleaved(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %b = tile.alloc : !tile.smem<16x128xbf16>
  %a = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %z = tile.splat %zero : !tile.reg<64x128xf32>
  %x = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %x, %dkv[%rows, %c0] {interleaved} : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  %y = tile.gemm %a, %b, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
  tile.scatter_add_rows %y, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
}

// -----

// Inside tile.warp_specialize a chain is split over the warpgroups of its
// partition: warpgroup 0 alone takes every piece in turn (no warpgroup
// index, step 1); the partition of warpgroups 1 and 2 alternates them,
// counting from its first warpgroup.
// CHECK-LABEL: tile.kernel @in_partitions
// CHECK: tile.warp_specialize warpgroups([1, 2]) registers([40, 232]) {
// CHECK-NOT: tile.warpgroup_id
// CHECK:   %[[C1:.*]] = arith.constant 1 : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %[[C1]] {
// CHECK:     tile.gemm
// CHECK-NEXT: tile.scatter_add_rows
// CHECK: }, {
// CHECK:   %[[WG:.*]] = tile.warpgroup_id
// CHECK:   %[[REL:.*]] = arith.subi %[[WG]], %c1{{.*}} : index
// CHECK:   %[[R:.*]] = arith.remui %[[REL]], %[[C2:.*]] : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C2]] {
tile.kernel @in_partitions(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(3) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x128xbf16>
  %ds = tile.alloc : !tile.smem<64x16xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.warp_specialize warpgroups([1, 2]) registers([40, 232]) {
    %z = tile.splat %zero : !tile.reg<64x128xf32>
    %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
    tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  }, {
    %z = tile.splat %zero : !tile.reg<64x128xf32>
    %a = tile.gemm %ds, %sq, %z : !tile.smem<64x16xbf16>, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
    tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  }
}

// -----

// A channel exit among a chain's ops (written right after the last GEMM
// that reads the slot) moves below the pieces, which read the slot there:
// a release may always come later.
// CHECK-LABEL: tile.kernel @exit_below_pieces
// CHECK:     }, {
// CHECK:       %[[G:.*]] = tile.get_enter
// CHECK:       scf.for
// CHECK:         tile.gemm %[[G]]
// CHECK:         tile.scatter_add_rows
// CHECK:       }
// CHECK-NEXT:  tile.get_exit
!buf = !tile.smem<64x16xbf16>
!chan = !tile.channel<!buf>
tile.kernel @exit_below_pieces(%dkv: memref<?x?xf32>, %idx: memref<?xi32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : bf16
  %m1 = arith.constant -1 : i32
  %sq = tile.alloc : !tile.smem<16x128xbf16>
  %rows = tile.load %idx[%c0] bounds [%c0] pad %m1 : memref<?xi32>, i32 -> !tile.reg<64xi32>
  %ch = tile.channel : !chan
  tile.warp_specialize registers([232, 232]) {
    %v = tile.splat %one : !tile.reg<64x16xbf16>
    %in = tile.put_enter %ch : !chan
    tile.write %v, %in : !tile.reg<64x16xbf16>, !buf
    tile.put_exit %ch : !chan
  }, {
    %ds = tile.get_enter %ch : !chan
    %z = tile.splat %zero : !tile.reg<64x128xf32>
    %a = tile.gemm %ds, %sq, %z : !buf, !tile.smem<16x128xbf16>, !tile.reg<64x128xf32>
    tile.get_exit %ch : !chan
    tile.scatter_add_rows %a, %dkv[%rows, %c0] : !tile.reg<64x128xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  }
}
