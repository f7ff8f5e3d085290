//===- Hopper.h - The numbers of the sm_90a target --------------*- C++ -*-===//
//
// The one home of the target's sizes and limits that the dialect, the
// passes and the lowering share: how threads make warps and warpgroups, what
// one wgmma computes, what shared memory a CTA has and how it is aligned.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_TARGET_HOPPER_H
#define SPARSE_MLA_TARGET_HOPPER_H

#include <cstdint>

namespace sparse_mla::hopper {

/// Threads of a warp; warps of a warpgroup, the unit a register tile is
/// spread over and a wgmma is issued by.
constexpr int64_t kWarpThreads = 32;
constexpr int64_t kWarpgroupWarps = 4;
constexpr int64_t kWarpgroupThreads = kWarpThreads * kWarpgroupWarps;

/// Dynamic shared memory one CTA may use: 227 KiB less the 16 static bytes
/// of the symbol that the upstream lowering of gpu.dynamic_shared_memory
/// defines (`.shared .align 16 .b8 __dynamic_shmem__0`): a launch asking for
/// all 227 KiB dynamic fails with CUDA_ERROR_INVALID_VALUE.
constexpr int64_t kSharedBytesPerCTA = 232448 - 16;
/// Shared memory the hardware keeps for itself per resident CTA, counted
/// against the SM's with the CTA's own (how many CTAs an SM holds).
constexpr int64_t kReservedSharedBytesPerCTA = 1024;
/// The 128-byte swizzle repeats every 8 rows of 128 bytes: shared tiles
/// start on multiples of it so that the pattern lines up with the address.
constexpr int64_t kSwizzleAtomBytes = 1024;
/// The widest access of a thread (cp.async, ld/st.v4): 16 bytes.
constexpr int64_t kAccessBytes = 16;

/// wgmma.mma_async with 16-bit operands: M rows per warpgroup, K per
/// instruction, N a multiple of kWgmmaNStep up to kWgmmaMaxN.
constexpr int64_t kWgmmaM = 64;
constexpr int64_t kWgmmaK = 16;
constexpr int64_t kWgmmaNStep = 8;
constexpr int64_t kWgmmaMaxN = 256;

/// 32-bit registers of a CTA (the SM's file), and the per-thread budgets
/// setmaxnreg may set: multiples of 8 in [24, 256].
constexpr int64_t kRegistersPerCTA = 65536;
constexpr int64_t kSetMaxNRegMin = 24;
constexpr int64_t kSetMaxNRegMax = 256;
constexpr int64_t kSetMaxNRegStep = 8;
/// Registers one thread may address.
constexpr int64_t kMaxRegistersPerThread = 255;

/// Hardware barriers of a CTA (bar.sync ids); 0 is the CTA's own.
constexpr int64_t kNamedBarriers = 16;

/// The L2 cache of the chip (H100 and H200: 50 MiB). The runtime sizes the
/// key ranges of long contexts by it (from the manifest's "target").
constexpr int64_t kL2Bytes = 50 << 20;
/// The L2 takes one request per 128-byte line a warp's global reduction
/// touches (bench/probes/fixed_point_probe.cu).
constexpr int64_t kL2LineBytes = 128;

} // namespace sparse_mla::hopper

#endif
