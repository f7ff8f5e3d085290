// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %s --sparse-mla-to-ptx="output=%t/probe" -o /dev/null
// RUN: FileCheck %s < %t/probe.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/probe.json
// GPU probe of clusters (test/python/test_gpu_cluster.py,
// bench/probes/cluster_exchange.py): the two CTAs of a cluster trade a
// 64 x 64 f32 tile `rounds` times through distributed shared memory, as a
// pair that splits the columns of a GEMM trades partial sums. Warpgroup 0
// sends, warpgroup 1 receives, into an inbox ring of `stages` tiles
// (clamped to [1, 4]): up to that many trades are in flight. In round i,
// the sender of CTA x waits until the peer's receiver has freed stage
// i mod stages, writes (i + 1) * src rows [64x, 64x + 64) into it and
// arrives at the peer's `full` barrier of the stage; the receiver waits for
// its own `full`, adds the stage to a sum and arrives at the peer's `free`.
// Row block x of `out` ends as rounds * (rounds + 1) / 2 times the peer's
// rows. With `async_writes` != 0 the sender's stores are st.async, which
// complete their bytes on the peer's `full` barrier; the receiver arrives
// there expecting the tile's 16 KiB instead of the sender arriving.
// The PTX: the cluster shape, the cluster barrier after the mbarriers'
// initialization, stores and arrivals through mapa'd addresses, waits that
// acquire at cluster scope, and the cluster barrier before the exit.
// CHECK: .explicitcluster
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK: mbarrier.init.shared.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: barrier.cluster.arrive.aligned;
// CHECK-NEXT: barrier.cluster.wait.aligned;
// CHECK: setmaxnreg.dec.sync.aligned.u32 240;
// CHECK-DAG: st.shared::cluster.v4.b32
// CHECK-DAG: fence.proxy.async.shared::cluster;
// CHECK-DAG: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK-DAG: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// CHECK-DAG: st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r{{[0-9]+}}], {%r{{.*}}}, [%r{{[0-9]+}}];
// CHECK: setmaxnreg.dec.sync.aligned.u32 240;
// CHECK-DAG: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// CHECK-DAG: ld.shared.v4.b32
// CHECK-DAG: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK-DAG: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: barrier.cluster.arrive.aligned;
// CHECK-NEXT: barrier.cluster.wait.aligned;
// CHECK-NEXT: ret;
// JSON: "cluster": 2,
tile.kernel @cluster_exchange_probe(%src: memref<?x64xf32>, %out: memref<?x64xf32>,
                                    %rounds: index, %stages: index, %async_writes: i32)
    warpgroups(2) cluster(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %no = arith.constant 0 : i32
  %is_async = arith.cmpi ne, %async_writes, %no : i32
  %tile_bytes = arith.constant 16384 : index
  %at_most = arith.minui %stages, %c4 : index
  %ring_size = arith.maxui %at_most, %c1 : index
  %rank = tile.cluster_rank
  %peer = arith.xori %rank, %c1 : index
  %cta = tile.block_id x
  %row = arith.muli %cta, %c64 : index
  %ring = tile.alloc : !tile.smem<4x64x64xf32>
  %full = tile.alloc : !tile.smem<1x4xi64>
  %free = tile.alloc : !tile.smem<1x4xi64>
  tile.mbarrier_init %full, %c128 : !tile.smem<1x4xi64>
  tile.mbarrier_init %free, %c128 : !tile.smem<1x4xi64>
  tile.warp_specialize registers([240, 240]) {
    %mine = tile.load %src[%row, %c0] : memref<?x64xf32> -> !tile.reg<64x64xf32>
    scf.for %i = %c0 to %rounds step %c1 {
      %stage = arith.remui %i, %ring_size : index
      %lap = arith.divui %i, %ring_size : index
      %lap_i32 = arith.index_cast %lap : index to i32
      %phase = arith.andi %lap_i32, %one : i32
      %before = arith.xori %phase, %one : i32
      %i32 = arith.index_cast %i : index to i32
      %times = arith.addi %i32, %one : i32
      %k = arith.sitofp %times : i32 to f32
      %scaled = tile.map %mine : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
      ^bb0(%x: f32):
        %y = arith.mulf %x, %k : f32
        tile.yield %y : f32
      }
      // The peer has read what this CTA wrote into the stage one lap before.
      %inbox = tile.slice %ring[%stage, %c0, %c0] : !tile.smem<4x64x64xf32> to !tile.smem<64x64xf32>
      tile.mbarrier_wait %free[%stage], %before : !tile.smem<1x4xi64>
      scf.if %is_async {
        tile.write %scaled, %inbox cta %peer on %full[%stage]
            : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>, !tile.smem<1x4xi64>
      } else {
        tile.write %scaled, %inbox cta %peer : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
        tile.mbarrier_arrive %full[%stage] cta %peer : !tile.smem<1x4xi64>
      }
    }
  }, {
    %none = tile.splat %zero : !tile.reg<64x64xf32>
    %sum = scf.for %i = %c0 to %rounds step %c1 iter_args(%acc = %none) -> (!tile.reg<64x64xf32>) {
      %stage = arith.remui %i, %ring_size : index
      %lap = arith.divui %i, %ring_size : index
      %lap_i32 = arith.index_cast %lap : index to i32
      %phase = arith.andi %lap_i32, %one : i32
      %inbox = tile.slice %ring[%stage, %c0, %c0] : !tile.smem<4x64x64xf32> to !tile.smem<64x64xf32>
      scf.if %is_async {
        tile.mbarrier_arrive %full[%stage] expect_tx %tile_bytes : !tile.smem<1x4xi64>
      }
      tile.mbarrier_wait %full[%stage], %phase : !tile.smem<1x4xi64>
      %got = tile.read %inbox : !tile.smem<64x64xf32> -> !tile.reg<64x64xf32>
      tile.mbarrier_arrive %free[%stage] cta %peer : !tile.smem<1x4xi64>
      %next = tile.map %acc, %got : !tile.reg<64x64xf32>, !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
      ^bb0(%a: f32, %b: f32):
        %s = arith.addf %a, %b : f32
        tile.yield %s : f32
      }
      scf.yield %next : !tile.reg<64x64xf32>
    }
    tile.store %sum, %out[%row, %c0] : !tile.reg<64x64xf32>, memref<?x64xf32>
  }
}
