//===- TileToNVVM.cpp - Tile kernels to gpu.func -------------------------===//
//
// The pass outlines each tile.kernel into a gpu.func and lowers the tile ops
// with the patterns of this folder. What the patterns read, the tile passes
// before it leave: layouts, shared offsets, counted waits
// (tile-materialize-waits), wgmma groups (tile-group-gemms), barrier ids
// (tile-assign-barrier-ids); the manifest is tile-record-manifest's.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace sparse_mla {
#define GEN_PASS_DEF_CONVERTTILETONVVMPASS
#include "sparse-mla/Conversion/Passes.h.inc"
} // namespace sparse_mla

using namespace mlir;
using namespace sparse_mla;
using namespace sparse_mla::tile;

namespace {

/// The lowering needs what the passes before it give: a layout for every
/// tile, an offset for every shared allocation and scratch, counted waits
/// and barrier ids.
static LogicalResult requirePlaced(KernelOp kernel) {
  auto unplaced = [](Type t) {
    if (auto reg = dyn_cast<RegTileType>(t))
      return !reg.getLayout();
    if (auto smem = dyn_cast<SmemTileType>(t))
      return !smem.getSharedLayout();
    return false;
  };
  WalkResult r = kernel.walk([&](Operation *op) {
    bool missing = llvm::any_of(op->getOperandTypes(), unplaced) ||
                   llvm::any_of(op->getResultTypes(), unplaced);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        missing |= llvm::any_of(block.getArgumentTypes(), unplaced);
    if (missing) {
      op->emitOpError("has a tile without a layout: run tile-assign-layouts first");
      return WalkResult::interrupt();
    }
    if (isa<WaitOp>(op)) {
      op->emitOpError("waits by tokens: run tile-materialize-waits first");
      return WalkResult::interrupt();
    }
    auto barrier = dyn_cast<BarrierOp>(op);
    if (((barrier && barrier.getWarpgroups()) ||
         (isa<AnyOp>(op) && op->getParentOfType<WarpSpecializeOp>())) &&
        !op->hasAttr(kBarrierIdAttr)) {
      op->emitOpError("has no barrier id: run tile-assign-barrier-ids first");
      return WalkResult::interrupt();
    }
    auto alloc = dyn_cast<AllocOp>(op);
    auto scratch = dyn_cast<ScratchOpInterface>(op);
    if ((alloc && !alloc.getOffset()) ||
        (scratch && scratch.getScratchBytes() && !scratch.getScratchPlace())) {
      op->emitOpError("has no shared-memory offset: run tile-allocate-shared first");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

struct ConvertTileToNVVMPass
    : public sparse_mla::impl::ConvertTileToNVVMPassBase<ConvertTileToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    for (KernelOp kernel : kernels)
      if (failed(requireSpecialized(kernel)) || failed(requirePlaced(kernel)))
        return signalPassFailure();

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    // The target is attached by the pipeline (nvvm-attach-target).
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "sparse_mla_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());

    auto global = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Global);
    for (KernelOp kernel : kernels) {
      SmallVector<Type> argTypes;
      for (Type t : kernel.getArgumentTypes()) {
        if (auto m = dyn_cast<MemRefType>(t))
          t = MemRefType::get(m.getShape(), m.getElementType(), m.getLayout(), global);
        argTypes.push_back(t);
      }
      b.setInsertionPointToEnd(gpuModule.getBody());
      auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                         b.getFunctionType(argTypes, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
      func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
          {static_cast<int32_t>(kernel.getNumThreads()), 1, 1}));
      // One CTA's register budget: lets ptxas honour setmaxnreg.
      func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
      int64_t cluster = kernel.getClusterSize();
      if (cluster > 1)
        func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                      b.getDenseI32ArrayAttr({static_cast<int32_t>(cluster), 1, 1}));
      bool staged = kernel.walk([](ScatterAddRowsOp op) {
                          return op.getStaging() ? WalkResult::interrupt()
                                                 : WalkResult::advance();
                        }).wasInterrupted();
      Region &body = func.getBody();
      body.front().erase();
      body.takeBody(kernel.getBody());
      for (auto [arg, t] : llvm::zip(body.getArguments(), argTypes))
        arg.setType(t);
      Operation *ret = body.front().getTerminator();
      b.setInsertionPoint(ret);
      // Staged scatters read shared memory until their bulk groups complete.
      if (staged)
        NVVM::CpAsyncBulkWaitGroupOp::create(b, ret->getLoc(), 0, UnitAttr());
      // No CTA of a cluster leaves while a peer may still write into its
      // shared memory or arrive at its barriers.
      if (cluster > 1)
        clusterBarrier(b, ret->getLoc());
      gpu::ReturnOp::create(b, ret->getLoc());
      ret->erase();
      kernel.erase();
    }

    TileTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateElementwiseToVectorPatterns(converter, patterns);
    populateGlobalMemoryToNVVMPatterns(converter, patterns);
    populateSharedMemoryToNVVMPatterns(converter, patterns);
    populateAsyncCopiesToNVVMPatterns(converter, patterns);
    populateScattersToNVVMPatterns(converter, patterns);
    populateBarriersToNVVMPatterns(converter, patterns);
    populateCountersToNVVMPatterns(converter, patterns);
    populateElementsToNVVMPatterns(converter, patterns);
    populateGemmToNVVMPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
