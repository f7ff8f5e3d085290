// Probe: fp32 row scatter-add of 64 x 576 blocks, one CTA (2 warpgroups) per
// SM as in the backward, three ways:
//   red   red.global.add.v4.f32 from registers (what the kernel does now)
//   bulk  st.shared into a per-warpgroup staging tile, then
//         cp.reduce.async.bulk.global.shared::cta.add.f32 per 256-byte row
//   bulk2 the same with two staging tiles per warpgroup (alternating pieces)
//   quad    red.v4 in the backward's interleaved order: the 4 threads of a
//           wgmma accumulator quad add one 64-byte run of a row
//   quad1   the same, all pieces from one warpgroup (the dKV warpgroup of
//           the warp-specialized backward)
//   oct1    one warpgroup, 8 threads per 128-byte run of a row
//   hex1    one warpgroup, 16 threads per 256-byte run of a row
//   gather  no reductions: warpgroup 0 gathers each block's 64 kv rows (bf16,
//           1152 bytes) into shared memory with cp.async, as the backward
//   oct1+g  oct1 in warpgroup 1 while warpgroup 0 gathers: the L2 traffic
//           of one per-token block of the backward, without its GEMMs
// usage: scatter_probe [blocks_per_cta] [timed repetitions] [modes: 0 = all, 1 = the last three]
#include <vector>
#include "probe.cuh"

constexpr int kCols = 576, kRows = 64, kPiece = 64, kPieces = kCols / kPiece;
constexpr int kPitch = kPiece + 4;  // floats; 272-byte rows: 16-byte aligned, fewer conflicts
constexpr int kKvChunks = kCols * 2 / 16;  // 16-byte chunks of a bf16 kv row

__device__ __forceinline__ void bulk_red(float *g, const float *s, int bytes) {
  unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(s));
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
               :: "l"(g), "r"(sa), "r"(bytes) : "memory");
}
// Mode 0 red, 1 bulk, 2 bulk2, 3 quad, 4 quad1, 5 oct1, 6 hex1, 7 gather, 8 oct1 + gather
template <int Mode>
__global__ void __launch_bounds__(256, 1) scatter(float *ws, const int *rows, int blocks,
                                                  const uint4 *kv) {
  extern __shared__ __align__(1024) float smem[];
  int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  float *stage = smem + wg * 2 * kRows * kPitch;
  int pieceCount = 0;
  if (Mode >= 7 && wg == 0) {
    uint4 *k = reinterpret_cast<uint4 *>(smem);
    gather_blocks(k, kv, rows + blockIdx.x * blocks * kRows, blocks, t);
    return;
  }
  if constexpr (Mode != 7) {
    for (int b = 0; b < blocks; ++b) {
      const int *r = rows + (blockIdx.x * blocks + b) * kRows;
      const int first = Mode >= 4 ? 0 : wg, step = Mode >= 4 ? 1 : 2;
      if (Mode >= 4 && wg == 0) continue;
      for (int p = first; p < kPieces; p += step, ++pieceCount) {
        // This thread's 32 values of the 64x64 piece: 2 rows x 16 columns.
        float v = 1.0f + tid * 1e-3f + b;
        int warp = t / 32, lane = t % 32;
        if (Mode == 3 || Mode == 4) {
          for (int k = 0; k < 2; ++k) {
            int row = r[16 * warp + lane / 4 + 8 * k];
            float *dst = ws + (size_t)row * kCols + p * kPiece + (lane % 4) * 4;
            for (int g = 0; g < 4; ++g) red4(dst + 16 * g, v, v, v, v);
          }
        } else if (Mode == 5 || Mode == 8) {
          for (int i = 0; i < 4; ++i) {
            int row = r[16 * warp + 4 * i + lane / 8];
            float *dst = ws + (size_t)row * kCols + p * kPiece + (lane % 8) * 4;
            for (int h = 0; h < 2; ++h) red4(dst + 32 * h, v, v, v, v);
          }
        } else if (Mode == 6) {
          for (int i = 0; i < 8; ++i) {
            int row = r[16 * warp + 2 * i + lane / 16];
            red4(ws + (size_t)row * kCols + p * kPiece + (lane % 16) * 4, v, v, v, v);
          }
        } else if (Mode == 0) {
          for (int k = 0; k < 2; ++k) {
            int row = r[(t / 4) + 32 * k];
            float *dst = ws + (size_t)row * kCols + p * kPiece + (t % 4) * 16;
            for (int c = 0; c < 16; c += 4) red4(dst + c, v, v, v, v);
          }
        } else {
          float *buf = stage + (Mode == 2 ? (pieceCount & 1) : 0) * kRows * kPitch;
          if (t < kRows) {
            if (Mode == 2) bulk_wait_read<1>(); else bulk_wait_read<0>();
          }
          wg_bar(wg);
          for (int k = 0; k < 2; ++k) {
            float *dst = buf + ((t / 4) + 32 * k) * kPitch + (t % 4) * 16;
            for (int c = 0; c < 16; c += 4)
              *reinterpret_cast<float4 *>(dst + c) = make_float4(v, v, v, v);
          }
          fence_async();
          wg_bar(wg);
          if (t < kRows) {
            int row = r[t];
            bulk_red(ws + (size_t)row * kCols + p * kPiece, buf + t * kPitch, kPiece * 4);
            bulk_commit();
          }
        }
      }
    }
    if (Mode == 1 || Mode == 2) bulk_wait_read<0>();
  }
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 200;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  int lastOnly = argc > 3 ? atoi(argv[3]) : 0;
  int sms = 132, skv = 4096;
  std::vector<int> h(sms * blocks * kRows);
  srand(1);
  for (auto &x : h) x = rand() % skv;
  int *rows; float *ws; uint4 *kv;
  CK(cudaMalloc(&rows, h.size() * 4));
  CK(cudaMalloc(&kv, (size_t)skv * kKvChunks * 16));
  CK(cudaMemset(kv, 0, (size_t)skv * kKvChunks * 16));
  CK(cudaMalloc(&ws, (size_t)skv * kCols * 4));
  CK(cudaMemcpy(rows, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  int smemBytes = kProbeSharedBytes;
  auto run = [&](auto kernel, const char *name, bool reduces = true) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    CK(cudaMemset(ws, 0, (size_t)skv * kCols * 4));
    float best = best_of(reps, [&] { kernel<<<sms, 256, smemBytes>>>(ws, rows, blocks, kv); });
    double bytes = reduces ? (double)sms * blocks * kRows * kCols * 4 : 0;
    // Check: every added value is exact in fp32 for these counts? Sum of all.
    std::vector<float> out((size_t)skv * kCols);
    CK(cudaMemcpy(out.data(), ws, out.size() * 4, cudaMemcpyDeviceToHost));
    double s = 0; for (float x : out) s += x;
    printf("%-6s %8.3f ms  %7.1f GB/s  per block %.2f us  checksum %.6e\n", name, best,
           bytes / best / 1e6, best * 1e3 / blocks, s);
  };
  if (!lastOnly) {
    run(scatter<0>, "red");
    run(scatter<1>, "bulk");
    run(scatter<2>, "bulk2");
    run(scatter<3>, "quad");
    run(scatter<4>, "quad1");
    run(scatter<6>, "hex1");
  }
  run(scatter<5>, "oct1");
  run(scatter<7>, "gather", false);
  run(scatter<8>, "oct1+g");
  return 0;
}
