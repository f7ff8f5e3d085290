// Probe: do trades through distributed shared memory and dKV reductions into
// L2 share a limit? A cluster pair that splits a CTA's columns (the H=128
// backward) halves its reductions but trades partial sums and P/dS with its
// peer, so the pair pays off only if the two run side by side.
// 66 clusters of 2 CTAs (one per SM), 256 threads, as the backward:
//   warpgroup 1 adds `blocks` blocks of 64 random rows x 576 fp32 columns into
//     an Skv x 576 workspace with red.v4 in 128-byte runs (scatter_probe oct1);
//   warpgroup 0 streams `rounds` 64 x 64 fp32 tiles (16 KiB) to its peer with
//     st.async (completing on the peer's mbarrier) through a 2-stage ring, and
//     reads and frees what its peer sends, one round behind.
// Modes: red (warpgroup 1 alone), dsmem (warpgroup 0 alone), both.
// usage: dsmem_red_probe [blocks] [rounds] [reps]
#include <vector>
#include "probe.cuh"

constexpr int kCols = 576, kRows = 64, kPiece = 64, kPieces = kCols / kPiece;
constexpr int kTileFloats = 64 * 64, kTileBytes = kTileFloats * 4, kStages = 2;

__device__ __forceinline__ unsigned peer_addr(unsigned a, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n.reg .pred done;\nagain:\n"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra again;\n}" :: "r"(bar), "r"(parity) : "memory");
}

template <int Mode>  // 0 red, 1 dsmem, 2 both
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(256, 1)
probe(float *ws, const int *rows, int blocks, int rounds, float *sink) {
  extern __shared__ __align__(1024) float smem[];
  float *ring = smem;                                       // kStages tiles
  unsigned long long *bars = reinterpret_cast<unsigned long long *>(smem + kStages * kTileFloats);
  // bars[0, kStages): full (the peer's tiles landed), [kStages, 2 kStages): free
  int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  unsigned peer = rank ^ 1;
  if (tid == 0)
    for (int i = 0; i < 2 * kStages; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;" :: "r"(smem_addr(bars + i)));
  asm volatile("fence.mbarrier_init.release.cluster;");
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");

  if (wg == 1 && Mode != 1) {
    for (int b = 0; b < blocks; ++b) {
      const int *r = rows + (blockIdx.x * blocks + b) * kRows;
      int warp = t / 32, lane = t % 32;
      float v = 1.0f + b;
      for (int p = 0; p < kPieces; ++p)
        for (int i = 0; i < 4; ++i) {
          float *dst = ws + (size_t)r[16 * warp + 4 * i + lane / 8] * kCols + p * kPiece + (lane % 8) * 4;
          red4(dst, v);
          red4(dst + 32, v);
        }
    }
  }
  if (wg == 0 && Mode != 0) {
    float acc = 0.f;
    for (int i = 0; i <= rounds; ++i) {
      if (i < rounds) {
        // Send round i into the peer's stage once the peer freed it (round i - 2).
        int s = i % kStages;
        wait_parity(smem_addr(bars + kStages + s), ((i / kStages) & 1) ^ 1);
        unsigned dst = peer_addr(smem_addr(ring + s * kTileFloats), peer);
        unsigned full = peer_addr(smem_addr(bars + s), peer);
        for (int k = 0; k < kTileFloats / 4 / 128; ++k) {
          float v = i + k;
          asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], "
                       "{%1, %1, %1, %1}, [%2];"
                       :: "r"(dst + 16 * (t + 128 * k)), "f"(v), "r"(full) : "memory");
        }
      }
      if (i >= 1) {
        // Receive round i - 1, then free its stage in the peer.
        int j = i - 1, s = j % kStages;
        unsigned full = smem_addr(bars + s);
        if (t == 0)
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                       :: "r"(full), "r"(kTileBytes) : "memory");
        else
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(full) : "memory");
        wait_parity(full, (j / kStages) & 1);
        const float4 *tile = reinterpret_cast<const float4 *>(ring + s * kTileFloats);
        for (int k = 0; k < kTileFloats / 4 / 128; ++k) {
          float4 x = tile[t + 128 * k];
          acc += x.x + x.y + x.z + x.w;
        }
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
                     :: "r"(peer_addr(smem_addr(bars + kStages + s), peer)) : "memory");
      }
    }
    if (acc == -1.f) sink[0] = acc;  // keeps the reads
  }
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 100;
  int rounds = argc > 2 ? atoi(argv[2]) : 600;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  int ctas = 132, skv = 4096;
  std::vector<int> h(ctas * blocks * kRows);
  srand(1);
  for (auto &x : h) x = rand() % skv;
  int *rows; float *ws, *sink;
  CK(cudaMalloc(&rows, h.size() * 4));
  CK(cudaMalloc(&ws, (size_t)skv * kCols * 4));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemcpy(rows, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  int smemBytes = kProbeSharedBytes;
  float times[3];
  auto run = [&](auto kernel, int mode, const char *name) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    CK(cudaMemset(ws, 0, (size_t)skv * kCols * 4));
    float best = best_of(reps, [&] {
      kernel<<<ctas, 256, smemBytes>>>(ws, rows, blocks, rounds, sink);
    });
    times[mode] = best;
    double red = mode != 1 ? (double)ctas * blocks * kRows * kCols * 4 : 0;
    double traded = mode != 0 ? (double)ctas * rounds * kTileBytes : 0;
    printf("%-6s %8.3f ms  reductions %7.1f GB/s  traded %7.1f GB/s (%.1f per CTA)\n", name, best,
           red / best / 1e6, traded / best / 1e6, traded / ctas / best / 1e6);
  };
  run(probe<0>, 0, "red");
  run(probe<1>, 1, "dsmem");
  run(probe<2>, 2, "both");
  printf("both / max(red, dsmem) = %.2f; both / (red + dsmem) = %.2f\n",
         times[2] / (times[0] > times[1] ? times[0] : times[1]), times[2] / (times[0] + times[1]));
  return 0;
}
