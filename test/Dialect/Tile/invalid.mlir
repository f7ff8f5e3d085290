// RUN: sparse-mla-opt %s -split-input-file -verify-diagnostics
// RUN: not sparse-mla-opt %S/Inputs/warp-specialize-parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error: expected '=' after SSA name
// RUN: not sparse-mla-opt %S/Inputs/map-parse-error.mlir 2>&1 | FileCheck %s --check-prefix=MAP
// MAP: error: redefinition of block '^bb0'
// One case per verifier rule of the tile dialect.

// expected-error @+1 {{register tiles are 1-D or 2-D}}
func.func private @f(!tile.reg<2x2x2xf32>)
// -----
// expected-error @+1 {{tile dimensions must be positive}}
func.func private @f(!tile.reg<0x4xf32>)
// -----
// expected-error @+1 {{register tile layout must be}}
func.func private @f(!tile.reg<64x64xf32, #tile.shared<swizzle = 0, pitch = 16, block_stride = 16>>)
// -----
// expected-error @+1 {{#tile.mma needs a 2-D tile of 64k rows and 8n columns}}
func.func private @f(!tile.reg<32x64xf32, #tile.mma>)
// -----
// expected-error @+1 {{do not tile}}
func.func private @f(!tile.reg<4x64xf32, #tile.blocked<vector = 4, lanes = 16>>)
// -----
// expected-error @+1 {{vector must be a power of two up to 16}}
func.func private @f(!tile.reg<64x64xf32, #tile.blocked<vector = 3, lanes = 16>>)
// -----
// expected-error @+1 {{lanes must be a power of two up to 128}}
func.func private @f(!tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 12>>)
// -----
// expected-error @+1 {{slice dim must be 0 or 1}}
func.func private @f(!tile.reg<64xf32, #tile.slice<dim = 2, parent = #tile.mma>>)
// -----
// expected-error @+1 {{slice parent must be #tile.blocked or #tile.mma}}
func.func private @f(!tile.reg<64xf32, #tile.slice<dim = 1, parent = unit>>)
// -----
// expected-error @+1 {{shared tiles are 2-D, or 3-D rings of stages}}
func.func private @f(!tile.smem<64xbf16>)
// -----
// expected-error @+1 {{shared tile elements must be integers or floats of at least 8 bits}}
func.func private @f(!tile.smem<64x64xi1>)
// -----
// expected-error @+1 {{swizzle must be 0, 32, 64 or 128 bytes}}
func.func private @f(!tile.smem<64x64xbf16, #tile.shared<swizzle = 16, pitch = 16, block_stride = 1024>>)
// -----
// expected-error @+1 {{a swizzled tile has a pitch of one swizzle width}}
func.func private @f(!tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 64, block_stride = 1024>>)
// -----
// expected-error @+1 {{pitch and block_stride must be positive multiples of 16 bytes}}
func.func private @f(!tile.smem<64x64xbf16, #tile.shared<swizzle = 0, pitch = 8, block_stride = 8>>)
// -----
// expected-error @+1 {{rows of 32 bytes are not whole blocks of the 64-byte swizzle}}
func.func private @f(!tile.smem<64x16xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>)
// -----
// expected-error @+1 {{shared tile layout must be #tile.shared}}
func.func private @f(!tile.smem<64x64xbf16, #tile.mma>)
// -----
// expected-error @+1 {{argument #0: tensors are memrefs in the default memory space}}
tile.kernel @k(%a: memref<4xf32, 3>) warpgroups(1) {}
// -----
// A view's rows may be apart by any stride; its elements must be contiguous.
// expected-error @+1 {{argument #1: tensors are memrefs in the default memory space with the identity layout, or rows of contiguous elements}}
tile.kernel @k(%a: memref<?x?xf32, strided<[?, 1]>>, %b: memref<?x?xf32, strided<[?, 2]>>) warpgroups(1) {}
// -----
// expected-error @+1 {{argument #0: tensors are memrefs in the default memory space}}
tile.kernel @k(%a: memref<?x?x?xf32, strided<[?, ?, 1]>>) warpgroups(1) {}
// -----
// expected-error @+1 {{argument #0: tensors are memrefs in the default memory space}}
tile.kernel @k(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>) warpgroups(1) {}
// -----
func.func @f(%a: memref<?x?xf32, strided<[?, 1]>>, %r: !tile.reg<64xi32>) {
  // expected-error @+1 {{positions index memrefs with the identity layout}}
  %v = tile.gather %a[%r] : memref<?x?xf32, strided<[?, 1]>>, !tile.reg<64xi32> -> !tile.reg<64xf32>
  return
}
// -----
// expected-error @+1 {{argument #0 must be a memref or a scalar}}
tile.kernel @k(%a: vector<4xf32>) warpgroups(1) {}
// -----
// expected-error @+1 {{'tile.kernel' op attribute 'warpgroups' failed to satisfy constraint}}
tile.kernel @k() warpgroups(5) {}
// -----
tile.kernel @k(%x: !tile.reg<64x64xf32>) warpgroups(1) {}
// expected-error @-1 {{argument #0 must be a memref or a scalar}}
// -----
func.func @f(%a: !tile.reg<64x64xf32>, %b: !tile.reg<64x32xf32>) {
  // expected-error @+1 {{input #1 has shape other than the result}}
  %r = tile.map %a, %b : !tile.reg<64x64xf32>, !tile.reg<64x32xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f32, %y: f32):
    tile.yield %x : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32, #tile.mma>) {
  // expected-error @+1 {{input #0 has a layout other than the result}}
  %r = tile.map %a : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{body takes 2 arguments for 1 inputs}}
  %r = tile.map %a : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f32, %y: f32):
    tile.yield %x : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{body argument #0 must have the element type of input #0}}
  %r = tile.map %a : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f16):
    %e = arith.extf %x : f16 to f32
    tile.yield %e : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{body must yield one value of the result element type}}
  %r = tile.map %a : !tile.reg<64x64xf32> -> !tile.reg<64x64xbf16> {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32>, %m: memref<4xf32>) {
  %r = tile.map %a : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f32):
    %c = arith.constant 0 : index
    // expected-error @+1 {{is not allowed in a tile.map body}}
    %y = memref.load %m[%c] : memref<4xf32>
    tile.yield %y : f32
  }
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{broadcasts a 1-D tile to a 2-D tile}}
  %r = tile.broadcast %a along 1 : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.reg<32xf32>) {
  // expected-error @+1 {{source of 32 elements does not match the 64 of result dimension 0}}
  %r = tile.broadcast %a along 1 : !tile.reg<32xf32> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.reg<64xf32>) {
  // expected-error @+1 {{source and result element types differ}}
  %r = tile.broadcast %a along 1 : !tile.reg<64xf32> -> !tile.reg<64x64xf16>
  return
}
// -----
func.func @f(%a: !tile.reg<64xf32, #tile.slice<dim = 0, parent = #tile.mma>>) {
  // expected-error @+1 {{source layout must be the slice of the result layout}}
  %r = tile.broadcast %a along 1 : !tile.reg<64xf32, #tile.slice<dim = 0, parent = #tile.mma>> -> !tile.reg<64x64xf32, #tile.mma>
  return
}
// -----
func.func @f(%a: !tile.reg<64xf32>) {
  // expected-error @+1 {{reduces a 2-D tile to a 1-D tile}}
  %r = tile.reduce add %a along 1 : !tile.reg<64xf32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xi32>) {
  // expected-error @+1 {{reduces float tiles}}
  %r = tile.reduce add %a along 1 : !tile.reg<64x64xi32> -> !tile.reg<64xi32>
  return
}
// -----
func.func @f(%a: !tile.reg<64x32xf32>) {
  // expected-error @+1 {{result of 32 elements does not match the 64 of source dimension 0}}
  %r = tile.reduce add %a along 1 : !tile.reg<64x32xf32> -> !tile.reg<32xf32>
  return
}
// -----
func.func @f(%a: !tile.reg<64x32xf32>) {
  // expected-error @+1 {{source and result element types differ}}
  %r = tile.reduce add %a along 1 : !tile.reg<64x32xf32> -> !tile.reg<64xf16>
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xf32, #tile.mma>) {
  // expected-error @+1 {{result layout must be the slice of the source layout}}
  %r = tile.reduce add %a along 1 : !tile.reg<64x64xf32, #tile.mma> -> !tile.reg<64xf32, #tile.slice<dim = 0, parent = #tile.mma>>
  return
}
// -----
func.func @f(%m: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{needs 2 indices for a rank-2 memref, got 1}}
  %r = tile.load %m[%i] : memref<?x?xf32> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %i: index) {
  // expected-error @+1 {{tile rank exceeds the memref rank}}
  %r = tile.load %m[%i] : memref<?xf32> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?x?xf32>, %i: index, %p: f32) {
  // expected-error @+1 {{needs one bound per tile dimension (2), got 1}}
  %r = tile.load %m[%i, %i] bounds [%i] pad %p : memref<?x?xf32>, f32 -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?x?xf16>, %i: index) {
  // expected-error @+1 {{tile and memref element types differ}}
  %r = tile.load %m[%i, %i] : memref<?x?xf16> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?x?xf32>, %i: index, %p: f16) {
  // expected-error @+1 {{pad value must have the tile element type}}
  %r = tile.load %m[%i, %i] bounds [%i, %i] pad %p : memref<?x?xf32>, f16 -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{bounded loads need a pad value}}
  %r = tile.load %m[%i, %i] bounds [%i, %i] : memref<?x?xf32> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf16>, %i: index) {
  // expected-error @+1 {{tile and memref element types differ}}
  tile.store %v, %m[%i, %i] : !tile.reg<64x64xf32>, memref<?x?xf16>
  return
}
// -----
func.func @f(%v: !tile.reg<64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %i: index) {
  // expected-error @+1 {{adds a 2-D f32 tile}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x24xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %i: index) {
  // expected-error @+1 {{interleaved columns come in groups of 16: the tile has 24}}
  tile.scatter_add_rows %v, %m[%r, %i] {interleaved} : !tile.reg<64x24xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %i: index) {
  // expected-error @+1 {{interleaves the columns of 2-D tiles only}}
  %v = tile.load %m[%i] {interleaved} : memref<?xf32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%m: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{interleaved columns come in groups of 16: the tile has 8}}
  %v = tile.load %m[%i, %i] {interleaved} : memref<?x?xf32> -> !tile.reg<64x8xf32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf16>, %r: !tile.reg<64xi32>, %i: index) {
  // expected-error @+1 {{destination must be a 2-D f32 memref}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64x64xf32>, memref<?x?xf16>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi64>, %i: index) {
  // expected-error @+1 {{row indices must be a 1-D tile of i32}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi64>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<32xi32>, %i: index) {
  // expected-error @+1 {{has 32 row indices for 64 rows}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<32xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32, #tile.mma>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32, #tile.slice<dim = 0, parent = #tile.mma>>, %i: index) {
  // expected-error @+1 {{row indices must have layout #tile.slice<dim = 1, parent = #tile.mma>, the rows of the value's}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64x64xf32, #tile.mma>, memref<?x?xf32>, !tile.reg<64xi32, #tile.slice<dim = 0, parent = #tile.mma>>
  return
}
// -----
func.func @f() {
  // expected-error @+1 {{offset must be a non-negative multiple of 16 bytes}}
  %a = tile.alloc {offset = 100 : i64} : !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f() {
  // A negative multiple of the alignment is no offset either.
  // expected-error @+1 {{offset must be a non-negative multiple of 16 bytes}}
  %a = tile.alloc {offset = -1024 : i64} : !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f() {
  // expected-error @+1 {{offset must be a non-negative multiple of 1024 bytes}}
  %a = tile.alloc {offset = 512 : i64} : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{needs one offset per source dimension (2), got 1}}
  %r = tile.slice %s[%i] : !tile.smem<64x64xbf16> to !tile.smem<32x64xbf16>
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{source and result element types differ}}
  %r = tile.slice %s[%i, %i] : !tile.smem<64x64xbf16> to !tile.smem<32x64xf16>
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{result dimension 0 (128) exceeds the source (64)}}
  %r = tile.slice %s[%i, %i] : !tile.smem<64x64xbf16> to !tile.smem<128x64xbf16>
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>, %i: index) {
  %c48 = arith.constant 48 : index
  // expected-error @+1 {{slice of dimension 0 at 48 runs out of the source}}
  %r = tile.slice %s[%c48, %i] : !tile.smem<64x64xbf16> to !tile.smem<32x64xbf16>
  return
}
// -----
// A swizzled tile's slice keeps whole atoms: 32 bf16 columns are half of a
// 128-byte line, so the corner would sit inside an atom.
!sw = !tile.smem<64x128xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
!sw_half = !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
func.func @f(%s: !sw) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{starts at a column only known to be a multiple of 32 (64 bytes), inside a 128-byte swizzle atom}}
  %r = tile.slice %s[%c0, %c32] : !sw to !sw_half
  return
}
// -----
// A column offset computed at run time: only what its arithmetic says.
!sw = !tile.smem<64x128xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
!sw_half = !tile.smem<64x64xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
func.func @f(%s: !sw, %w: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %col = arith.muli %w, %c16 : index
  // expected-error @+1 {{starts at a column only known to be a multiple of 16 (32 bytes), inside a 64-byte swizzle atom}}
  %r = tile.slice %s[%c0, %col] : !sw to !sw_half
  return
}
// -----
// Rows: an atom is 8 lines.
!sw = !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
!sw_rows = !tile.smem<32x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
func.func @f(%s: !sw, %i: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %row = arith.muli %i, %c4 : index
  // expected-error @+1 {{starts at a row only known to be a multiple of 4, inside a swizzle atom of 8 rows}}
  %r = tile.slice %s[%row, %c0] : !sw to !sw_rows
  return
}
// -----
// Whole atoms: a column block of the 64-byte swizzle, rows in eights.
!sw = !tile.smem<64x64xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
!sw_part = !tile.smem<32x32xbf16, #tile.shared<swizzle = 64, pitch = 64, block_stride = 4096>>
func.func @f(%s: !sw, %w: index) {
  %c32 = arith.constant 32 : index
  %c8 = arith.constant 8 : index
  %col = arith.muli %w, %c32 : index
  %row = arith.muli %w, %c8 : index
  %r = tile.slice %s[%row, %col] : !sw to !sw_part
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>) {
  // expected-error @+1 {{reads a 2-D shared tile into a register tile of its shape}}
  %r = tile.read %s : !tile.smem<64x64xbf16> -> !tile.reg<64x32xbf16>
  return
}
// -----
func.func @f(%s: !tile.smem<2x64xf32>) {
  // expected-error @+1 {{or an unswizzled 1 x N one into N elements}}
  %r = tile.read %s : !tile.smem<2x64xf32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%s: !tile.smem<1x64xf32, #tile.shared<swizzle = 128, pitch = 128, block_stride = 1024>>) {
  // expected-error @+1 {{or an unswizzled 1 x N one into N elements}}
  %r = tile.read %s : !tile.smem<1x64xf32, #tile.shared<swizzle = 128, pitch = 128, block_stride = 1024>> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%s: !tile.smem<64x64xbf16>) {
  // expected-error @+1 {{source and result element types differ}}
  %r = tile.read %s : !tile.smem<64x64xbf16> -> !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x32xf32>, %s: !tile.smem<64x64xbf16>) {
  // expected-error @+1 {{writes a register tile into a 2-D shared tile of its shape}}
  tile.write %v, %s : !tile.reg<64x32xf32>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f(%v: !tile.reg<32xf32>, %s: !tile.smem<1x64xf32>) {
  // expected-error @+1 {{or N elements into an unswizzled 1 x N one}}
  tile.write %v, %s : !tile.reg<32xf32>, !tile.smem<1x64xf32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xbf16>, %s: !tile.smem<64x64xf32>) {
  // expected-error @+1 {{can only convert f32 to bf16 or f16 on the way}}
  tile.write %v, %s : !tile.reg<64x64xbf16>, !tile.smem<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?xbf16>, %s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{source must have at least 2 dimensions}}
  %t = tile.async_copy %m[%i] into %s : memref<?xbf16>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?xbf16>, %s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{needs 2 indices, got 1}}
  %t = tile.async_copy %m[%i] into %s : memref<?x?xbf16>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?xbf16>, %s: !tile.smem<2x64x64xbf16>, %i: index) {
  // expected-error @+1 {{destination must be a 2-D shared tile}}
  %t = tile.async_copy %m[%i, %i] into %s : memref<?x?xbf16>, !tile.smem<2x64x64xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?xf16>, %s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{source and destination element types differ}}
  %t = tile.async_copy %m[%i, %i] into %s : memref<?x?xf16>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?xbf16>, %s: !tile.smem<64x4xbf16>, %i: index) {
  // expected-error @+1 {{copies whole 16-byte chunks; rows of 8 bytes are not}}
  %t = tile.async_copy %m[%i, %i] into %s : memref<?x?xbf16>, !tile.smem<64x4xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?x?xbf16>, %r: !tile.reg<64xi32>, %s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{source must be a 2-D memref}}
  %t = tile.gather_rows %m[%r, %i] into %s : memref<?x?x?xbf16>, !tile.reg<64xi32>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f(%m: memref<?x?xbf16>, %r: !tile.reg<32xi32>, %s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{has 32 row indices for 64 rows}}
  %t = tile.gather_rows %m[%r, %i] into %s : memref<?x?xbf16>, !tile.reg<32xi32>, !tile.smem<64x64xbf16>
  return
}
// -----
func.func @f() {
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  "tile.async_wait"() {pending = -1 : i64} : () -> ()
  return
}
// -----
func.func @f(%a: !tile.smem<2x64x64xbf16>, %b: !tile.smem<64x64xbf16>, %c: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{operands must be 2-D tiles}}
  %r = tile.gemm %a, %b, %c : !tile.smem<2x64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xf32>, %b: !tile.smem<64x64xf32>, %c: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{a and b must both be bf16 or both f16}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xf32>, !tile.smem<64x64xf32>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %b: !tile.smem<64x64xbf16>, %c: !tile.reg<64x64xf16>) {
  // expected-error @+1 {{accumulates in f32}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf16>
  return
}
// -----
func.func @f(%a: !tile.reg<64x64xbf16>, %b: !tile.smem<64x64xbf16>, %c: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{a register operand cannot be transposed}}
  %r = tile.gemm %a, %b, %c {transpose_a} : !tile.reg<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %b: !tile.smem<32x64xbf16>, %c: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{contraction sizes differ: 64 vs 32}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xbf16>, !tile.smem<32x64xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %b: !tile.smem<64x32xbf16>, %c: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{accumulator must be 64x32}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xbf16>, !tile.smem<64x32xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<32x64xbf16>, %b: !tile.smem<64x32xbf16>, %c: !tile.reg<32x32xf32>) {
  // expected-error @+1 {{M (32) must be a multiple of 64}}
  %r = tile.gemm %a, %b, %c : !tile.smem<32x64xbf16>, !tile.smem<64x32xbf16>, !tile.reg<32x32xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %b: !tile.smem<64x12xbf16>, %c: !tile.reg<64x12xf32>) {
  // expected-error @+1 {{N (12) must be a multiple of 8}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xbf16>, !tile.smem<64x12xbf16>, !tile.reg<64x12xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x24xbf16>, %b: !tile.smem<24x32xbf16>, %c: !tile.reg<64x32xf32>) {
  // expected-error @+1 {{K (24) must be a multiple of 16}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x24xbf16>, !tile.smem<24x32xbf16>, !tile.reg<64x32xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %b: !tile.smem<64x64xbf16>, %c: !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>) {
  // expected-error @+1 {{accumulator must have the #tile.mma layout}}
  %r = tile.gemm %a, %b, %c : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32, #tile.blocked<vector = 4, lanes = 16>>
  return
}
// -----
func.func @f(%n: index, %a: !tile.reg<64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{iter_arg #0 changes type}}
  %r = "tile.pipelined_for"(%c0, %n, %c0, %a) ({
  ^bb0(%i: index, %x: !tile.reg<64xf16>):
    "tile.yield"(%x) : (!tile.reg<64xf16>) -> ()
  }) {stages = 2 : i64} : (index, index, index, !tile.reg<64xf32>) -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%n: index, %a: !tile.reg<64xf32>, %b: !tile.reg<64xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{yields values of other types than its results}}
  %r = tile.pipelined_for %i = %c0 to %n step %c0 stages(2) iter_args(%x = %a) -> (!tile.reg<64xf32>) {
    tile.yield %b : !tile.reg<64xf16>
  }
  return
}
// -----
func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{attribute 'stages' failed to satisfy constraint}}
  tile.pipelined_for %i = %c0 to %n step %c0 stages(0) {
  }
  return
}

