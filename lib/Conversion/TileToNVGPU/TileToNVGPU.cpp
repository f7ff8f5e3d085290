//===- TileToNVGPU.cpp - Tile kernels to gpu.func -------------------------===//
//
// The pass outlines each tile.kernel into a gpu.func, records what the runtime
// needs to launch it (threads, shared memory, argument ABI) on the module,
// and lowers the tile ops with the patterns of this folder.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace sparse_mla {
#define GEN_PASS_DEF_CONVERTTILETONVGPUPASS
#include "sparse-mla/Conversion/Passes.h.inc"
} // namespace sparse_mla

using namespace mlir;
using namespace sparse_mla;
using namespace sparse_mla::tile;

namespace {

/// Replaces each tile.wait by the cp.async wait that leaves in flight the
/// copy groups started after its latest-started token, and a CTA barrier.
static void materializeWaits(ModuleOp module) {
  module.walk([](WaitOp wait) {
    int64_t pending = 0;
    bool found = wait.getTokens().empty();
    for (Operation *op = wait->getPrevNode(); op && !found; op = op->getPrevNode()) {
      if (llvm::any_of(op->getResults(), [&](Value r) {
            return llvm::is_contained(wait.getTokens(), r);
          })) {
        found = true;
        break;
      }
      if (isa<AsyncCopyOp, GatherRowsOp>(op))
        ++pending;
      else if (op->getNumRegions())
        break; // copies inside nested regions: do not count, wait for all
    }
    OpBuilder b(wait);
    AsyncWaitOp::create(b, wait.getLoc(), found ? pending : 0);
    BarrierOp::create(b, wait.getLoc());
    wait.erase();
  });
}

/// The lowering needs what the passes before it give: a layout for every
/// tile, an offset for every shared allocation and scratch.
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
    auto alloc = dyn_cast<AllocOp>(op);
    auto scratch = dyn_cast<ScratchOpInterface>(op);
    if ((alloc && !alloc.getOffset()) ||
        (scratch && scratch.getScratchBytes() && !scratch.getScratchOffset())) {
      op->emitOpError("has no shared-memory offset: run tile-allocate-shared first");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

static std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// What the runtime needs to launch `kernel`: its argument ABI in the
/// standard memref-descriptor convention, threads and shared memory.
static DictionaryAttr kernelManifest(KernelOp kernel) {
  Builder b(kernel.getContext());
  SmallVector<Attribute> args;
  for (Type t : kernel.getArgumentTypes()) {
    SmallVector<NamedAttribute> entry;
    if (auto m = dyn_cast<MemRefType>(t)) {
      entry.push_back(b.getNamedAttr("kind", b.getStringAttr("memref")));
      entry.push_back(b.getNamedAttr("rank", b.getI64IntegerAttr(m.getRank())));
      entry.push_back(b.getNamedAttr("dtype", b.getStringAttr(typeName(m.getElementType()))));
      entry.push_back(b.getNamedAttr("shape", b.getDenseI64ArrayAttr(m.getShape())));
    } else {
      entry.push_back(b.getNamedAttr("kind", b.getStringAttr("scalar")));
      entry.push_back(b.getNamedAttr("dtype", b.getStringAttr(typeName(t))));
    }
    args.push_back(b.getDictionaryAttr(entry));
  }
  // The variant's shape parameters (tile-specialize), for the runtime to pick.
  auto params = kernel->getAttrOfType<DictionaryAttr>("tile.params");
  int64_t shared = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>("tile.shared_bytes"))
    shared = attr.getInt();
  return b.getDictionaryAttr({
      b.getNamedAttr("name", kernel.getSymNameAttr()),
      b.getNamedAttr("threads", b.getI64IntegerAttr(kernel.getNumThreads())),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(shared)),
      b.getNamedAttr("cluster", b.getI64IntegerAttr(kernel.getClusterSize())),
      b.getNamedAttr("args", b.getArrayAttr(args)),
      b.getNamedAttr("params", params ? params : b.getDictionaryAttr({})),
  });
}

struct ConvertTileToNVGPUPass
    : public sparse_mla::impl::ConvertTileToNVGPUPassBase<ConvertTileToNVGPUPass> {
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
    materializeWaits(module);
    groupAdjacentGemms(module);
    assignBarrierIds(module);

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    // The target is attached by the pipeline (nvvm-attach-target).
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "sparse_mla_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());

    SmallVector<Attribute> manifests;
    auto global = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Global);
    for (KernelOp kernel : kernels) {
      manifests.push_back(kernelManifest(kernel));
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
    module->setAttr("sparse_mla.kernels", b.getArrayAttr(manifests));

    TileTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateElementwiseToVectorPatterns(converter, patterns);
    populateGlobalMemoryToNVGPUPatterns(converter, patterns);
    populateSharedMemoryToNVGPUPatterns(converter, patterns);
    populateAsyncCopiesToNVGPUPatterns(converter, patterns);
    populateScattersToNVGPUPatterns(converter, patterns);
    populateBarriersToNVGPUPatterns(converter, patterns);
    populateElementsToNVGPUPatterns(converter, patterns);
    populateGemmToNVGPUPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
