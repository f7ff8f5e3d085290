//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//
#ifndef SPARSE_MLA_DIALECT_TILE_IR_TILEDIALECT_H
#define SPARSE_MLA_DIALECT_TILE_IR_TILEDIALECT_H

#include "sparse-mla/Target/Hopper.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

#include "sparse-mla/Dialect/Tile/IR/TileDialect.h.inc"
#include "sparse-mla/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileTypes.h.inc"

namespace sparse_mla::tile::OpTrait {
/// The register-tile operands and results of the op share one layout.
template <typename ConcreteType>
class SameLayoutTiles
    : public mlir::OpTrait::TraitBase<ConcreteType, SameLayoutTiles> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op);
};
mlir::LogicalResult verifySameLayoutTiles(mlir::Operation *op);
template <typename ConcreteType>
mlir::LogicalResult SameLayoutTiles<ConcreteType>::verifyTrait(mlir::Operation *op) {
  return verifySameLayoutTiles(op);
}
} // namespace sparse_mla::tile::OpTrait

#include "sparse-mla/Dialect/Tile/IR/TileInterfaces.h.inc"

#define GET_OP_CLASSES
#include "sparse-mla/Dialect/Tile/IR/TileOps.h.inc"

namespace sparse_mla::tile {

/// The target's numbers (sparse-mla/Target/Hopper.h), as `hopper::` in the
/// dialect, its passes and its lowering.
namespace hopper = ::sparse_mla::hopper;

/// The largest tiles: a register tile of a warpgroup (512 elements a
/// thread, twice the registers it has) and a shared tile (64 MB of f32,
/// far past the 227 KiB of a CTA, small enough that byte counts fit).
constexpr int64_t kMaxRegTileElements = 1 << 16;
constexpr int64_t kMaxSmemTileElements = 1 << 24;

/// Attributes that the passes leave for later passes and the lowering.
/// On a kernel: its variant's shape parameters (tile-specialize) and its
/// bytes of shared memory (tile-allocate-shared).
constexpr llvm::StringLiteral kParamsAttr = "tile.params";
/// A kernel tensor argument's stated extents (indices into the kernel's
/// `sizes`, -1: any) and whether the caller may leave it out.
constexpr llvm::StringLiteral kExtentsAttr = "tile.extents";
constexpr llvm::StringLiteral kOptionalAttr = "tile.optional";
constexpr llvm::StringLiteral kSharedBytesAttr = "tile.shared_bytes";
/// On an op of the one body of a tile.warp_specialize not yet split: the
/// partition that runs it (tile-split-partitions).
constexpr llvm::StringLiteral kPartitionAttr = "tile.partition";
/// On a tile.gemm there: the first result row (column) of each
/// partition's share (the GEMM runs in every partition, each on its own).
constexpr llvm::StringLiteral kPartitionRowsAttr = "tile.partition_rows";
constexpr llvm::StringLiteral kPartitionColsAttr = "tile.partition_cols";
/// On a barrier of some warpgroups, and a vote inside a partition: its
/// hardware barrier id and thread count (tile-assign-barrier-ids).
constexpr llvm::StringLiteral kBarrierIdAttr = "tile.barrier_id";
constexpr llvm::StringLiteral kBarrierThreadsAttr = "tile.barrier_threads";
/// On GEMMs of one wgmma group but its first / last (tile-group-gemms).
constexpr llvm::StringLiteral kGroupNotFirstAttr = "tile.wgmma_group_not_first";
constexpr llvm::StringLiteral kGroupNotLastAttr = "tile.wgmma_group_not_last";
/// On the module: what the runtime needs to launch each kernel
/// (tile-record-manifest), read by sparse-mla-emit-kernels.
constexpr llvm::StringLiteral kKernelsManifestAttr = "sparse_mla.kernels";

/// One dimension of a `!tile.reg` or `!tile.smem`: a size, or a shape
/// parameter `{name}` (size kDynamic) that tile-specialize binds.
struct TileDim {
  int64_t size;
  mlir::StringAttr symbol;
  bool isStatic() const { return !symbol; }
  bool operator==(const TileDim &o) const {
    return size == o.size && symbol == o.symbol;
  }
  bool operator!=(const TileDim &o) const { return !(*this == o); }
  /// `64` or `{name}`, as the type prints it.
  std::string str() const;
};

TileDim getTileDim(mlir::Type tile, unsigned i);
/// Whether a memref may be a kernel's tensor: the default memory space, and
/// the identity layout or 2-D rows of contiguous elements apart by a
/// dynamic stride (`strided<[?, 1]>`, a view of a wider matrix).
bool isGlobalTensor(mlir::MemRefType type);
/// A counter matrix (tile.counter_add and _wait, smla.key_clock): a 2-D
/// global memref of i32 with the identity layout; else a diagnostic.
mlir::LogicalResult verifyCounter(mlir::Operation *op, mlir::MemRefType type);
/// Mbarriers (tile.write's, tile.mbarrier_*'s): a 1 x N shared tile of
/// i64; else a diagnostic.
mlir::LogicalResult verifyMBarriers(mlir::Operation *op, mlir::Type bars);
/// An op that reaches another CTA's shared memory (`remote`: `cta` given)
/// needs a kernel launched in clusters; else a diagnostic.
mlir::LogicalResult verifyClusterAccess(mlir::Operation *op, bool remote);
/// Same rank and, dimension by dimension, the same size or parameter.
bool sameShape(mlir::Type a, mlir::Type b);
/// Fails with a diagnostic on a kernel that still has shape parameters (the
/// passes after tile-specialize need sizes).
mlir::LogicalResult requireSpecialized(KernelOp kernel);
/// `rows`, a tile of i32 row indices, with -1 (a row that gathers and
/// scatters skip) wherever the i1 `keep` is false: a tile.map at `b`.
mlir::Value keepRowsIf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value rows,
                       mlir::Value keep);
/// The tile.warp_specialize around `op` and the number of its partition
/// that runs `op`, if any.
std::optional<std::pair<WarpSpecializeOp, unsigned>> getPartition(mlir::Operation *op);
/// The warpgroups that run `op`: [first, first + count) of its
/// tile.warp_specialize partition, or every warpgroup of its kernel.
std::pair<int64_t, int64_t> getRunningWarpgroups(mlir::Operation *op);
/// The registers a thread running `op` may use: its partition's
/// `setmaxnreg` budget, at most what one thread may address.
int64_t getRegisterBudget(mlir::Operation *op);
/// What an index or integer `v` is known to be a multiple of, from the
/// arithmetic that computes it (1: nothing known; a constant 0: any).
int64_t knownMultiple(mlir::Value v);

} // namespace sparse_mla::tile

#endif