// -----

// expected-error @+1 {{every dynamic dimension must be a named shape parameter}}
func.func private @unnamed_dynamic() -> !tile.reg<?x64xf32>

// -----

// expected-error @+1 {{a tile with shape parameters has no layout until tile-specialize binds them}}
func.func private @symbolic_layout() -> !tile.reg<64x{n}xf32, #tile.mma>

// -----

// expected-error @+1 {{has shape parameter 'n' but no variants to bind it}}
tile.kernel @unbound(%out: memref<?x?xf32>) warpgroups(1) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// expected-error @+1 {{has shape parameter 'n' but no variants to bind it}}
tile.kernel @unbound_param(%out: memref<?x?xf32>) warpgroups(1) {
  %n = tile.param "n" : index
}

// -----

// expected-error @+1 {{lists no variants}}
tile.kernel @no_variants(%out: memref<?x?xf32>) warpgroups(1) variants([]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// A parameter used only inside an attribute is a parameter too.
// expected-error @+1 {{variant #0 does not bind shape parameter 'm'}}
tile.kernel @in_attribute(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16}]) {
  %t = tile.alloc {tag = !tile.reg<{m}x64xf32>} : !tile.smem<64x{n}xbf16>
}

// -----

// expected-error @+1 {{variant #1 does not bind shape parameter 'n'}}
tile.kernel @missing(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16}, {}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// expected-error @+1 {{variant #0 binds 'n' to 100000000000 : i64, not an integer in [0, 2^31)}}
tile.kernel @huge(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 100000000000}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// expected-error @+1 {{variant #0 binds 'n' to 16 : ui32, not an integer in [0, 2^31)}}
tile.kernel @unsigned(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16 : ui32}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

