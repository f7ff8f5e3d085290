// RUN: sparse-mla-opt %s --split-input-file --verify-diagnostics --tile-specialize | FileCheck %s
// One kernel per variant, named by its bindings, with the `{name}`
// dimensions and the tile.param values replaced; the generic kernel is gone.

// CHECK-NOT: @scores(
// CHECK-LABEL: tile.kernel @scores_heads16_keys64
// CHECK-SAME: attributes {tile.params = {heads = 16 : i64, keys = 64 : i64}}
// CHECK:   %[[H:.*]] = arith.constant 16 : index
// CHECK:   arith.muli %{{.*}}, %[[H]] : index
// CHECK:   tile.alloc : !tile.smem<64x576xbf16>
// CHECK:   tile.alloc : !tile.smem<2x16x576xbf16>
// CHECK:   tile.slice %{{.*}} : !tile.smem<2x16x576xbf16> to !tile.smem<16x576xbf16>
// CHECK:   tile.gemm {{.*}} : !tile.smem<64x576xbf16>, !tile.smem<16x576xbf16>, !tile.reg<64x16xf32>
// CHECK:   tile.map {{.*}} : !tile.reg<64x16xf32> -> !tile.reg<64x16xf32>
// CHECK:   ^bb0(%{{.*}}: f32):
// CHECK-LABEL: tile.kernel @scores_heads32_keys128
// CHECK:   arith.constant 32 : index
// CHECK:   tile.alloc : !tile.smem<128x576xbf16>
// CHECK:   tile.gemm {{.*}} : !tile.smem<128x576xbf16>, !tile.smem<32x576xbf16>, !tile.reg<128x32xf32>
tile.kernel @scores(%out: memref<?x?xf32>) warpgroups(1)
    variants([{heads = 16, keys = 64}, {heads = 32, keys = 128}]) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %heads = tile.param "heads" : index
  %b = tile.block_id x
  %h0 = arith.muli %b, %heads : index
  %k = tile.alloc : !tile.smem<{keys}x576xbf16>
  %q = tile.alloc : !tile.smem<2x{heads}x576xbf16>
  %q1 = tile.slice %q[%c1, %c0, %c0] : !tile.smem<2x{heads}x576xbf16> to !tile.smem<{heads}x576xbf16>
  %acc = tile.splat %zero : !tile.reg<{keys}x{heads}xf32>
  %s = tile.gemm %k, %q1, %acc {transpose_b} : !tile.smem<{keys}x576xbf16>, !tile.smem<{heads}x576xbf16>, !tile.reg<{keys}x{heads}xf32>
  %e = tile.map %s : !tile.reg<{keys}x{heads}xf32> -> !tile.reg<{keys}x{heads}xf32> {
  ^bb0(%x: f32):
    %y = math.exp2 %x : f32
    tile.yield %y : f32
  }
  tile.store %e, %out[%c0, %h0] : !tile.reg<{keys}x{heads}xf32>, memref<?x?xf32>
}

// -----

// The generic kernel verifies without its sizes; a variant whose sizes break
// a rule is reported with the variant.
// expected-error @+1 {{variant #1 {n = 12 : i64} does not give a valid kernel}}
tile.kernel @narrow(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16}, {n = 12}]) {
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x64xbf16>
  %b = tile.alloc : !tile.smem<64x{n}xbf16>
  %acc = tile.splat %zero : !tile.reg<64x{n}xf32>
  // expected-error @+1 {{N (12) must be a multiple of 8}}
  %s = tile.gemm %a, %b, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x{n}xbf16>, !tile.reg<64x{n}xf32>
}

// -----

tile.kernel @taken_n16(%out: memref<?x?xf32>) warpgroups(1) {
}

// expected-error @+1 {{variant #0 would be named @taken_n16, which already exists}}
tile.kernel @taken(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// A variant may bind sizes no tile can have (found by tools/fuzz_opt.py: the
// passes after it enumerated billions of elements). Each bound type is
// checked; the error names the variant.
// expected-error @+2 {{tile of more than 65536 elements}}
// expected-error @+1 {{variant #0 {n = 1073741824 : i64} does not give a valid kernel}}
tile.kernel @huge(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 1073741824}]) {
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : !tile.reg<64x{n}xf32>
}

// -----

