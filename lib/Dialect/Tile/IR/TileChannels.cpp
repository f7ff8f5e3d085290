//===- TileChannels.cpp - Channels between partitions ----------------------===//
//
// A channel is a ring of shared buffers that one partition of a
// tile.warp_specialize fills and others read, with put and get each entered
// and left once per slot. Its type and the rules of its ops live here:
// every enter has its exit, a channel that is got is put, by one partition,
// and its ring fits the CTA's shared memory. tile-lower-channels writes out
// the mbarriers, slots and phases.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace sparse_mla::tile;

/// `<!tile.smem<..>, !tile.smem<..>, stages = 2>`; one stage is left unsaid.
Type ChannelType::parse(AsmParser &parser) {
  SmallVector<Type> buffers;
  int64_t stages = 1;
  if (parser.parseLess())
    return {};
  do {
    if (succeeded(parser.parseOptionalKeyword("stages"))) {
      if (parser.parseEqual() || parser.parseInteger(stages))
        return {};
      break;
    }
    Type buffer;
    if (parser.parseType(buffer))
      return {};
    buffers.push_back(buffer);
  } while (succeeded(parser.parseOptionalComma()));
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    ArrayRef<Type>(buffers), stages);
}

void ChannelType::print(AsmPrinter &printer) const {
  printer << "<";
  llvm::interleaveComma(getBuffers(), printer);
  if (getStages() != 1)
    printer << ", stages = " << getStages();
  printer << ">";
}

LogicalResult ChannelType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<Type> buffers, int64_t stages) {
  if (buffers.empty())
    return emitError() << "a channel holds at least one buffer";
  for (Type buffer : buffers) {
    auto smem = dyn_cast<SmemTileType>(buffer);
    if (!smem || smem.getRank() != 2)
      return emitError() << "channel buffers are 2-D shared tiles, not " << buffer;
  }
  if (stages < 1)
    return emitError() << "a channel has at least one stage, not " << stages;
  return success();
}

std::optional<int64_t> ChannelType::getRingBytes() const {
  int64_t stage = 0;
  for (Type buffer : getBuffers()) {
    auto smem = cast<SmemTileType>(buffer);
    if (!smem.getSymbols().empty())
      return std::nullopt; // sized once tile-specialize binds it
    int64_t bytes = smem.getNumElements() * getElementBytes(smem.getElementType());
    // Rings of swizzled tiles start each stage on a swizzle atom.
    stage += llvm::alignTo(bytes, hopper::kSwizzleAtomBytes);
  }
  // A full and a free mbarrier per slot.
  return getStages() * (stage + 2 * 8);
}

SmallVector<SmemTileType> ChannelType::getRingTiles(bool freeBarriers) const {
  SmallVector<SmemTileType> tiles;
  int64_t s = getStages();
  for (Type buffer : getBuffers()) {
    auto tile = cast<SmemTileType>(buffer);
    SmallVector<int64_t> shape(tile.getShape());
    if (s > 1)
      shape.insert(shape.begin(), s);
    tiles.push_back(SmemTileType::get(shape, tile.getElementType()));
  }
  tiles.push_back(SmemTileType::get({1, freeBarriers ? 2 * s : s},
                                    IntegerType::get(getContext(), 64)));
  return tiles;
}

LogicalResult ChannelOp::verify() {
  ChannelType type = getType();
  if (std::optional<int64_t> bytes = type.getRingBytes();
      bytes && *bytes > hopper::kSharedBytesPerCTA)
    return emitOpError("ring of ") << type.getStages() << " stages needs " << *bytes
                                   << " bytes of shared memory, more than the "
                                   << hopper::kSharedBytesPerCTA << " a CTA has";
  WarpSpecializeOp partitions;
  std::optional<unsigned> producer;
  bool got = false;
  // The users in program order, so that the diagnostics name the later one.
  SmallVector<Operation *> users;
  (*this)->getParentOp()->walk([&](Operation *op) {
    if (llvm::is_contained(op->getOperands(), getResult()))
      users.push_back(op);
  });
  for (Operation *user : users) {
    if (!isa<PutEnterOp, PutExitOp, GetEnterOp, GetExitOp>(user))
      return user->emitOpError("takes a channel; only tile.put_enter, tile.put_exit, "
                               "tile.get_enter and tile.get_exit may");
    auto partition = getPartition(user);
    if (!partition)
      return user->emitOpError("hands a channel over between partitions: "
                               "only inside tile.warp_specialize");
    // Which partition runs each op is known once tile-split-partitions
    // has split the body; the rules are checked then.
    if (partition->first.isUnsplit())
      return success();
    if (partitions && partition->first != partitions)
      return user->emitOpError("uses a channel of another tile.warp_specialize");
    partitions = partition->first;
    if (isa<PutEnterOp>(user)) {
      if (producer && *producer != partition->second)
        return user->emitOpError("puts into a channel that partition #")
               << *producer << " puts into: a channel has one producer";
      producer = partition->second;
    }
    got |= isa<GetEnterOp>(user);
  }
  if (got && !producer)
    return emitOpError("is got (tile.get_enter) but never put (tile.put_enter)");
  if (producer && !got)
    return emitOpError("is put (tile.put_enter) but never got (tile.get_enter)");
  return verifyProducerGets(users, *producer);
}