tile.kernel @narrow_param(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 100}, {n = 300}]) {
  // expected-error @+1 {{cannot hold 300, the value of variant #1, in 'i8'}}
  %n = tile.param "n" : i8
}

// -----

tile.kernel @flag_param(%out: memref<?x?xf32>) warpgroups(1) variants([{f = 1}, {f = 2}]) {
  // expected-error @+1 {{cannot hold 2, the value of variant #1, in 'i1'}}
  %f = tile.param "f" : i1
}

// -----

// expected-error @+1 {{variant #0 binds 'n' to -1 : i64, not an integer in [0, 2^31)}}
tile.kernel @negative(%out: memref<?x?xf32>) warpgroups(1) variants([{n = -1}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// expected-error @+1 {{variant #0 binds 'n' to "wide", not an integer in [0, 2^31)}}
tile.kernel @not_int(%out: memref<?x?xf32>) warpgroups(1) variants([{n = "wide"}]) {
  %t = tile.alloc : !tile.smem<64x{n}xbf16>
}

// -----

// Two parameters are different sizes, even when a variant binds them alike.
tile.kernel @mismatched_params(%out: memref<?x?xf32>) warpgroups(1) variants([{n = 16, m = 16}]) {
  %zero = arith.constant 0.0 : f32
  %a = tile.alloc : !tile.smem<64x{n}xbf16>
  %b = tile.alloc : !tile.smem<{m}x64xbf16>
  %acc = tile.splat %zero : !tile.reg<64x64xf32>
  // expected-error @+1 {{contraction sizes differ: {n} vs {m}}}
  %s = tile.gemm %a, %b, %acc : !tile.smem<64x{n}xbf16>, !tile.smem<{m}x64xbf16>, !tile.reg<64x64xf32>
}

// -----

tile.kernel @any_of_ints(%out: memref<?x?xf32>) warpgroups(1) {
  %z = arith.constant 0 : i32
  %t = tile.splat %z : !tile.reg<64xi32>
  // expected-error @+1 {{takes a tile of i1}}
  %a = tile.any %t : !tile.reg<64xi32>
}

// -----

tile.kernel @staging_shape(%ws: memref<?x?xf32>, %rows: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %z = arith.constant 0 : i32
  %r = tile.splat %z : !tile.reg<64xi32>
  %v = tile.splat %one : !tile.reg<64x64xf32>
  %s = tile.alloc : !tile.smem<64x32xf32>
  // expected-error @+1 {{staging must be a 2-D f32 shared tile of the value's shape}}
  tile.scatter_add_rows %v, %ws[%r, %c0] staging %s : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>, !tile.smem<64x32xf32>
}

// -----

tile.kernel @staging_swizzled(%ws: memref<?x?xf32>, %rows: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %z = arith.constant 0 : i32
  %r = tile.splat %z : !tile.reg<64xi32>
  %v = tile.splat %one : !tile.reg<64x64xf32>
  %s = tile.alloc : !tile.smem<64x64xf32, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // expected-error @+1 {{staging rows are read whole by the bulk reduction: the tile must not be swizzled}}
  tile.scatter_add_rows %v, %ws[%r, %c0] staging %s : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>, !tile.smem<64x64xf32, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
}

// -----

tile.kernel @staging_ragged(%ws: memref<?x?xf32>, %rows: memref<?xi32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %z = arith.constant 0 : i32
  %r = tile.splat %z : !tile.reg<64xi32>
  %v = tile.splat %one : !tile.reg<64x6xf32>
  %s = tile.alloc : !tile.smem<64x6xf32>
  // expected-error @+1 {{staged rows of 6 f32 are not whole 16-byte chunks}}
  tile.scatter_add_rows %v, %ws[%r, %c0] staging %s : !tile.reg<64x6xf32>, memref<?x?xf32>, !tile.reg<64xi32>, !tile.smem<64x6xf32>
}
// -----
func.func @f() {
  // expected-error @+1 {{dimension 1 of a rank-1 tile}}
  %i = tile.iota along 1 : !tile.reg<64xi32>
  return
}
// -----
func.func @f() {
  // expected-error @+1 {{coordinates are i32}}
  %i = tile.iota along 0 : !tile.reg<64xi64>
  return
}
// -----
func.func @f(%x: !tile.reg<64xi32>) {
  // expected-error @+1 {{scans the rows of a 2-D tile}}
  %s = tile.scan add %x : !tile.reg<64xi32>
  return
}
// -----
func.func @f(%x: !tile.reg<1x128xi8>) {
  // expected-error @+1 {{scans i32 or f32 tiles}}
  %s = tile.scan add %x : !tile.reg<1x128xi8>
  return
}
// -----
func.func @f(%x: !tile.reg<64x64xf32, #tile.mma>) {
  // expected-error @+1 {{needs a #tile.blocked layout}}
  %s = tile.scan add %x : !tile.reg<64x64xf32, #tile.mma>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %p: !tile.reg<64xi64>) {
  // expected-error @+1 {{positions are i32}}
  %g = tile.gather %m[%p] : memref<?xf32>, !tile.reg<64xi64> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %p: !tile.reg<32xi32>) {
  // expected-error @+1 {{positions and values differ in shape}}
  %g = tile.gather %m[%p] : memref<?xf32>, !tile.reg<32xi32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%m: memref<?xi32>, %p: !tile.reg<64xi32>) {
  // expected-error @+1 {{element types differ: 'i32' in memory, 'f32' in the tile}}
  %g = tile.gather %m[%p] : memref<?xi32>, !tile.reg<64xi32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %p: !tile.reg<64xi32>, %pad: f16) {
  // expected-error @+1 {{pad value must have the tile element type}}
  %g = tile.gather %m[%p] pad %pad : memref<?xf32>, !tile.reg<64xi32>, f16 -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%s: !tile.smem<2x64x64xf32>, %p: !tile.reg<64xi32>) {
  // expected-error @+1 {{accesses a 2-D shared tile, not a ring}}
  %g = tile.gather %s[%p] : !tile.smem<2x64x64xf32>, !tile.reg<64xi32> -> !tile.reg<64xf32>
  return
}
// -----
func.func @f(%v: !tile.reg<64xf32>, %m: memref<?xf32>, %p: !tile.reg<128xi32>) {
  // expected-error @+1 {{positions and values differ in shape}}
  tile.scatter %v, %m[%p] : !tile.reg<64xf32>, memref<?xf32>, !tile.reg<128xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64xf32>, %m: memref<?xf32>, %p: !tile.reg<64xi32>) {
  // expected-error @+1 {{'or' is not supported on 'f32'}}
  %o = tile.atomic_rmw or %v, %m[%p] : !tile.reg<64xf32>, memref<?xf32>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32, #tile.mma>, %m: memref<?xf32>,
             %p: !tile.reg<64x64xi32, #tile.blocked<vector = 4, lanes = 16>>) {
  // expected-error @+1 {{register tiles must share one layout}}
  tile.scatter %v, %m[%p] : !tile.reg<64x64xf32, #tile.mma>, memref<?xf32>, !tile.reg<64x64xi32, #tile.blocked<vector = 4, lanes = 16>>
  return
}
// -----
func.func @f(%v: !tile.reg<64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %c: index) {
  // expected-error @+1 {{stores a 2-D tile into a 2-D memref}}
  tile.store_rows %v, %m[%r, %c] : !tile.reg<64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x16xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %c: index) {
  // expected-error @+1 {{has 64 row indices for 16 rows}}
  tile.store_rows %v, %m[%r, %c] {transpose} : !tile.reg<64x16xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}
// -----
func.func @f(%v: !tile.reg<64x64xf32, #tile.mma>, %m: memref<?x?xf32>,
             %r: !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>, %c: index) {
  // expected-error @+1 {{row indices must have layout #tile.slice<dim = 0, parent = #tile.mma>}}
  tile.store_rows %v, %m[%r, %c] {transpose} : !tile.reg<64x64xf32, #tile.mma>, memref<?x?xf32>, !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
  return
}

// -----
// Found by tools/fuzz_opt.py: the layout of a huge tile enumerated its
// elements until memory ran out.
// expected-error @+1 {{tile of more than 65536 elements}}
func.func private @f(!tile.reg<2147483647x1024xi32, #tile.blocked<vector = 4, lanes = 128>>)
// -----
// expected-error @+1 {{tile of more than 16777216 elements}}
func.func private @f(!tile.smem<4096x8192xbf16>)
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) -> !tile.reg<64x64xf32> {
  // expected-error @+1 {{result of an asynchronous product is read before a tile.gemm_wait: tile.map}}
  %r = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %m = tile.map %r : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return %m : !tile.reg<64x64xf32>
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  %r = tile.gemm %a, %a, %acc : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // expected-error @+1 {{waits for the results of tile.gemm {async} only}}
  %w = tile.gemm_wait %r {pending = 0} : !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  %r = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  %w = tile.gemm_wait %r {pending = -1} : !tile.reg<64x64xf32>
  return
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{warpgroup 2 is not one of the kernel's 2}}
  tile.barrier warpgroups([0, 2])
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{warpgroups must be listed in increasing order, once each}}
  tile.barrier warpgroups([1, 0])
}
// -----
tile.kernel @k() warpgroups(2) {
  tile.warp_specialize registers([40, 232]) {
    // expected-error @+1 {{synchronizes the whole CTA, but inside tile.warp_specialize the other warpgroups run other code: give `warpgroups`}}
    tile.barrier
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{regions must cover the kernel's 2 warpgroups, not 3}}
  tile.warp_specialize registers([40, 40, 40]) {
  }, {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{has 2 regions but 1 register budgets}}
  tile.warp_specialize registers([40]) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{register budget 100 is not a multiple of 8 in [24, 256]}}
  tile.warp_specialize registers([100, 232]) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{gives its channels at least one stage, not 0}}
  tile.warp_specialize registers([240, 240]) stages(0) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(3) {
  // expected-error @+1 {{register budgets need 68608 registers, more than the 65536 of a CTA}}
  tile.warp_specialize registers([256, 256, 24]) {
  }, {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(3) {
  // expected-error @+1 {{has 2 regions but 1 warpgroup counts}}
  tile.warp_specialize warpgroups([3]) registers([40, 232]) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{a region runs on at least one warpgroup, not 0}}
  tile.warp_specialize warpgroups([2, 0]) registers([40, 232]) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(3) {
  // expected-error @+1 {{register budgets need 67584 registers, more than the 65536 of a CTA}}
  tile.warp_specialize warpgroups([2, 1]) registers([248, 32]) {
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(3) {
  tile.warp_specialize warpgroups([2, 1]) registers([232, 40]) {
    // expected-error @+1 {{runs on warpgroup 1, which it does not list}}
    tile.barrier warpgroups([0])
  }, {
  }
}
// -----
tile.kernel @k(%n: index) warpgroups(2) {
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.warp_specialize registers([40, 232]) {
    // expected-error @+1 {{needs every warpgroup of the CTA: not inside tile.warp_specialize}}
    tile.mbarrier_init %bars, %n : !tile.smem<1x2xi64>
  }, {
  }
}
// -----
tile.kernel @k(%n: index) warpgroups(1) {
  %bars = tile.alloc : !tile.smem<1x4xi64>
  // expected-error @+1 {{takes one count for all 4 barriers or one each, not 2}}
  tile.mbarrier_init %bars, %n, %n : !tile.smem<1x4xi64>
}
// -----
// expected-error @+1 {{channel buffers are 2-D shared tiles, not '!tile.reg<64x64xf32>'}}
tile.kernel @k(%c: !tile.channel<!tile.reg<64x64xf32>>) warpgroups(1) {
}
// -----
// expected-error @+1 {{a channel has at least one stage, not 0}}
tile.kernel @k(%c: !tile.channel<!tile.smem<64x64xbf16>, stages = 0>) warpgroups(1) {
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{ring of 4 stages needs 294976 bytes of shared memory, more than the 232432 a CTA has}}
  %ch = tile.channel : !tile.channel<!tile.smem<64x576xbf16>, stages = 4>
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !tile.channel<!tile.smem<64x576xbf16>, stages = 4>
    tile.put_exit %ch : !tile.channel<!tile.smem<64x576xbf16>, stages = 4>
  }, {
    %out = tile.get_enter %ch : !tile.channel<!tile.smem<64x576xbf16>, stages = 4>
    tile.get_exit %ch : !tile.channel<!tile.smem<64x576xbf16>, stages = 4>
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{is got (tile.get_enter) but never put (tile.put_enter)}}
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{is put (tile.put_enter) but never got (tile.get_enter)}}
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(3) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([160, 160, 160]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    // expected-error @+1 {{puts into a channel that partition #0 puts into: a channel has one producer}}
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(1) {
  %ch = tile.channel : !chan
  // expected-error @+1 {{hands a channel over between partitions: only inside tile.warp_specialize}}
  %in = tile.put_enter %ch : !chan
  tile.put_exit %ch : !chan
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{needs every warpgroup of the CTA: not inside tile.warp_specialize}}
    %ch = tile.channel : !chan
  }, {
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k(%b: i1) warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{has no tile.put_exit of its channel after it in its block}}
    %in = tile.put_enter %ch : !chan
    scf.if %b {
      tile.put_exit %ch : !chan
    }
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    // expected-error @+1 {{has no tile.get_enter of its channel before it in its block}}
    tile.get_exit %ch : !chan
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    // expected-error @+1 {{has no tile.get_exit of its channel after it in its block}}
    %a = tile.get_enter %ch : !chan
    %b = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
// A producer that gets its own channel gets each slot right after putting it.
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{breaks the round of a producer that gets its own channel: it takes each slot right after putting it}}
    %a = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    %b = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k(%c: i1) warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
    scf.if %c {
      // expected-error @+1 {{breaks the round of a producer that gets its own channel}}
      %a = tile.get_enter %ch : !chan
      tile.get_exit %ch : !chan
    }
  }, {
    %b = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
    %a = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
    %in2 = tile.put_enter %ch : !chan
    // expected-error @+1 {{its last slot put is never got}}
    tile.put_exit %ch : !chan
  }, {
    %b = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}
// -----
tile.kernel @k(%n: index, %p: i32) warpgroups(1) {
  %bars = tile.alloc : !tile.smem<2x2xi64>
  // expected-error @+1 {{mbarriers are a 1 x N shared tile of i64, not '!tile.smem<2x2xi64>'}}
  tile.mbarrier_wait %bars[%n], %p : !tile.smem<2x2xi64>
}
// -----
tile.kernel @k(%n: index) warpgroups(1) {
  %bars = tile.alloc : !tile.smem<1x2xi32>
  // expected-error @+1 {{mbarriers are a 1 x N shared tile of i64}}
  tile.mbarrier_arrive %bars[%n] : !tile.smem<1x2xi32>
}
// -----
tile.kernel @k(%n: index) warpgroups(1) {
  %bars = tile.alloc : !tile.smem<1x2xi64>
  // expected-error @+1 {{arrives after its copies or expects transactions, not both}}
  tile.mbarrier_arrive %bars[%n] expect_tx %n {after_copies} : !tile.smem<1x2xi64>
}
// -----
tile.kernel @k(%n: index) warpgroups(1) cluster(2) {
  %bars = tile.alloc : !tile.smem<1x2xi64>
  // expected-error @+1 {{arrives at another CTA's barrier only as a plain arrival, without `after_copies` or `expect_tx`}}
  tile.mbarrier_arrive %bars[%n] expect_tx %n cta %n : !tile.smem<1x2xi64>
}
// -----
tile.kernel @k(%n: index) warpgroups(1) {
  %bars = tile.alloc : !tile.smem<1x2xi64>
  // expected-error @+1 {{reaches another CTA's shared memory, but the kernel has no clusters: give it `cluster(n)`}}
  tile.mbarrier_arrive %bars[%n] cta %n : !tile.smem<1x2xi64>
}
// -----
tile.kernel @k(%n: index, %x: f32) warpgroups(1) cluster(1) {
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %t = tile.alloc : !tile.smem<64x64xf32>
  // expected-error @+1 {{reaches another CTA's shared memory, but the kernel has no clusters: give it `cluster(n)`}}
  tile.write %v, %t cta %n : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
}
// -----
tile.kernel @k(%n: index, %x: f32) warpgroups(1) cluster(2) {
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %t = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi64>
  // expected-error @+1 {{completes on a barrier only as an asynchronous write into a CTA of the cluster: give `cta`}}
  tile.write %v, %t on %bars[%n] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
}
// -----
tile.kernel @k(%n: index, %x: f32) warpgroups(1) cluster(2) {
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %t = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi32>
  // expected-error @+1 {{mbarriers are a 1 x N shared tile of i64}}
  tile.write %v, %t cta %n on %bars[%n] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi32>
}
// -----
tile.kernel @k(%n: index, %x: f32) warpgroups(1) cluster(2) {
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %t = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi64>
  // expected-error @+1 {{completes on one mbarrier of `bars`: give its index, `on %bars[%i]`}}
  tile.write %v, %t cta %n on %bars[] : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x2xi64>
}
// -----
tile.kernel @k(%n: index, %x: f32) warpgroups(1) cluster(2) {
  %v = tile.splat %x : !tile.reg<64x64xf32>
  %t = tile.alloc : !tile.smem<64x64xf32>
  // expected-error @+1 {{has an mbarrier index but no mbarriers}}
  "tile.write"(%v, %t, %n, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (!tile.reg<64x64xf32>, !tile.smem<64x64xf32>, index, index) -> ()
}
// -----
func.func @f(%x: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{converts a tile to another layout of its shape and element type, not '!tile.reg<64x64xf32>' to '!tile.reg<64x32xf32>'}}
  %y = tile.convert_layout %x : !tile.reg<64x64xf32> -> !tile.reg<64x32xf32>
  return
}
// -----
tile.kernel @k() warpgroups(1) {
  // expected-error @+1 {{needs a kernel launched in clusters: give it `cluster(n)`}}
  %r = tile.cluster_rank
}
// -----
// expected-error @+1 {{attribute 'cluster' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 1 whose maximum value is 8}}
tile.kernel @k() warpgroups(1) cluster(16) {
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  %s = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %t = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // expected-error @+1 {{leaves 1 groups running, but only 0 were issued after a product it waits for}}
  %w = tile.gemm_wait %t {pending = 1} : !tile.reg<64x64xf32>
  return
}
// -----
// A product that joins the group of the one it accumulates into starts no
// group: after s and the joined pair (t, u), one group is younger than s.
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  %s = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %t = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %u = tile.gemm %a, %a, %t {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // expected-error @+1 {{leaves 2 groups running, but only 1 were issued after a product it waits for}}
  %w = tile.gemm_wait %s {pending = 2} : !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{result of an asynchronous product that the next one accumulates into has another reader}}
  %t = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %u = tile.gemm %a, %a, %t {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  %w:2 = tile.gemm_wait %t, %u {pending = 0} : !tile.reg<64x64xf32>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.smem<64x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  %t = tile.gemm %a, %a, %acc {async} : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  // expected-error @+1 {{accumulates into an asynchronous product: give it `async` too, or wait for the product first}}
  %u = tile.gemm %a, %a, %t : !tile.smem<64x64xbf16>, !tile.smem<64x64xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%a: !tile.reg<64x16xbf16, #tile.blocked<vector = 8, lanes = 2>>, %b: !tile.smem<16x64xbf16>, %acc: !tile.reg<64x64xf32>) {
  // expected-error @+1 {{a register operand must have the #tile.mma layout}}
  %r = tile.gemm %a, %b, %acc : !tile.reg<64x16xbf16, #tile.blocked<vector = 8, lanes = 2>>, !tile.smem<16x64xbf16>, !tile.reg<64x64xf32>
  return
}
// -----
func.func @f(%m: memref<?xf32>, %i: index, %z: f32) {
  // expected-error @+1 {{a pad value needs bounds}}
  %v = tile.load %m[%i] pad %z : memref<?xf32>, f32 -> !tile.reg<64xf32>
  return
}
// -----
tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{regions take no arguments}}
  tile.warp_specialize registers([40, 232]) {
  ^bb0(%x: index):
  }, {
  }
}
// -----
tile.kernel @k(%src: memref<?x64xbf16>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %buf = tile.alloc : !tile.smem<64x64xbf16>
  tile.warp_specialize registers([40, 232]) {
    // expected-error @+1 {{needs every warpgroup of the CTA: not inside tile.warp_specialize}}
    %t = tile.async_copy %src[%c0, %c0] into %buf : memref<?x64xbf16>, !tile.smem<64x64xbf16>
  }, {
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  tile.warp_specialize registers([40, 232]) {
  }, {
    // expected-error @+1 {{runs on warpgroup 1, which it does not list}}
    tile.barrier warpgroups([0])
  }
}
// -----
tile.kernel @k(%m: memref<?x?xbf16>) warpgroups(1) {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'memref.dim' op index -1 is out of range for a memref of rank 2}}
  %d = memref.dim %m, %c : memref<?x?xbf16>
}

