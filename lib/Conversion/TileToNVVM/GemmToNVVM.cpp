//===- GemmToNVVM.cpp - tile.gemm to wgmma.mma_async ---------------------===//
//
// A GEMM becomes, per 64-row block of the result and piece of at most 256
// columns, one chain of wgmma.mma_async m64nNk16 over K, reading both
// operands from shared memory through matrix descriptors. The descriptor of a tile follows from its
// #tile.shared layout (CUTLASS's canonical GMMA layouts):
//   K-major  (rows = M or N, K contiguous): SBO = 8 rows * pitch; stepping K
//            by 16 moves the start address inside the swizzle row.
//   MN-major (rows = K, M or N contiguous): LBO = stride of the column
//            blocks, SBO = 8 rows * pitch; stepping K moves 16 rows down.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

/// Matrix descriptor of a shared tile read as a wgmma operand.
struct OperandDescriptor {
  SharedLayoutAttr layout;
  unsigned elementBytes;
  bool kMajor;
  Value base; // descriptor (i64) of the tile's first element

  static FailureOr<OperandDescriptor> get(OpBuilder &b, Location loc, Operation *op,
                                          Value ptr, SmemTileType type,
                                          bool kMajor) {
    SharedLayoutAttr layout = type.getSharedLayout();
    if (!layout || !layout.getSwizzle()) {
      op->emitOpError("operand ") << type << " needs a swizzled shared layout";
      return failure();
    }
    OperandDescriptor d{layout, getElementBytes(type.getElementType()), kMajor, {}};
    int64_t sbo = 8 * layout.getPitch();
    int64_t lbo = kMajor ? 16 : layout.getBlockStride();
    int64_t mode = layout.getSwizzle() == 128 ? 1 : layout.getSwizzle() == 64 ? 2 : 3;
    uint64_t fixed = (static_cast<uint64_t>(lbo >> 4) << 16) |
                     (static_cast<uint64_t>(sbo >> 4) << 32) |
                     (static_cast<uint64_t>(mode) << 62);
    // Built in one asm block from the 32-bit shared address: opaque to
    // LLVM, which would else hoist the descriptors of every GEMM of a loop
    // out of it and keep them all in registers.
    Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
    std::string asmStr = "{\n.reg .b64 d;\ncvt.u64.u32 d, $1;\nshr.b64 d, d, 4;\n"
                         "and.b64 d, d, 16383;\nor.b64 $0, d, " +
                         std::to_string(fixed) + ";\n}";
    d.base = LLVM::InlineAsmOp::create(
                 b, loc, b.getI64Type(), ValueRange{addr}, asmStr, "=l,r",
                 /*has_side_effects=*/true, /*is_align_stack=*/false,
                 LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{})
                 .getResult(0);
    return d;
  }

  /// Descriptor of the block starting at (mn, k) in operand coordinates.
  Value at(OpBuilder &b, Location loc, int64_t mn, int64_t k) const {
    // In tile coordinates a K-major operand is [mn, k], an MN-major one [k, mn].
    int64_t row = kMajor ? mn : k, col = kMajor ? k : mn;
    int64_t off = getSharedLinearOffset(layout, elementBytes, row, col);
    if (off == 0)
      return base;
    return arith::AddIOp::create(b, loc, base, i64Const(b, loc, off >> 4));
  }
};

/// One wgmma m64nNk16 whose A comes from registers (inline PTX: the NVVM op
/// reads A from shared memory only). The A fragment of a k16 step is the
/// thread's 8 elements from `first` of the bf16/f16 tile in the #tile.mma
/// layout, packed in pairs: the accumulator layout of a GEMM is the A layout
/// of the next one.
static Value registerAWgmma(OpBuilder &b, Location loc, Value acc, Type structType,
                            int64_t width, Value a, int64_t first, Value descB,
                            Type elt, bool transB, bool scaleOut) {
  SmallVector<Value> operands;
  std::string outs, ins;
  int64_t nd = width / 2;
  for (int64_t i = 0; i < nd; ++i) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    outs += (i ? ",=f" : "=f");
    ins += "," + std::to_string(i);
  }
  for (int64_t r = 0; r < 4; ++r) {
    Value v = extractRun(b, loc, a, first + 2 * r, 2);
    Value packed = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), v);
    operands.push_back(vector::ExtractOp::create(b, loc, packed, 0));
    ins += ",r";
  }
  operands.push_back(descB);
  operands.push_back(i32Const(b, loc, scaleOut ? 1 : 0));
  ins += ",l,r";
  std::string t = elt.isBF16() ? "bf16" : "f16";
  // scale-d is a predicate: D = A B where it is false, D += A B where true.
  std::string asmStr = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * nd + 5) +
                       ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(width) +
                       "k16.f32." + t + "." + t + " {";
  for (int64_t i = 0; i < nd; ++i)
    asmStr += "$" + std::to_string(i) + (i + 1 < nd ? ", " : "}, {");
  for (int64_t r = 0; r < 4; ++r)
    asmStr += "$" + std::to_string(2 * nd + r) + (r < 3 ? ", " : "}, ");
  asmStr += "$" + std::to_string(2 * nd + 4) + ", p, 1, 1, " + (transB ? "1" : "0") + ";\n}";
  return LLVM::InlineAsmOp::create(b, loc, structType, operands, asmStr, outs + ins,
                                   /*has_side_effects=*/true, /*is_align_stack=*/false,
                                   LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{})
      .getResult(0);
}


