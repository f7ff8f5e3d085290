//===- SharedMemoryToNVVM.cpp - Tile shared-memory tiles to LLVM ---------===//
//
// Shared tiles are byte offsets into the CTA's dynamic shared memory;
// register tiles move in and out of them run by run, at swizzled addresses
// (a peer CTA's tile: at the same offset in its window of the cluster), and
// change layout through shared scratch.
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
    auto type = cast<RegTileType>(op.getType());
    rewriter.replaceOp(op, readRunsFromShared(rewriter, op.getLoc(), type,
                                              cast<VectorType>(getTypeConverter()->convertType(type)),
                                              adaptor.getSource(),
                                              cast<SmemTileType>(op.getSource().getType())));
    return success();
  }
};

/// Each warpgroup writes its tile into its own scratch region, row by row
/// unswizzled, and reads it back in the new layout; a warpgroup barrier
/// before the writes keeps them from an earlier conversion's reads.
struct ConvertLayoutLowering : public OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto from = cast<RegTileType>(op.getSource().getType());
    auto to = cast<RegTileType>(op.getType());
    int64_t bytes = op.getScratchBytes();
    if (!bytes) { // the same layout
      rewriter.replaceOp(op, adaptor.getSource());
      return success();
    }
    Value base = warpgroupScratch(rewriter, loc, op);
    SmallVector<int64_t> shape(from.getShape());
    if (shape.size() == 1)
      shape.insert(shape.begin(), 1);
    int64_t rowBytes = shape[1] * getElementBytes(from.getElementType());
    auto rows = SmemTileType::get(
        shape, from.getElementType(),
        SharedLayoutAttr::get(getContext(), 0, rowBytes, shape[0] * rowBytes));
    warpgroupBarrier(rewriter, loc);
    writeRunsToShared(rewriter, loc, adaptor.getSource(), from, base, rows);
    warpgroupBarrier(rewriter, loc);
    rewriter.replaceOp(op, readRunsFromShared(rewriter, loc, to,
                                              cast<VectorType>(getTypeConverter()->convertType(to)),
                                              base, rows));
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
    Value cta = adaptor.getCta();
    // Another CTA's tile: the same offset in its window of the cluster's
    // shared memory; the stores become st.shared::cluster.
    if (cta)
      dest = NVVM::MapaOp::create(rewriter, loc,
                                  LLVM::LLVMPointerType::get(
                                      getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster)),
                                  dest, toI32(rewriter, loc, cta));
    RunStore store;
    if (adaptor.getBars()) {
      // st.async: each run's bytes complete on the peer's barrier; it takes
      // 4, 8 or 16 bytes as one to four 32-bit words.
      auto type = cast<RegTileType>(op.getValue().getType());
      auto dst = cast<SmemTileType>(op.getDest().getType());
      unsigned runBytes = getThreadElements(type.getLayout(), type.getShape())->vector *
                          getElementBytes(dst.getElementType());
      if (runBytes != 4 && runBytes != 8 && runBytes != 16)
        return op.emitOpError("writes asynchronously in runs of 4, 8 or 16 bytes (st.async); ")
               << type << " gives each thread runs of " << runBytes;
      Value local = mbarrierAddress(rewriter, loc, adaptor.getBars(), adaptor.getBarIndex());
      Type i32 = rewriter.getI32Type();
      Value bar = LLVM::InlineAsmOp::create(
                      rewriter, loc, TypeRange{i32}, ValueRange{local, toI32(rewriter, loc, cta)},
                      "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r",
                      /*has_side_effects=*/false, /*is_align_stack=*/false,
                      LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{})
                      .getResult(0);
      store = [bar, runBytes, i32](OpBuilder &b, Location loc, Value v, Value ptr) {
        unsigned words = runBytes / 4;
        Value packed = vector::BitCastOp::create(
            b, loc, VectorType::get({words}, i32),
            isa<VectorType>(v.getType())
                ? v
                : vector::BroadcastOp::create(b, loc, VectorType::get({1}, v.getType()), v));
        SmallVector<Value> operands{LLVM::PtrToIntOp::create(b, loc, i32, ptr)};
        std::string regs;
        for (unsigned w = 0; w < words; ++w) {
          operands.push_back(vector::ExtractOp::create(b, loc, packed, w));
          regs += (w ? ", $" : "$") + std::to_string(w + 1);
        }
        operands.push_back(bar);
        std::string vec = words == 1 ? "" : ".v" + std::to_string(words);
        std::string constraints = "r";
        for (unsigned w = 0; w <= words; ++w)
          constraints += ",r";
        emitPtx(b, loc, operands,
                "st.async.shared::cluster.mbarrier::complete_tx::bytes" + vec + ".b32 [$0], " +
                    (words == 1 ? regs : "{" + regs + "}") + ", [$" +
                    std::to_string(words + 1) + "];",
                constraints);
      };
    }
    writeRunsToShared(rewriter, loc, adaptor.getValue(),
                      cast<RegTileType>(op.getValue().getType()), dest,
                      cast<SmemTileType>(op.getDest().getType()), store);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateSharedMemoryToNVVMPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AllocLowering, SliceLowering, ReadLowering, WriteLowering, ConvertLayoutLowering>(converter, patterns.getContext());
}