// -----

func.func @fixed_point_into_f32(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %i: index, %s: f32) {
  // expected-error @+1 {{destination of a fixed-point (scaled) addition must be a 2-D i64 memref}}
  tile.scatter_add_rows %v, %m[%r, %i] scale %s : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}

// -----

func.func @i64_without_scale(%v: !tile.reg<64x64xf32>, %m: memref<?x?xi64>, %r: !tile.reg<64xi32>, %i: index) {
  // expected-error @+1 {{destination must be a 2-D f32 memref, or i64 with a scale}}
  tile.scatter_add_rows %v, %m[%r, %i] : !tile.reg<64x64xf32>, memref<?x?xi64>, !tile.reg<64xi32>
  return
}

// -----

func.func @overflow_without_scale(%v: !tile.reg<64x64xf32>, %m: memref<?x?xf32>, %r: !tile.reg<64xi32>, %i: index, %f: memref<?xi32>) {
  // expected-error @+1 {{overflow flags rows of a fixed-point (scaled) addition: it needs a scale}}
  tile.scatter_add_rows %v, %m[%r, %i] overflow(%f : memref<?xi32>) : !tile.reg<64x64xf32>, memref<?x?xf32>, !tile.reg<64xi32>
  return
}

// -----

func.func @overflow_of_i64(%v: !tile.reg<64x64xf32>, %m: memref<?x?xi64>, %r: !tile.reg<64xi32>, %i: index, %s: f32, %f: memref<?xi64>) {
  // expected-error @+1 {{overflow must be a 1-D i32 memref (a flag per destination row)}}
  tile.scatter_add_rows %v, %m[%r, %i] scale %s overflow(%f : memref<?xi64>) : !tile.reg<64x64xf32>, memref<?x?xi64>, !tile.reg<64xi32>
  return
}

