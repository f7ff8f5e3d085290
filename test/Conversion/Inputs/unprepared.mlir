// Input of tile-to-nvvm.mlir's second RUN line: the conversion alone, on
// kernels the passes before it have not prepared (it crashed on kernels/
// given to it alone).
tile.kernel @no_layouts(%out: memref<?xf32>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{has a tile without a layout: run tile-assign-layouts first}}
  %x = tile.splat %one : !tile.reg<64xf32>
  tile.store %x, %out[%c0] : !tile.reg<64xf32>, memref<?xf32>
}
// -----
tile.kernel @no_offsets() warpgroups(1) {
  // expected-error @+1 {{has no shared-memory offset: run tile-allocate-shared first}}
  %a = tile.alloc : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
}
// -----
// expected-error @+1 {{has shape parameters; run tile-specialize first}}
tile.kernel @generic() warpgroups(1) variants([{n = 64}]) {
  %a = tile.alloc : !tile.smem<64x{n}xbf16>
}
// -----
// Laid out by hand: gather rows in a layout the copy cannot use.
tile.kernel @gather_rows_in_mma_rows(%kv: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %r = tile.iota along 0 : !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>
  %a = tile.alloc {offset = 0 : i64} : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // expected-error @+2 {{failed to legalize}}
  // expected-error @+1 {{row indices need the rows of a 16-byte blocked layout}}
  %t = tile.gather_rows %kv[%r, %c0] into %a : memref<?x64xbf16>, !tile.reg<64xi32, #tile.slice<dim = 1, parent = #tile.mma>>, !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
}

// -----
tile.kernel @token_wait(%kv: memref<?x64xbf16>) warpgroups(1) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc {offset = 0 : i64} : !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  %t = tile.async_copy %kv[%c0, %c0] into %a : memref<?x64xbf16>, !tile.smem<64x64xbf16, #tile.shared<swizzle = 128, pitch = 128, block_stride = 8192>>
  // expected-error @+1 {{waits by tokens: run tile-materialize-waits first}}
  tile.wait %t
}
// -----
tile.kernel @barrier_without_id() warpgroups(2) {
  // expected-error @+1 {{has no barrier id: run tile-assign-barrier-ids first}}
  tile.barrier warpgroups([1])
}
