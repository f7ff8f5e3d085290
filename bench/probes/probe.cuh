// What the probes share: error checks, the PTX they issue by hand, and the
// timing of a launch (best of `reps` after one untimed warm-up).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// One CTA per SM, as the backward.
constexpr int kProbeSharedBytes = 225 * 1024;

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void red4(float *p, float a, float b, float c, float d) {
  asm volatile("red.relaxed.gpu.global.add.v4.f32 [%0], {%1, %2, %3, %4};"
               :: "l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
__device__ __forceinline__ void red4(float *p, float v) { red4(p, v, v, v, v); }
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;"); }
template <int N> __device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
__device__ __forceinline__ void fence_async() { asm volatile("fence.proxy.async.shared::cta;"); }
__device__ __forceinline__ void wg_bar(int wg) { asm volatile("bar.sync %0, 128;" :: "r"(wg + 1)); }
__device__ __forceinline__ void cp_async16(void *s, const void *g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_addr(s)), "l"(g) : "memory");
}

// Warpgroup 0 gathers `blocks` blocks of 64 bf16 kv rows of 576 columns (72
// chunks of 16 bytes) into shared memory, each waited for before the next:
// the backward's gather without its GEMMs.
__device__ __forceinline__ void gather_blocks(uint4 *k, const uint4 *kv, const int *rows,
                                              int blocks, int t) {
  constexpr int kRows = 64, kChunks = 576 * 2 / 16;
  for (int b = 0; b < blocks; ++b, rows += kRows) {
    for (int c = t; c < kRows * kChunks; c += 128)
      cp_async16(k + c, kv + (size_t)rows[c / kChunks] * kChunks + c % kChunks);
    asm volatile("cp.async.wait_all;" ::: "memory");
    wg_bar(0);
  }
}

// Milliseconds of the fastest of `reps` timed calls of `launch`, after one
// checked, untimed call.
template <class Launch> float best_of(int reps, Launch launch) {
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float best = 1e9f;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}