// -----

func.func @fixed_point_interleaved(%v: !tile.reg<64x64xf32>, %m: memref<?x?xi64>, %r: !tile.reg<64xi32>, %i: index, %s: f32) {
  // expected-error @+1 {{fixed-point additions are neither staged nor interleaved}}
  tile.scatter_add_rows %v, %m[%r, %i] scale %s {interleaved} : !tile.reg<64x64xf32>, memref<?x?xi64>, !tile.reg<64xi32>
  return
}

// -----

func.func @counter_of_floats(%c: memref<?x?xf32>, %i: index, %one: i32) {
  // expected-error @+1 {{counts in a 2-D global memref of i32 with the identity layout, got 'memref<?x?xf32>'}}
  tile.counter_add %c[%i, %i], %one : memref<?x?xf32>
  return
}

// -----

func.func @counter_of_rank_one(%c: memref<?xi32>, %i: index, %one: i32) {
  // expected-error @+1 {{counts in a 2-D global memref of i32 with the identity layout}}
  %r = tile.counter_wait %c[%i, %i], %one, %one : memref<?xi32>
  return
}

// -----

func.func @counter_in_a_view(%c: memref<?x?xi32, strided<[?, 1]>>, %i: index, %one: i32) {
  // expected-error @+1 {{counts in a 2-D global memref of i32 with the identity layout}}
  %r = tile.counter_wait %c[%i, %i], %one, %one : memref<?x?xi32, strided<[?, 1]>>
  return
}

