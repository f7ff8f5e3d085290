//===- Synchronization.cpp - Barriers and mbarriers -------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

Value sparse_mla::tile::mbarrierPointer(OpBuilder &b, Location loc, Value bars, Value index) {
  Value off = arith::MulIOp::create(b, loc, toI32(b, loc, index), i32Const(b, loc, 8));
  return bytePointer(b, loc, bars, off);
}

Value sparse_mla::tile::mbarrierAddress(OpBuilder &b, Location loc, Value bars, Value index) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), mbarrierPointer(b, loc, bars, index));
}

bool sparse_mla::tile::inClusterKernel(Operation *op) {
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  return func && func->hasAttr(NVVM::NVVMDialect::getClusterDimAttrName());
}

void sparse_mla::tile::clusterBarrier(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
}

/// `bar.sync 1 + w, 128`: the threads of the calling warpgroup w (barrier 0
/// is the CTA's).
void sparse_mla::tile::warpgroupBarrier(OpBuilder &b, Location loc) {
  Value id = arith::AddIOp::create(b, loc, warpgroupIndex(b, loc), i32Const(b, loc, 1));
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32Const(b, loc, hopper::kWarpgroupThreads),
                          NVVM::BarrierReductionAttr{}, Value());
}