struct GemmLowering : public OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    bool regA = isa<RegTileType>(op.getA().getType());
    auto aType = cast<ShapedType>(op.getA().getType());
    auto bType = cast<SmemTileType>(op.getB().getType());
    auto accType = cast<RegTileType>(op.getAcc().getType());
    int64_t m = accType.getShape()[0], n = accType.getShape()[1];
    int64_t k = aType.getShape()[op.getTransposeA() ? 0 : 1];
    // A is K-major unless transposed; B is K-major when transposed.
    FailureOr<OperandDescriptor> da;
    if (!regA)
      da = OperandDescriptor::get(rewriter, loc, op, adaptor.getA(),
                                  cast<SmemTileType>(aType), !op.getTransposeA());
    FailureOr<OperandDescriptor> db = OperandDescriptor::get(
        rewriter, loc, op, adaptor.getB(), bType, op.getTransposeB());
    if ((!regA && failed(da)) || failed(db))
      return failure();
    Type f32 = rewriter.getF32Type();
    int64_t perBlock = n / 2; // accumulator registers per thread per 64 rows
    auto splat = op.getAcc().getDefiningOp<SplatOp>();
    bool zeroInit = splat && splat.isPositiveZero();
    Value acc = adaptor.getAcc();
    auto typeAttr = [&](Type t) {
      return NVVM::WGMMATypesAttr::get(
          ctx, t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
    };
    // NVVM spells the operand majorness as row/col: A row = K-major,
    // B col = K-major.
    auto layoutA = NVVM::MMALayoutAttr::get(
        ctx, regA || da->kMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col);
    auto layoutB = NVVM::MMALayoutAttr::get(
        ctx, db->kMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row);
    auto scaleIn = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);

    // Adjacent GEMMs form one wgmma group: the fence before the first, one
    // commit and wait after the last, so a chain like dS^T Q + P^T dO runs
    // without stalls in between.
    if (!op->hasAttr(kGroupNotFirstAttr))
      NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    // One wgmma chain over K per 64 rows and piece of at most 256 columns;
    // a thread's registers of columns [n0, n0 + w) are the w/2 from n0/2.
    SmallVector<Value> results;
    for (int64_t mb = 0; mb < m / hopper::kWgmmaM; ++mb) {
      for (int64_t n0 = 0; n0 < n; n0 += hopper::kWgmmaMaxN) {
        int64_t width = std::min<int64_t>(hopper::kWgmmaMaxN, n - n0);
        auto structType = LLVM::LLVMStructType::getLiteral(
            ctx, SmallVector<Type>(width / 2, f32));
        auto shape = NVVM::MMAShapeAttr::get(ctx, hopper::kWgmmaM, width, hopper::kWgmmaK);
        int64_t first = mb * perBlock + n0 / 2;
        Value s = LLVM::UndefOp::create(rewriter, loc, structType);
        if (!zeroInit)
          for (int64_t i = 0; i < width / 2; ++i)
            s = LLVM::InsertValueOp::create(
                rewriter, loc, s,
                vector::ExtractOp::create(rewriter, loc, acc, first + i), i);
        for (int64_t kk = 0; kk < k / hopper::kWgmmaK; ++kk) {
          bool scaleOut = !(zeroInit && kk == 0);
          if (regA) {
            s = registerAWgmma(rewriter, loc, s, structType, width, adaptor.getA(),
                               mb * (k / 2) + kk * 8, db->at(rewriter, loc, n0, hopper::kWgmmaK * kk),
                               aType.getElementType(), !db->kMajor, scaleOut);
            continue;
          }
          auto scaleD = NVVM::WGMMAScaleOutAttr::get(
              ctx, scaleOut ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero);
          s = NVVM::WgmmaMmaAsyncOp::create(
              rewriter, loc, structType, s,
              da->at(rewriter, loc, hopper::kWgmmaM * mb, hopper::kWgmmaK * kk),
              db->at(rewriter, loc, n0, hopper::kWgmmaK * kk), shape,
              typeAttr(aType.getElementType()), typeAttr(bType.getElementType()),
              NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32), scaleD,
              scaleIn, scaleIn, layoutA, layoutB, NVVM::MMAIntOverflowAttr());
        }
        for (int64_t i = 0; i < width / 2; ++i)
          results.push_back(LLVM::ExtractValueOp::create(rewriter, loc, s, i));
      }
    }
    if (!op->hasAttr(kGroupNotLastAttr)) {
      NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
      // An asynchronous product is waited for by its tile.gemm_wait.
      if (!op.getAsync())
        NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, 0);
    }
    auto vt = cast<VectorType>(getTypeConverter()->convertType(accType));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, results);
    return success();
  }
};

/// `wgmma.wait_group pending`, then each accumulator register passes
/// through an empty asm (as CUTLASS's warpgroup_fence_operand): its readers
/// depend on the wait, so nothing reads it while the tensor cores write it.
struct GemmWaitLowering : public OpConversionPattern<GemmWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, op.getPending());
    SmallVector<Value> results;
    for (Value v : adaptor.getValues()) {
      auto vt = cast<VectorType>(v.getType());
      SmallVector<Value> elems;
      for (int64_t i = 0; i < vt.getNumElements(); ++i) {
        Value e = vector::ExtractOp::create(rewriter, loc, v, i);
        elems.push_back(LLVM::InlineAsmOp::create(
                            rewriter, loc, e.getType(), ValueRange{e}, "", "=f,0",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::TailCallKind::None, LLVM::AsmDialectAttr{}, ArrayAttr{})
                            .getResult(0));
      }
      results.push_back(vector::FromElementsOp::create(rewriter, loc, vt, elems));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void sparse_mla::tile::populateGemmToNVVMPatterns(TileTypeConverter &converter,
                                                   RewritePatternSet &patterns) {
  patterns.add<GemmLowering, GemmWaitLowering>(converter, patterns.getContext());
}