// -----

// expected-error @+1 {{names two arguments 'n': the runtime passes them by name}}
tile.kernel @same_names(%a: i32, %b: i32) warpgroups(1) attributes {arg_names = ["n", "n"]} {
}

// -----

// expected-error @+1 {{has 1 argument names for 2 arguments}}
tile.kernel @too_few_names(%a: i32, %b: i32) warpgroups(1) attributes {arg_names = ["a"]} {
}

// -----
// expected-error @+1 {{grid has 4 dimensions, not 1 to 3 (x, y, z)}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n], [b : %n], [c : %n], [d : %n]) {
}
// -----
// expected-error @+1 {{size %m is not an argument}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %m]) {
}
// -----
// expected-error @+1 {{size %t is a tensor of rank 2: give a dimension of it}}
tile.kernel @k(%t: memref<?x?xf32>) warpgroups(1) grid([a : %t[2]]) {
}
// -----
// expected-error @+1 {{size %x is an integer scalar or a tensor's dimension}}
tile.kernel @k(%x: f32) warpgroups(1) grid([a : %x]) {
}
// -----
// expected-error @+1 {{size {hp} is a shape parameter, but the kernel has no variants to bind it}}
tile.kernel @k() warpgroups(1) grid([a : {hp}]) {
}
// -----
// expected-error @+1 {{expected a size: an integer, %scalar, %tensor[dim], {parameter} or a parenthesized expression}}
tile.kernel @k(%a: memref<?xf32> [rows]) warpgroups(1) {
}
// -----
// expected-error @+1 {{divides by 0: divisors are positive}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n floordiv 0]) {
}
// -----
// expected-error @+1 {{a size names an argument, not a result #1}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n#1]) {
}
// -----
// expected-error @+1 {{names work axis 'a' twice}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n], [a : 2]) {
}
// -----
// expected-error @+1 {{names work axis 'a' twice}}
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n] window(a : 2 from %n)) {
}
// -----
// expected-error @+1 {{argument %n is a scalar: it has no extents and is never optional}}
tile.kernel @k(%n: index [4]) warpgroups(1) {
}
// -----
// expected-error @+1 {{argument %n is a scalar: it has no extents and is never optional}}
tile.kernel @k(%n: index optional) warpgroups(1) {
}
// -----
// expected-error @+1 {{argument %a has rank 1: state one extent a dimension}}
tile.kernel @k(%a: memref<?xf32> [1, 2]) warpgroups(1) {
}
// -----
// expected-error @+1 {{an extent of %a is stated by its own size}}
tile.kernel @k(%a: memref<?x?xf32> [?, %a[0]]) warpgroups(1) {
}
// -----
// expected-error @+1 {{has constants but no variants to bind them with}}
tile.kernel @k() warpgroups(1) constants({bits = 40}) {
}
// -----
// expected-error @+1 {{constant 'bits' is -1 : i64, not an integer in [0, 2^31)}}
tile.kernel @k() warpgroups(1) constants({bits = -1}) variants([{n = 1}]) {
}
// -----
// expected-error @+1 {{binds 'n' both as a constant and in a variant or derive map}}
tile.kernel @k() warpgroups(1) constants({n = 2}) variants([{n = 1}]) {
}
// -----
tile.kernel @k(%n: index) warpgroups(1) grid([a : %n]) {
  // expected-error @+1 {{names 'b', which is not a work axis of @k's grid}}
  %b = tile.work_id "b"
}
// -----
func.func @f() {
  // expected-error @+1 {{is in no tile.kernel}}
  %b = tile.work_id "b"
  return
}
// -----
tile.kernel @k() warpgroups(1) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{has 'tile.partition' but stands outside tile.warp_specialize}}
  %a = tile.splat %zero {tile.partition = 0} : !tile.reg<64x64xf32>
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{'tile.partition' must be an integer in [0, 2), one of the enclosing tile.warp_specialize's partitions}}
    %a = tile.splat %zero {tile.partition = 2} : !tile.reg<64x64xf32>
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{has a region per partition: its ops take no 'tile.partition'}}
  tile.warp_specialize registers([240, 240]) {
    %a = tile.splat %zero {tile.partition = 0} : !tile.reg<64x64xf32>
  }, {
  }
}
// -----
// expected-error @+1 {{variant #1 binds 'hp', which the kernel derives}}
tile.kernel @k() warpgroups(1) derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw])
    variants([{hw = 16}, {hw = 32, hp = 64}]) {
}
// -----
// expected-error @+1 {{derives shape parameters but has no variants}}
tile.kernel @k() warpgroups(1) derive([hp] = affine_map<()[hw] -> (hw * 2)>[hw]) {
}
// -----
// expected-error @+1 {{derive map has 0 dimensions, 1 symbols and 2 results, for no dimension, 1 parameters and 1 derived ones}}
tile.kernel @k() warpgroups(1) derive([hp] = affine_map<()[hw] -> (hw * 2, hw)>[hw])
    variants([{hw = 16}]) {
}
// -----
// expected-error @+1 {{variant #0 does not bind 'dqk', which a derived parameter needs}}
tile.kernel @k() warpgroups(1) derive([dq1] = affine_map<()[dqk] -> (dqk - 256)>[dqk])
    variants([{hw = 16}]) {
}
// -----
// expected-error @+1 {{variant #0 derives 'dq1' = -64, not an integer in [0, 2^31)}}
tile.kernel @k() warpgroups(1) derive([dq1] = affine_map<()[dqk] -> (dqk - 256)>[dqk])
    variants([{dqk = 192}]) {
}
// -----
// expected-error @+1 {{derive map gives variant #0 no number (a division by zero)}}
tile.kernel @k() warpgroups(1) derive([q] = affine_map<()[a, b] -> (a floordiv b)>[a, b])
    variants([{a = 16, b = 0}]) {
}
// -----
// expected-error @+1 {{derives 'a' twice, or from itself}}
tile.kernel @k() warpgroups(1) derive([a] = affine_map<()[a] -> (a * 2)>[a])
    variants([{a = 16}]) {
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{'tile.partition_rows' shares a tile.gemm's rows between the partitions of an unsplit tile.warp_specialize}}
    %a = tile.splat %zero {tile.partition_rows = array<i64: 0, 64>} : !tile.reg<128x64xf32>
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  %k = tile.alloc : !tile.smem<64x128xbf16>
  %ds = tile.alloc : !tile.smem<64x32xbf16>
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !tile.reg<128x32xf32>
    // expected-error @+1 {{'tile.partition_rows' gives the first row of each of the 2 partitions: 0, then increasing}}
    %r = tile.gemm %k, %ds, %init {transpose_a, tile.partition_rows = array<i64: 64, 0>}
        : !tile.smem<64x128xbf16>, !tile.smem<64x32xbf16>, !tile.reg<128x32xf32>
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  %ds = tile.alloc : !tile.smem<64x32xbf16>
  %q = tile.alloc : !tile.smem<32x128xbf16>
  tile.warp_specialize registers([240, 240]) {
    %init = tile.splat %zero : !tile.reg<64x128xf32>
    // expected-error @+1 {{'tile.partition_cols' gives the first column of each of the 2 partitions: 0, then increasing}}
    %r = tile.gemm %ds, %q, %init {tile.partition_cols = array<i64: 0, 64, 96>}
        : !tile.smem<64x32xbf16>, !tile.smem<32x128xbf16>, !tile.reg<64x128xf32>
  }
}
// -----
tile.kernel @k() warpgroups(2) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tile.partition_cols' shares a tile.gemm's columns between the partitions of an unsplit tile.warp_specialize}}
  %a = tile.splat %zero {tile.partition_cols = array<i64: 0, 64>} : !tile.reg<64x128xf32>
}

