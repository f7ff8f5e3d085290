// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-ablate))' | FileCheck %s --check-prefix=NONE
// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-ablate{idle-gathers}))' | FileCheck %s --check-prefix=GATHER
// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-ablate{idle-scatters=1}))' | FileCheck %s --check-prefix=IDLE
// RUN: sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-ablate{drop-scatters=1}))' | FileCheck %s --check-prefix=DROP
// RUN: not sparse-mla-opt %s --pass-pipeline='builtin.module(tile.kernel(tile-ablate{drop-scatters=0}))' 2>&1 | FileCheck %s --check-prefix=NOMATCH
// Parts of the work taken out for timing: an idle gather or scatter keeps
// its instructions, its rows -1 behind a test of the grid that never holds
// at run time (one idle copy per row tile, made where the rows are, so ops
// that shared rows still do); a dropped scatter goes with the GEMMs only
// it used.

// NONE-NOT:  tile.grid_dim
// NONE:      tile.gather_rows %{{.*}}[%[[ROWS:.*]], %{{.*}}]
// NONE:      tile.gemm
// NONE:      tile.scatter_add_rows

// GATHER:      %[[ROWS:.*]] = tile.load
// GATHER-NEXT:  %[[Z:.*]] = tile.grid_dim z
// GATHER-NEXT:  %{{.*}} = arith.constant 12345 : index
// GATHER-NEXT:  %[[NEVER:.*]] = arith.cmpi eq, %[[Z]], %{{.*}} : index
// GATHER-NEXT:  %[[OFF:.*]] = tile.map %[[ROWS]] :
// GATHER:         arith.select %[[NEVER]], %{{.*}}, %{{.*}} : i32
// GATHER:       tile.gather_rows %{{.*}}[%[[OFF]], %{{.*}}]
// GATHER:       tile.scatter_add_rows %{{.*}}, %{{.*}}[%[[ROWS]], %{{.*}}]

// IDLE:        %[[ROWS:.*]] = tile.load
// IDLE-NEXT:   tile.grid_dim z
// IDLE:        %[[OFF:.*]] = tile.map %[[ROWS]] :
// IDLE:        tile.gather_rows %{{.*}}[%[[ROWS]], %{{.*}}]
// IDLE:        }, {
// IDLE:        tile.gemm
// IDLE-NEXT:   tile.scatter_add_rows %{{.*}}, %{{.*}}[%[[OFF]], %{{.*}}]

// DROP:        tile.gather_rows
// DROP:        }, {
// DROP-NEXT:     %{{.*}} = tile.get_enter
// DROP-NEXT:     tile.get_exit
// DROP-NEXT:   }

// NOMATCH: error: tile-ablate: no gather or scatter of a partition matches its options

!buf = !tile.smem<64x64xbf16>
!chan = !tile.channel<!buf>
!acc = !tile.reg<64x64xf32>
tile.kernel @ablated(%kv: memref<?x?xbf16>, %keys: memref<?xi32>, %n: index,
                     %dkv: memref<?x?xf32>) warpgroups(2) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant -1 : i32
  %ch = tile.channel : !chan
  %rows = tile.load %keys[%c0] bounds [%n] pad %none : memref<?xi32>, i32 -> !tile.reg<64xi32>
  tile.warp_specialize registers([240, 240]) {
    %in = tile.put_enter %ch : !chan
    %t = tile.gather_rows %kv[%rows, %c0] into %in {per_warpgroup}
        : memref<?x?xbf16>, !tile.reg<64xi32>, !buf
    tile.put_exit %ch after %t : !chan
    %k0 = tile.get_enter %ch : !chan
    tile.get_exit %ch : !chan
  }, {
    %k = tile.get_enter %ch : !chan
    %init = tile.splat %zero : !acc
    %x = tile.gemm %k, %k, %init {transpose_b} : !buf, !buf, !acc
    tile.scatter_add_rows %x, %dkv[%rows, %c0] : !acc, memref<?x?xf32>, !tile.reg<64xi32>
    tile.get_exit %ch : !chan
  }
}
