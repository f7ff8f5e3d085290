// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %s --sparse-mla-to-ptx="output=%t/probe" -o /dev/null
// RUN: FileCheck %s < %t/probe.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/probe.json
// GPU probe of clusters (test/python/test_gpu_cluster.py): the two CTAs of
// a cluster trade a 64 x 64 f32 tile `rounds` times through distributed
// shared memory, as a pair that splits the columns of a GEMM trades partial
// sums. In round i, CTA x writes (i + 1) * src rows [64x, 64x + 64) into its
// peer's inbox and arrives at the peer's `full` barrier; it then waits for
// its own `full`, adds its inbox to a sum and arrives at the peer's `free`
// barrier, which the peer waits for before it writes the next round. Row
// block x of `out` ends as rounds * (rounds + 1) / 2 times the peer's rows.
// The PTX: the cluster shape, the cluster barrier after the mbarriers'
// initialization, stores and arrivals through mapa'd addresses, waits that
// acquire at cluster scope, and the cluster barrier before the exit.
// CHECK: .explicitcluster
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: barrier.cluster.arrive.aligned;
// CHECK: barrier.cluster.wait.aligned;
// CHECK: mapa.shared::cluster.u32
// CHECK: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// CHECK: st.shared::cluster.v4.b32
// CHECK: fence.proxy.async.shared::cluster;
// CHECK: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// CHECK: ld.shared.v4.b32
// CHECK: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK: barrier.cluster.arrive.aligned;
// CHECK-NEXT: barrier.cluster.wait.aligned;
// CHECK-NEXT: ret;
// JSON: "cluster": 2,
tile.kernel @cluster_exchange_probe(%src: memref<?x64xf32>, %out: memref<?x64xf32>,
                                    %rounds: index) warpgroups(1) cluster(2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %full = arith.constant 0 : index
  %free = arith.constant 1 : index
  %cta = tile.block_id x
  %peer = arith.xori %cta, %c1 : index
  %rank = tile.cluster_rank
  %peer_rank = arith.xori %rank, %c1 : index
  %row = arith.muli %cta, %c64 : index
  %mine = tile.load %src[%row, %c0] : memref<?x64xf32> -> !tile.reg<64x64xf32>
  %inbox = tile.alloc : !tile.smem<64x64xf32>
  %bars = tile.alloc : !tile.smem<1x2xi64>
  tile.mbarrier_init %bars, %c128 : !tile.smem<1x2xi64>
  %none = tile.splat %zero : !tile.reg<64x64xf32>
  %sum = scf.for %i = %c0 to %rounds step %c1 iter_args(%acc = %none) -> (!tile.reg<64x64xf32>) {
    %i32 = arith.index_cast %i : index to i32
    %phase = arith.andi %i32, %one : i32
    %before = arith.xori %phase, %one : i32
    %times = arith.addi %i32, %one : i32
    %k = arith.sitofp %times : i32 to f32
    %scaled = tile.map %mine : !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
    ^bb0(%x: f32):
      %y = arith.mulf %x, %k : f32
      tile.yield %y : f32
    }
    // The peer has read what this CTA wrote in the round before.
    tile.mbarrier_wait %bars[%free], %before : !tile.smem<1x2xi64>
    tile.write %scaled, %inbox cta %peer_rank : !tile.reg<64x64xf32>, !tile.smem<64x64xf32>
    tile.mbarrier_arrive %bars[%full] cta %peer_rank : !tile.smem<1x2xi64>
    tile.mbarrier_wait %bars[%full], %phase : !tile.smem<1x2xi64>
    %got = tile.read %inbox : !tile.smem<64x64xf32> -> !tile.reg<64x64xf32>
    tile.mbarrier_arrive %bars[%free] cta %peer_rank : !tile.smem<1x2xi64>
    %next = tile.map %acc, %got : !tile.reg<64x64xf32>, !tile.reg<64x64xf32> -> !tile.reg<64x64xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tile.yield %s : f32
    }
    scf.yield %next : !tile.reg<64x64xf32>
  }
  tile.store %sum, %out[%row, %c0] : !tile.reg<64x64xf32>, memref<?x64xf32>
}