// -----

// Types, layouts, ops, channels, and the attributes that only the generic form
// can get wrong.

// expected-error @+1 {{register tile elements must be integers or floats}}
func.func private @f(!tile.reg<64x64xindex>)

// -----

// expected-error @+1 {{#tile.blocked needs a 2-D tile}}
func.func private @f(!tile.reg<64xf32, #tile.blocked<vector = 4, lanes = 16>>)

// -----

// expected-error @+1 {{#tile.slice needs a 1-D tile}}
func.func private @f(!tile.reg<64x64xf32, #tile.slice<dim = 1, parent = #tile.mma>>)

// -----

// expected-error @+1 {{a channel holds at least one buffer}}
tile.kernel @k(%c: !tile.channel<stages = 2>) warpgroups(1) {
}

// -----

func.func @f(%v: !tile.reg<64xf32>, %m: memref<?xf32>, %i: index) {
  // expected-error @+1 {{transposes only 2-D tiles}}
  tile.store %v, %m[%i] {transpose} : !tile.reg<64xf32>, memref<?xf32>
  return
}

// -----

func.func @f(%s: !tile.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{may only drop the stage dimension of a 3-D ring}}
  %r = tile.slice %s[%i, %i] : !tile.smem<64x64xbf16> to !tile.smem<2x64x64xbf16>
  return
}

// -----

tile.kernel @k() warpgroups(2) {
  // expected-error @+1 {{needs at least one warpgroup}}
  tile.barrier warpgroups([])
}

// -----

!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  // expected-error @+1 {{takes a channel; only tile.put_enter, tile.put_exit, tile.get_enter and tile.get_exit may}}
  %x = builtin.unrealized_conversion_cast %ch : !chan to i32
}