// 0 is a flag's value, not a size: as a dimension it breaks the variant.
// expected-error @+2 {{tile dimensions must be positive}}
// expected-error @+1 {{variant #0 {n = 0 : i64} does not give a valid kernel}}
tile.kernel @zero(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 0}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// A parameter may choose code: each variant keeps the branch it takes.
// CHECK-LABEL: tile.kernel @flagged_det0
// CHECK-NOT:     scf.if
// CHECK:         tile.store {{.*}} : !tile.reg<64xf32>, memref<?xf32>
// CHECK-NOT:     tile.scatter_add_rows
// CHECK-LABEL: tile.kernel @flagged_det1
// CHECK-NOT:     scf.if
// CHECK-NOT:     tile.store
// CHECK:         tile.scatter_add_rows {{.*}} scale
tile.kernel @flagged(%out: memref<?xf32>, %acc: memref<?x?xi64>, %rows: memref<?xi32>)
    warpgroups(1) variants([{det = 0}, {det = 1}]) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %det = tile.param "det" : i1
  scf.if %det {
    %v = tile.splat %one : !tile.reg<64x64xf32>
    %r = tile.load %rows[%c0] : memref<?xi32> -> !tile.reg<64xi32>
    tile.scatter_add_rows %v, %acc[%r, %c0] scale %one : !tile.reg<64x64xf32>, memref<?x?xi64>, !tile.reg<64xi32>
  } else {
    %v = tile.splat %one : !tile.reg<64xf32>
    tile.store %v, %out[%c0] : !tile.reg<64xf32>, memref<?xf32>
  }
}

// -----

// Nested branches on flags fold from the inside out; a branch not taken
// with no else goes away.
// CHECK-LABEL: tile.kernel @nested_a0_b1
// CHECK-NOT:     scf.if
// CHECK:         tile.store {{.*}} : !tile.reg<64xf32>, memref<?xf32>
// CHECK-NOT:     tile.store
// CHECK-LABEL: tile.kernel @nested_a1_b1
// CHECK-NOT:     scf.if
// CHECK-COUNT-2: tile.store
tile.kernel @nested(%out: memref<?xf32>) warpgroups(1) variants([{a = 0, b = 1}, {a = 1, b = 1}]) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = tile.param "a" : i1
  %b = tile.param "b" : i1
  %v = tile.splat %one : !tile.reg<64xf32>
  scf.if %b {
    scf.if %a {
      tile.store %v, %out[%c0] : !tile.reg<64xf32>, memref<?xf32>
    }
    tile.store %v, %out[%c0] : !tile.reg<64xf32>, memref<?xf32>
  }
}

// -----

// The sizes' shape parameters (of the grid and of tensor extents) become
// the variant's constants; the argument symbols stay.
// CHECK-LABEL: tile.kernel @rows_per16
// CHECK-SAME: (%out: memref<?x?xf32> [%n * 16, ?], %n: index) warpgroups(1) grid([block : %out[0] ceildiv 16, col : %n])
// CHECK-LABEL: tile.kernel @rows_per32
// CHECK-SAME: (%out: memref<?x?xf32> [%n * 32, ?], %n: index) warpgroups(1) grid([block : %out[0] ceildiv 32, col : %n])
tile.kernel @rows(%out: memref<?x?xf32> [%n * {per}, ?], %n: index) warpgroups(1)
    grid([block : %out[0] ceildiv {per}, col : %n])
    variants([{per = 16}, {per = 32}]) {
  %per = tile.param "per" : index
}

// -----

// Derived parameters are bound with the variant's own, and name the kernel.
// CHECK-LABEL: tile.kernel @derived_hp32_hw16
// CHECK-SAME: attributes {tile.params = {hp = 32 : i64, hw = 16 : i64}}
// CHECK:   tile.alloc : !tile.smem<64x32xbf16>
// CHECK-LABEL: tile.kernel @derived_hp64_hw32
// CHECK:   tile.alloc : !tile.smem<64x64xbf16>
tile.kernel @derived() warpgroups(1)
    derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw])
    variants([{hw = 16}, {hw = 32}]) {
  %p = tile.alloc : !tile.smem<64x{hp}xbf16>
}

// -----

// Constants are bound in every variant (tile.params) but do not name it.
// CHECK-LABEL: tile.kernel @fixed_hw16
// CHECK-SAME: attributes {tile.params = {bits = 40 : i64, hw = 16 : i64}}
// CHECK: arith.constant 40 : i64
// CHECK-LABEL: tile.kernel @fixed_hw32
tile.kernel @fixed(%out: memref<?xi64>) warpgroups(1) constants({bits = 40})
    variants([{hw = 16}, {hw = 32}]) {
  %c0 = arith.constant 0 : index
  %bits = tile.param "bits" : i64
  memref.store %bits, %out[%c0] : memref<?xi64>
}
