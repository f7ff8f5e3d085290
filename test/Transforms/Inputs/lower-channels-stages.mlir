// tile-lower-channels{stages=4} (RUN in test/Transforms/lower-channels.mlir):
// each channel up to four stages while the shared memory holds them, the
// smallest ring first: the 8 KB one gets four, the 128 KB one keeps one.
// STAGES-LABEL: tile.kernel @up_to_four
// STAGES-DAG:   tile.alloc : !tile.smem<64x1024xbf16>
// STAGES-DAG:   tile.alloc : !tile.smem<4x64x64xbf16>
!big = !tile.smem<64x1024xbf16>
!small = !tile.smem<64x64xbf16>
tile.kernel @up_to_four(%n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %a = tile.channel : !tile.channel<!big>
  %b = tile.channel : !tile.channel<!small>
  tile.warp_specialize registers([240, 240]) {
    scf.for %j = %c0 to %n step %c1 {
      %x = tile.put_enter %a : !tile.channel<!big>
      %zx = tile.splat %zero : !tile.reg<64x1024xf32>
      tile.write %zx, %x : !tile.reg<64x1024xf32>, !big
      tile.put_exit %a : !tile.channel<!big>
      %y = tile.put_enter %b : !tile.channel<!small>
      %zy = tile.splat %zero : !tile.reg<64x64xf32>
      tile.write %zy, %y : !tile.reg<64x64xf32>, !small
      tile.put_exit %b : !tile.channel<!small>
    }
  }, {
    scf.for %j = %c0 to %n step %c1 {
      %x = tile.get_enter %a : !tile.channel<!big>
      %rx = tile.read %x : !big -> !tile.reg<64x1024xbf16>
      tile.get_exit %a : !tile.channel<!big>
      %y = tile.get_enter %b : !tile.channel<!small>
      %ry = tile.read %y : !small -> !tile.reg<64x64xbf16>
      tile.get_exit %b : !tile.channel<!small>
    }
  }
}

// -----

// Two rings that fit the shared memory one at a time, not together.
!big = !tile.smem<64x1024xbf16>
// expected-error @+1 {{tile-lower-channels: the kernel's channels do not fit the shared memory with one stage each}}
tile.kernel @too_big(%n: index) warpgroups(2) {
  %a = tile.channel : !tile.channel<!big>
  %b = tile.channel : !tile.channel<!big>
  tile.warp_specialize registers([240, 240]) {
    %x = tile.put_enter %a : !tile.channel<!big>
    tile.put_exit %a : !tile.channel<!big>
    %y = tile.put_enter %b : !tile.channel<!big>
    tile.put_exit %b : !tile.channel<!big>
  }, {
    %x = tile.get_enter %a : !tile.channel<!big>
    tile.get_exit %a : !tile.channel<!big>
    %y = tile.get_enter %b : !tile.channel<!big>
    tile.get_exit %b : !tile.channel<!big>
  }
}
