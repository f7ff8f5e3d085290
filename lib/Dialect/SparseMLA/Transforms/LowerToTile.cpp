//===- LowerToTile.cpp - A token tile's columns and its keys' rows --------===//
//
// smla.token_tile, smla.columns, smla.slot_count, smla.key_limit and
// smla.key_rows in arith, scf and tile ops, where they stand: a tile's
// tokens in index arithmetic; a tile.iota of the columns and a tile.map each
// for their rows and tokens; a row's slot count as an scf.if; the key bound
// in i32; a tile.map of the keys for their kv rows. Rows are 32-bit (int32
// row indices).
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace sparse_mla::smla {
#define GEN_PASS_DEF_SPARSEMLALOWERTOTILEPASS
#include "sparse-mla/Dialect/SparseMLA/Transforms/Passes.h.inc"
} // namespace sparse_mla::smla

using namespace mlir;
using namespace sparse_mla;
using namespace sparse_mla::smla;

namespace {

/// A tile.map of `inputs` (tiles of `type`'s shape) to `type`, its body
/// built by `body` from the elements.
static Value map(OpBuilder &b, Location loc, Type type, ValueRange inputs,
                 llvm::function_ref<Value(OpBuilder &, ValueRange)> body) {
  auto op = tile::MapOp::create(b, loc, type, inputs);
  Block *block = b.createBlock(&op.getBody());
  for (Value input : inputs)
    block->addArgument(cast<tile::RegTileType>(input.getType()).getElementType(), loc);
  OpBuilder inner = OpBuilder::atBlockBegin(block);
  tile::YieldOp::create(inner, loc, body(inner, block->getArguments()));
  b.setInsertionPointAfter(op);
  return op.getResult();
}

static void lowerTokenTile(TokenTileOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value first = arith::MulIOp::create(b, loc, op.getTile(), op.getTileTokens());
  Value left = arith::SubIOp::create(b, loc, op.getSeqLen(), first);
  Value count = arith::MinUIOp::create(b, loc, op.getTileTokens(), left);
  Value rowStart = arith::MulIOp::create(b, loc, op.getBatchRow(), op.getSeqLen());
  Value row = arith::AddIOp::create(b, loc, rowStart, first);
  op.replaceAllUsesWith(ValueRange{first, count, row});
  op.erase();
}

static void lowerColumns(ColumnsOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto i32 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  };
  Value first = i32(op.getFirst()), perToken = i32(op.getPerToken());
  Value firstToken = i32(op.getFirstToken()), count = i32(op.getTokenCount());
  Value heads = i32(op.getHeads()), firstHead = i32(op.getFirstHead());
  Value left = i32(op.getHeadsLeft());
  Type type = op.getRows().getType();
  Value columns = tile::IotaOp::create(b, loc, type, uint64_t(0));
  Value none = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
  Value rows = map(b, loc, type, columns, [&](OpBuilder &m, ValueRange c) -> Value {
    Value column = arith::AddIOp::create(m, loc, c[0], first);
    Value t = arith::DivUIOp::create(m, loc, column, perToken);
    Value h = arith::RemUIOp::create(m, loc, column, perToken);
    Value token = arith::AddIOp::create(m, loc, firstToken, t);
    Value firstRow = arith::MulIOp::create(m, loc, token, heads);
    Value head = arith::AddIOp::create(m, loc, firstHead, h);
    Value row = arith::AddIOp::create(m, loc, firstRow, head);
    Value tIn = arith::CmpIOp::create(m, loc, arith::CmpIPredicate::ult, t, count);
    Value hIn = arith::CmpIOp::create(m, loc, arith::CmpIPredicate::ult, h, left);
    Value ok = arith::AndIOp::create(m, loc, tIn, hIn);
    return arith::SelectOp::create(m, loc, ok, row, none);
  });
  Value tokens = map(b, loc, type, columns, [&](OpBuilder &m, ValueRange c) -> Value {
    Value column = arith::AddIOp::create(m, loc, c[0], first);
    return arith::DivUIOp::create(m, loc, column, perToken);
  });
  op.getRows().replaceAllUsesWith(rows);
  op.getTokens().replaceAllUsesWith(tokens);
  op.erase();
}

static void lowerSlotCount(SlotCountOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i32 = b.getI32Type();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value columns = memref::DimOp::create(b, loc, op.getCounts(), c1);
  Value counted = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, columns, c0);
  Value width = arith::IndexCastOp::create(b, loc, i32, op.getWidth());
  auto branch = scf::IfOp::create(
      b, loc, counted,
      [&](OpBuilder &t, Location l) {
        Value last = arith::SubIOp::create(t, l, columns, c1);
        Value column = arith::MinUIOp::create(t, l, op.getGroup(), last);
        Value count = memref::LoadOp::create(t, l, op.getCounts(),
                                             ValueRange{op.getRow(), column});
        Value positive = arith::MaxSIOp::create(t, l, count, zero);
        scf::YieldOp::create(t, l, Value(arith::MinUIOp::create(t, l, positive, width)));
      },
      [&](OpBuilder &e, Location l) { scf::YieldOp::create(e, l, width); });
  op.replaceAllUsesWith(
      arith::IndexCastUIOp::create(b, loc, b.getIndexType(), branch.getResult(0)).getResult());
  op.erase();
}

static void lowerKeyLimit(KeyLimitOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i32 = b.getI32Type();
  Value keys = arith::IndexCastOp::create(b, loc, i32, op.getKvLen());
  Value end = arith::IndexCastOp::create(b, loc, i32, op.getTokensEnd());
  Value position = arith::AddIOp::create(b, loc, end, op.getQOffset());
  Value seen = arith::MinSIOp::create(b, loc, position, keys);
  Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value causal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, op.getCausal(), zero);
  op.replaceAllUsesWith(arith::SelectOp::create(b, loc, causal, seen, keys).getResult());
  op.erase();
}

static void lowerKeyRows(KeyRowsOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value none = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
  Value rows = map(b, loc, op.getRows().getType(), op.getKeys(),
                   [&](OpBuilder &m, ValueRange k) -> Value {
    Value lo = arith::CmpIOp::create(m, loc, arith::CmpIPredicate::sge, k[0], zero);
    Value hi = arith::CmpIOp::create(m, loc, arith::CmpIPredicate::slt, k[0], op.getLimit());
    Value ok = arith::AndIOp::create(m, loc, lo, hi);
    Value position = arith::AddIOp::create(m, loc, op.getFirst(), k[0]);
    Value scaled = arith::MulIOp::create(m, loc, position, op.getGroups());
    Value row = arith::AddIOp::create(m, loc, scaled, op.getGroup());
    return arith::SelectOp::create(m, loc, ok, row, none);
  });
  op.getRows().replaceAllUsesWith(rows);
  op.erase();
}

struct SparseMLALowerToTilePass
    : public sparse_mla::smla::impl::SparseMLALowerToTilePassBase<SparseMLALowerToTilePass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (auto tile = dyn_cast<TokenTileOp>(op))
        lowerTokenTile(tile);
      else if (auto columns = dyn_cast<ColumnsOp>(op))
        lowerColumns(columns);
      else if (auto rows = dyn_cast<KeyRowsOp>(op))
        lowerKeyRows(rows);
      else if (auto count = dyn_cast<SlotCountOp>(op))
        lowerSlotCount(count);
      else if (auto limit = dyn_cast<KeyLimitOp>(op))
        lowerKeyLimit(limit);
    });
  }
};

} // namespace
