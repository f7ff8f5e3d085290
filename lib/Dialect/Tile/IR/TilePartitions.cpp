//===- TilePartitions.cpp - Which warpgroups run an op ----------------------===//
//
// A kernel's warpgroups all run its body, unless tile.warp_specialize gives
// each partition of them a region and a register budget: the passes ask
// here which warpgroups run an op and how many registers they have.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Target/Hopper.h"

using namespace mlir;
using namespace sparse_mla::tile;

std::pair<int64_t, int64_t> WarpSpecializeOp::getPartitionWarpgroups(unsigned r) {
  std::optional<ArrayRef<int64_t>> sizes = getWarpgroups();
  if (!sizes)
    return {r, 1};
  int64_t first = 0;
  for (unsigned i = 0; i < r; ++i)
    first += (*sizes)[i];
  return {first, (*sizes)[r]};
}

std::optional<std::pair<WarpSpecializeOp, unsigned>> sparse_mla::tile::getPartition(Operation *op) {
  auto partitions = op->getParentOfType<WarpSpecializeOp>();
  if (!partitions)
    return std::nullopt;
  Region *region = op->getParentRegion();
  while (region->getParentOp() != partitions.getOperation())
    region = region->getParentOp()->getParentRegion();
  return std::make_pair(partitions, region->getRegionNumber());
}

std::pair<int64_t, int64_t> sparse_mla::tile::getRunningWarpgroups(Operation *op) {
  if (auto partition = getPartition(op))
    return partition->first.getPartitionWarpgroups(partition->second);
  auto kernel = op->getParentOfType<KernelOp>();
  return {0, kernel ? kernel.getWarpgroups() : 1};
}

int64_t sparse_mla::tile::getRegisterBudget(Operation *op) {
  int64_t budget = hopper::kMaxRegistersPerThread;
  if (auto partition = getPartition(op))
    budget = std::min(budget, partition->first.getRegisters()[partition->second]);
  return budget;
}

/// `tile.partition = r` names a partition of the unsplit tile.warp_specialize
/// around the op. The op verifier of tile.warp_specialize refuses it in a
/// split one; the other attributes of the dialect are the passes'.
LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kPartitionRowsAttr || attr.getName() == kPartitionColsAttr) {
    StringRef what = attr.getName() == kPartitionRowsAttr ? "row" : "column";
    auto starts = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto ws = op->getParentOfType<WarpSpecializeOp>();
    if (!isa<GemmOp>(op) || !ws || !ws.isUnsplit())
      return op->emitOpError("'") << attr.getName().getValue() << "' shares a tile.gemm's "
                                  << what << "s between the partitions of an unsplit "
                                  << "tile.warp_specialize";
    size_t n = ws.getRegisters().size();
    if (!starts || starts.size() != n || starts[0] != 0 ||
        llvm::any_of(llvm::seq<size_t>(1, n), [&](size_t i) { return starts[i] <= starts[i - 1]; }))
      return op->emitOpError("'") << attr.getName().getValue() << "' gives the first " << what
                                  << " of each of the " << n << " partitions: 0, then increasing";
    return success();
  }
  if (attr.getName() != kPartitionAttr)
    return success();
  auto r = dyn_cast<IntegerAttr>(attr.getValue());
  auto ws = op->getParentOfType<WarpSpecializeOp>();
  if (!ws)
    return op->emitOpError("has '") << kPartitionAttr
                                    << "' but stands outside tile.warp_specialize";
  int64_t partitions = ws.getRegisters().size();
  if (!r || r.getInt() < 0 || r.getInt() >= partitions)
    return op->emitOpError("'") << kPartitionAttr << "' must be an integer in [0, "
                                << partitions << "), one of the enclosing "
                                   "tile.warp_specialize's partitions";
  return success();
}
