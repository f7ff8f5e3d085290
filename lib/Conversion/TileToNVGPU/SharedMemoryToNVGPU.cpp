//===- SharedMemoryToNVGPU.cpp - Tile shared-memory tiles to LLVM ---------===//
//
// Shared tiles are byte offsets into the CTA's dynamic shared memory;
// register tiles move in and out of them run by run, at swizzled addresses
// (a peer CTA's tile: at the same offset in its window of the cluster).
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

struct AllocLowering : public OpConversionPattern<AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Placed by tile-allocate-shared (checked before the patterns run).
    Location loc = op.getLoc();
    Value base = sharedBasePointer(rewriter, loc);
    rewriter.replaceOp(op, bytePointer(rewriter, loc, base,
                                       i32Const(rewriter, loc, *op.getOffset())));
    return success();
  }
};

struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto src = cast<SmemTileType>(op.getSource().getType());
    SharedLayoutAttr layout = src.getSharedLayout();
    unsigned e = getElementBytes(src.getElementType());
    ValueRange offs = adaptor.getOffsets();
    Value off = i32Const(rewriter, loc, 0);
    if (src.getRank() == 3) {
      int64_t stageBytes = getSharedTileBytes(SmemTileType::get(
          src.getShape().drop_front(), src.getElementType(), layout));
      off = arith::MulIOp::create(rewriter, loc, toI32(rewriter, loc, offs[0]),
                                  i32Const(rewriter, loc, stageBytes));
    }
    // Slices keep whole atoms and column blocks, so the corner's offset is
    // the unswizzled one (column blocks of the swizzle width).
    auto noSwizzle = SharedLayoutAttr::get(getContext(), 0, layout.getPitch(),
                                           layout.getBlockStride());
    Value corner = sharedByteOffset(rewriter, loc, noSwizzle, e,
                                    toI32(rewriter, loc, offs[offs.size() - 2]),
                                    toI32(rewriter, loc, offs.back()));
    off = arith::AddIOp::create(rewriter, loc, off, corner);
    rewriter.replaceOp(op, bytePointer(rewriter, loc, adaptor.getSource(), off));
    return success();
  }
};

struct ReadLowering : public OpConversionPattern<ReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RegTileType>(op.getType());
    auto src = cast<SmemTileType>(op.getSource().getType());
    ThreadElements te = *getThreadElements(type.getLayout(), type.getShape());
    auto vt = cast<VectorType>(getTypeConverter()->convertType(type));
    Type runType = accessType(type.getElementType(), te.vector);
    unsigned bytes = getElementBytes(type.getElementType());
    SmallVector<Value> elems(vt.getNumElements());
    for (Run &run : runsOf(rewriter, loc, type.getLayout(), te)) {
      Value ptr = sharedRunPointer(rewriter, loc, adaptor.getSource(), src, run,
                                   type.getLayout(), te.vector);
      Value v = LLVM::LoadOp::create(rewriter, loc, runType, ptr, te.vector * bytes);
      insertRun(rewriter, loc, elems, v, run.first);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elems);
    return success();
  }
};

struct WriteLowering : public OpConversionPattern<WriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dest = adaptor.getDest();
    // Another CTA's tile: the same offset in its window of the cluster's
    // shared memory; the stores become st.shared::cluster.
    if (Value cta = adaptor.getCta())
      dest = NVVM::MapaOp::create(rewriter, loc,
                                  LLVM::LLVMPointerType::get(
                                      getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster)),
                                  dest, toI32(rewriter, loc, cta));
    writeRunsToShared(rewriter, loc, adaptor.getValue(),
                      cast<RegTileType>(op.getValue().getType()), dest,
                      cast<SmemTileType>(op.getDest().getType()));
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateSharedMemoryToNVGPUPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AllocLowering, SliceLowering, ReadLowering, WriteLowering>(converter, patterns.getContext());
}
