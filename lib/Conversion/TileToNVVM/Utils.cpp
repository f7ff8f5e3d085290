//===- Utils.cpp - Shared helpers of the tile lowering ----------------------===//
//
// The type converter and small value helpers; the helpers by family are in
// LayoutCodegen, Addressing and Synchronization.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace sparse_mla::tile;

TileTypeConverter::TileTypeConverter(MLIRContext *ctx) {
  addConversion([](Type t) { return t; });
  addConversion([](RegTileType t) -> std::optional<Type> {
    FailureOr<ThreadElements> te = getThreadElements(t.getLayout(), t.getShape());
    if (failed(te))
      return std::nullopt;
    return VectorType::get({static_cast<int64_t>(te->offsets.size())},
                           t.getElementType());
  });
  addConversion([ctx](SmemTileType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 3);
  });
  addConversion([ctx](TokenType) -> Type { return IntegerType::get(ctx, 32); });
}

Value sparse_mla::tile::i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value sparse_mla::tile::i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

Value sparse_mla::tile::toI64(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  if (v.getType().isInteger(64))
    return v;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
}

Value sparse_mla::tile::toI32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  if (v.getType().isInteger(32))
    return v;
  return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
}

/// Runs `body` under `cond` (if any).
void sparse_mla::tile::ifThen(OpBuilder &b, Location loc, Value cond,
                   function_ref<void(OpBuilder &)> body) {
  if (!cond)
    return body(b);
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  body(inner);
}

Value sparse_mla::tile::andOpt(OpBuilder &b, Location loc, Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

/// A PTX instruction with side effects and no results.
void sparse_mla::tile::emitPtx(OpBuilder &b, Location loc, ValueRange operands,
                    StringRef asmStr, StringRef constraints) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, operands, asmStr, constraints,
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::TailCallKind::None, LLVM::AsmDialectAttr{},
                            ArrayAttr{});
}
