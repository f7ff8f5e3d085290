// Two channels whose rings fit the shared memory one at a time, not
// together (tile-schedule channel-stages, test/Transforms/schedule.mlir).
!buf = !tile.smem<64x1024xbf16>
!chan = !tile.channel<!buf>
tile.kernel @rings_too_big(%kv: memref<?x?xbf16>, %keys: memref<?xi32>, %n: index) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %none = arith.constant -1 : i32
  %a = tile.channel : !chan
  %b = tile.channel : !chan
  tile.warp_specialize registers([240, 240]) {
    %rows = tile.load %keys[%c0] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
    %in = tile.put_enter %a {tile.partition = 0} : !chan
    %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
    tile.put_exit %a after %t {tile.partition = 0} : !chan
    %in2 = tile.put_enter %b {tile.partition = 1} : !chan
    %t2 = tile.gather_rows %kv[%rows, %c0] into %in2 {per_warpgroup}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
    tile.put_exit %b after %t2 {tile.partition = 1} : !chan
  }
}
