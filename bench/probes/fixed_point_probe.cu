// Probe: the deterministic mode's dKV scatter (64-bit fixed point) against the
// default's fp32 one, from the one warpgroup that scatters in the
// warp-specialized backward (warpgroup 1; one CTA per SM). Each block adds
// 64 rows x 576 columns, in nine 64-column pieces. Modes:
//   f32-red     red.v4.f32, 8 threads per 128-byte run (the default's pattern)
//   u64-red     red.add.u64 per element, a warp adds 256 contiguous bytes
//               (the deterministic mode now: 4x the default's operations)
//   u64-mma     the same from the wgmma accumulator layout, as the kernel
//               lowers it: per instruction 8 rows x 32 bytes
//   u64-pack    red.add.u64 carrying two 32-bit lanes (2x the operations)
//   u64-bulk    st.shared of the piece as i64, then one
//               cp.reduce.async.bulk .add.u64 per 512-byte row (one stage)
//   u64-bulk2   the same with two stages (alternating pieces)
//   f32-bulk2   fp32 rows through two stages (the f32 staging of 7bb7c74)
// Each mode runs alone and with warpgroup 0 gathering each block's 64 bf16 kv
// rows (the L2 traffic of one per-token block, without its GEMMs), as "+g".
// The question: does a bulk reduction cost the L2 per row or per element?
// usage: fixed_point_probe [blocks_per_cta] [timed repetitions]
#include <vector>
#include "probe.cuh"

constexpr int kCols = 576, kRows = 64, kPiece = 64, kPieces = kCols / kPiece;
constexpr int kKvChunks = kCols * 2 / 16;  // 16-byte chunks of a bf16 kv row
constexpr int kPitch64 = kPiece + 2;        // i64 per staged row: 528 bytes, 16-byte aligned
constexpr int kPitch32 = kPiece + 4;        // f32 per staged row: 272 bytes

enum Mode { F32Red, U64Red, U64Mma, U64Pack, U64Bulk, U64Bulk2, F32Bulk2 };