/// A producer that gets its own channel takes each slot right after putting
/// it: put_enter, put_exit, get_enter, get_exit, in one block, round after
/// round. Its program order then orders its reads before its next put, and
/// tile-lower-channels needs no free barrier for it (a producer that took
/// slots later could wait on itself).
LogicalResult ChannelOp::verifyProducerGets(ArrayRef<Operation *> users, unsigned producer) {
  SmallVector<Operation *> own;
  for (Operation *user : users)
    if (getPartition(user)->second == producer)
      own.push_back(user);
  if (llvm::none_of(own, [](Operation *o) { return isa<GetEnterOp>(o); }))
    return success();
  for (auto [i, user] : llvm::enumerate(own)) {
    bool ok;
    switch (i % 4) {
    case 0: ok = isa<PutEnterOp>(user); break;
    case 1: ok = isa<PutExitOp>(user); break;
    case 2: ok = isa<GetEnterOp>(user); break;
    default: ok = isa<GetExitOp>(user); break;
    }
    ok &= user->getBlock() == own[i - i % 4]->getBlock();
    if (!ok)
      return user->emitOpError("breaks the round of a producer that gets its own channel: "
                               "it takes each slot right after putting it (tile.put_enter, "
                               "tile.put_exit, tile.get_enter, tile.get_exit in one block)");
  }
  if (own.size() % 4 != 0)
    return own.back()->emitOpError("breaks the round of a producer that gets its own channel: "
                                   "its last slot put is never got");
  return success();
}

/// An enter and its exit stand in one block: the nearest op of the same side
/// of the channel after an enter (before an exit) is its pair.
template <typename Pair, typename Same, typename Op>
static LogicalResult verifyPaired(Op op, bool forward) {
  auto step = [&](Operation *o) { return forward ? o->getNextNode() : o->getPrevNode(); };
  for (Operation *o = step(op); o; o = step(o)) {
    if (auto pair = dyn_cast<Pair>(o); pair && pair.getChannel() == op.getChannel())
      return success();
    if (auto same = dyn_cast<Same>(o); same && same.getChannel() == op.getChannel())
      break;
  }
  return op.emitOpError("has no ") << Pair::getOperationName() << " of its channel "
                                   << (forward ? "after" : "before") << " it in its block";
}

LogicalResult PutEnterOp::verify() { return verifyPaired<PutExitOp, PutEnterOp>(*this, true); }
LogicalResult GetEnterOp::verify() { return verifyPaired<GetExitOp, GetEnterOp>(*this, true); }
LogicalResult PutExitOp::verify() { return verifyPaired<PutEnterOp, PutExitOp>(*this, false); }
LogicalResult GetExitOp::verify() { return verifyPaired<GetEnterOp, GetExitOp>(*this, false); }

/// An enter gives the slot's buffers, one per type of the channel.
static LogicalResult inferSlotTypes(ValueRange operands, SmallVectorImpl<Type> &types) {
  auto channel = operands.empty() ? ChannelType() : dyn_cast<ChannelType>(operands[0].getType());
  if (!channel)
    return failure();
  llvm::append_range(types, channel.getBuffers());
  return success();
}

LogicalResult PutEnterOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           ValueRange operands, DictionaryAttr,
                                           OpaqueProperties, RegionRange,
                                           SmallVectorImpl<Type> &types) {
  return inferSlotTypes(operands, types);
}
LogicalResult GetEnterOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           ValueRange operands, DictionaryAttr,
                                           OpaqueProperties, RegionRange,
                                           SmallVectorImpl<Type> &types) {
  return inferSlotTypes(operands, types);
}
