//===- InsertChannels.h - Channels for buffers partitions share -*- C++ -*-===//
//
// tile-split-partitions hands shared buffers over between the partitions of
// a tile.warp_specialize written once: where one partition writes a buffer
// that others read, it puts a channel in between.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_DIALECT_TILE_TRANSFORMS_INSERTCHANNELS_H
#define SPARSE_MLA_DIALECT_TILE_TRANSFORMS_INSERTCHANNELS_H

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace sparse_mla::tile {

/// The partitions that run an op of an unsplit tile.warp_specialize's body,
/// as a bit mask (tile-split-partitions' assignment).
using PartitionsOf = llvm::function_ref<uint64_t(mlir::Operation *)>;

/// For each shared tile allocated outside `ws` (unsplit) that ops of one
/// partition write inside its body and ops of others read there, all in
/// one block: a tile.channel of one stage in its place, with put_enter
/// before the first write and put_exit after the last (after the copies'
/// tokens), get_enter before the first read and get_exit after the last
/// (after the wait of an asynchronous GEMM that reads it). Buffers written
/// by one partition before any of them is read share one channel. Sets
/// `inserted` when it adds any; fails with a diagnostic on a buffer it
/// cannot hand over.
mlir::LogicalResult insertChannels(WarpSpecializeOp ws, PartitionsOf partitionsOf,
                                   bool &inserted);

} // namespace sparse_mla::tile

#endif