__device__ __forceinline__ void red64(unsigned long long *p, unsigned long long v) {
  asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
template <bool I64> __device__ __forceinline__ void bulk_red(void *g, const void *s, int bytes) {
  unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(s));
  if (I64)
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u64 [%0], [%1], %2;"
                 :: "l"(g), "r"(sa), "r"(bytes) : "memory");
  else
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 :: "l"(g), "r"(sa), "r"(bytes) : "memory");
}
template <Mode M, bool Gather>
__global__ void __launch_bounds__(256, 1) scatter(void *ws, const int *rows, int blocks,
                                                  const uint4 *kv) {
  extern __shared__ __align__(1024) unsigned char smem[];
  int tid = threadIdx.x, wg = tid / 128, t = tid % 128, warp = t / 32, lane = t % 32;
  if (wg == 0) {
    if (!Gather) return;
    uint4 *k = reinterpret_cast<uint4 *>(smem + 100 * 1024);  // 72 KiB above the stages
    gather_blocks(k, kv, rows + blockIdx.x * blocks * kRows, blocks, t);
    return;
  }
  float *wf = static_cast<float *>(ws);
  auto *wu = static_cast<unsigned long long *>(ws);
  int piece = 0;
  for (int b = 0; b < blocks; ++b) {
    const int *r = rows + (blockIdx.x * blocks + b) * kRows;
    for (int p = 0; p < kPieces; ++p, ++piece) {
      float v = 1.0f + tid * 1e-3f + b;
      unsigned long long u = 1ull + tid + b;
      if (M == F32Red) {
        for (int i = 0; i < 4; ++i) {
          int row = r[16 * warp + 4 * i + lane / 8];
          float *dst = wf + (size_t)row * kCols + p * kPiece + (lane % 8) * 4;
          red4(dst, v);
          red4(dst + 32, v);
        }
      } else if (M == U64Red) {
        for (int k = 0; k < 32; ++k) {
          int row = r[16 * warp + k / 2];
          red64(wu + (size_t)row * kCols + p * kPiece + (k % 2) * 32 + lane, u);
        }
      } else if (M == U64Mma) {
        for (int k = 0; k < 32; ++k) {
          int row = r[16 * warp + lane / 4 + 8 * (k % 2)];
          int col = (lane % 4) * 2 + 8 * (k / 4) + (k / 2) % 2;
          red64(wu + (size_t)row * kCols + p * kPiece + col, u);
        }
      } else if (M == U64Pack) {
        // Two 32-bit lanes per 64-bit word: a row's 64 columns are 32 words.
        for (int k = 0; k < 16; ++k) {
          int row = r[16 * warp + k];
          red64(wu + (size_t)row * (kCols / 2) + p * (kPiece / 2) + lane, u);
        }
      } else {
        constexpr bool I64 = M != F32Bulk2;
        constexpr int stages = M == U64Bulk ? 1 : 2;
        constexpr int pitch = I64 ? kPitch64 : kPitch32;
        constexpr int stageBytes = kRows * pitch * (I64 ? 8 : 4);
        unsigned char *buf = smem + (piece % stages) * stageBytes;
        if (t < kRows) {
          if (stages == 2) bulk_wait_read<1>(); else bulk_wait_read<0>();
        }
        wg_bar(wg);
        // This thread's 32 values: 2 rows x 16 columns, 16-byte stores.
        for (int k = 0; k < 2; ++k) {
          int row = t / 4 + 32 * k, col = (t % 4) * 16;
          if (I64) {
            auto *d = reinterpret_cast<ulonglong2 *>(buf) + (row * pitch + col) / 2;
            for (int c = 0; c < 8; ++c) d[c] = make_ulonglong2(u, u);
          } else {
            auto *d = reinterpret_cast<float4 *>(buf) + (row * pitch + col) / 4;
            for (int c = 0; c < 4; ++c) d[c] = make_float4(v, v, v, v);
          }
        }
        fence_async();
        wg_bar(wg);
        if (t < kRows) {
          int row = r[t];
          size_t off = (size_t)row * kCols + p * kPiece;
          bulk_red<I64>(I64 ? static_cast<void *>(wu + off) : static_cast<void *>(wf + off),
                        buf + t * pitch * (I64 ? 8 : 4), kPiece * (I64 ? 8 : 4));
          bulk_commit();
        }
      }
    }
  }
  if (M >= U64Bulk && t < kRows) bulk_wait_read<0>();
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 200;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  int sms = 0, skv = 4096;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<int> h((size_t)sms * blocks * kRows);
  srand(1);
  for (auto &x : h) x = rand() % skv;
  int *rows; void *ws; uint4 *kv;
  size_t wsBytes = (size_t)skv * kCols * 8;
  CK(cudaMalloc(&rows, h.size() * 4));
  CK(cudaMalloc(&kv, (size_t)skv * kKvChunks * 16));
  CK(cudaMemset(kv, 0, (size_t)skv * kKvChunks * 16));
  CK(cudaMalloc(&ws, wsBytes));
  CK(cudaMemcpy(rows, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  int smemBytes = kProbeSharedBytes;
  double ref = 0;
  auto run = [&](auto kernel, const char *name) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    float best = best_of(reps, [&] { kernel<<<sms, 256, smemBytes>>>(ws, rows, blocks, kv); });
    double us = best * 1e3 / blocks;
    if (ref == 0) ref = us;
    printf("%-12s %8.3f ms  per block %6.2f us  %5.2fx f32-red\n", name, best, us, us / ref);
  };
  run(scatter<F32Red, false>, "f32-red");
  run(scatter<U64Red, false>, "u64-red");
  run(scatter<U64Mma, false>, "u64-mma");
  run(scatter<U64Pack, false>, "u64-pack");
  run(scatter<U64Bulk, false>, "u64-bulk");
  run(scatter<U64Bulk2, false>, "u64-bulk2");
  run(scatter<F32Bulk2, false>, "f32-bulk2");
  run(scatter<F32Red, true>, "f32-red+g");
  run(scatter<U64Red, true>, "u64-red+g");
  run(scatter<U64Mma, true>, "u64-mma+g");
  run(scatter<U64Pack, true>, "u64-pack+g");
  run(scatter<U64Bulk, true>, "u64-bulk+g");
  run(scatter<U64Bulk2, true>, "u64-bulk2+g");
  run(scatter<F32Bulk2, true>, "f32-bulk2+g");
  return 0;
}
