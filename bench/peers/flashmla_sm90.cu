// A C entry point to FlashMLA's SM90 sparse prefill (deepseek-ai/FlashMLA,
// csrc/sm90/prefill/sparse at 9241ae3e), for the benchmark's ctypes: its
// torch binding replaced by plain pointers, so the GPU machine needs neither
// a compiler nor a matching libtorch. bench/peers/build_flashmla.sh builds it;
// the library is carried, never committed.
//
// Its contract (FlashMLA's): one kv head (MQA), heads a multiple of 64, topk a
// multiple of 128, indices [s_q, 1, topk] (negative or >= s_kv: invalid), a
// natural lse over the keys; out [s_q, h_q, 512] bf16, max_logits and lse
// [s_q, h_q] fp32, contiguous.
#include <cstdio>
#include <exception>

#include "params.h"
#include "sm90/prefill/sparse/phase1.h"

extern "C" int flashmla_sm90_sparse_prefill(
    int s_q, int s_kv, int h_q, int d_qk, int topk, float sm_scale,
    const void *q, int stride_q_s, int stride_q_h,
    const void *kv, int stride_kv_s,
    const int *indices, int stride_indices_s,
    const float *attn_sink, const int *topk_length,
    void *out, float *max_logits, float *lse,
    int num_sm, void *stream, char *error, int error_len) {
  constexpr float kLog2e = 1.4426950408889634f;
  SparseAttnFwdParams params = {
      s_q, s_kv, h_q, /*h_kv=*/1, d_qk, /*d_v=*/512, topk, sm_scale, sm_scale * kLog2e,
      (cutlass::bfloat16_t *)q, (cutlass::bfloat16_t *)kv, (int *)indices,
      (float *)attn_sink, (int *)topk_length,
      stride_q_s, stride_q_h, stride_kv_s, /*stride_kv_h_kv=*/d_qk,
      stride_indices_s, /*stride_indices_h_kv=*/topk,
      (cutlass::bfloat16_t *)out, max_logits, lse,
      num_sm, (cudaStream_t)stream};
  try {
    bool lengths = topk_length != nullptr;
    if (d_qk == 576 && lengths)
      sm90::fwd::run_fwd_phase1_kernel<576, true>(params);
    else if (d_qk == 576)
      sm90::fwd::run_fwd_phase1_kernel<576, false>(params);
    else if (d_qk == 512 && lengths)
      sm90::fwd::run_fwd_phase1_kernel<512, true>(params);
    else if (d_qk == 512)
      sm90::fwd::run_fwd_phase1_kernel<512, false>(params);
    else {
      std::snprintf(error, error_len, "d_qk must be 512 or 576, got %d", d_qk);
      return 1;
    }
  } catch (const std::exception &e) {
    std::snprintf(error, error_len, "%s", e.what());
    return 1;
  }
  return 0;
}