// -----

!chan = !tile.channel<!tile.smem<64x64xbf16>>
tile.kernel @k() warpgroups(2) {
  %ch = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
  tile.warp_specialize registers([240, 240]) {
    // expected-error @+1 {{uses a channel of another tile.warp_specialize}}
    %in = tile.put_enter %ch : !chan
    tile.put_exit %ch : !chan
  }, {
    %out = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }
}

// -----

// expected-error @+1 {{needs a derive map, the names it binds and its symbols}}
tile.kernel @k() warpgroups(1) variants([{n = 64}]) attributes {derive_names = ["m"]} {
}

// -----

// expected-error @+1 {{needs both a sizes map and its symbols}}
tile.kernel @k() warpgroups(1) attributes {sizes = affine_map<() -> (1)>} {
}

// -----

// expected-error @+1 {{sizes map has 1 dimensions and 0 symbols, for no dimension and 0 symbols}}
tile.kernel @k() warpgroups(1) attributes {sizes = affine_map<(d0) -> (d0)>, size_symbols = []} {
}

// -----

// expected-error @+1 {{grid dimension #0 needs named axes, each with an extent}}
tile.kernel @k() warpgroups(1) attributes {grid = [{axes = [], extents = array<i64>}]} {
}

// -----

// expected-error @+1 {{grid dimension #0 has an extent that is not a size}}
tile.kernel @k() warpgroups(1) attributes {grid = [{axes = ["a"], extents = array<i64: 0>}]} {
}

// -----

// expected-error @+1 {{grid dimension #0 has a window without a name and both sizes}}
tile.kernel @k() warpgroups(1) attributes {sizes = affine_map<() -> (4)>, size_symbols = [],
                                           grid = [{axes = ["a"], extents = array<i64: 0>, count = 0}]} {
}

// -----

// expected-error @+1 {{argument %a has an extent that is not a size}}
"tile.kernel"() <{sym_name = "k", function_type = (memref<?xf32>) -> (), warpgroups = 1 : i32,
                  arg_names = ["a"], arg_attrs = [{tile.extents = array<i64: 3>}]}> ({
^bb0(%a: memref<?xf32>):
  tile.return
}) : () -> ()

// -----

// expected-error @+1 {{argument %a: `optional` is a unit attribute}}
"tile.kernel"() <{sym_name = "k", function_type = (memref<?xf32>) -> (), warpgroups = 1 : i32,
                  arg_names = ["a"], arg_attrs = [{tile.optional = 1}]}> ({
^bb0(%a: memref<?xf32>):
  tile.return
}) : () -> ()

// -----

func.func @f(%n: index, %a: !tile.reg<64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{body takes the index and one argument per iter_arg}}
  %r = "tile.pipelined_for"(%c0, %n, %c0, %a) ({
  ^bb0(%i: index):
    "tile.yield"(%a) : (!tile.reg<64xf32>) -> ()
  }) {stages = 2 : i64} : (index, index, index, !tile.reg<64xf32>) -> !tile.reg<64xf32>
  return
}

// -----

func.func @f(%n: index, %a: !tile.reg<64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{one type per iter_arg expected}}
  %r = tile.pipelined_for %i = %c0 to %n step %c0 stages(2) iter_args(%x = %a, %y = %a) -> (!tile.reg<64xf32>) {
    tile.yield %x : !tile.reg<64xf32>
  }
  return
}

// -----

// expected-error @+1 {{kernels return no values}}
"tile.kernel"() <{sym_name = "k", function_type = () -> i32, warpgroups = 1 : i32, arg_names = []}> ({
^bb0:
  tile.return
}) : () -> ()

// -----

// expected-error @+1 {{size symbol #0 is not an argument}}
tile.kernel @k(%n: i32) warpgroups(1) attributes {sizes = affine_map<()[s0] -> (s0)>, size_symbols = [{arg = "m"}]} {
}
