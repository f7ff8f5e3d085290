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
  return success();
}

/// An enter is left in its own block, before that side enters again.
template <typename Exit, typename Enter>
static LogicalResult verifyExitFollows(Enter op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (auto exit = dyn_cast<Exit>(next); exit && exit.getChannel() == op.getChannel())
      return success();
    if (auto enter = dyn_cast<Enter>(next); enter && enter.getChannel() == op.getChannel())
      break;
  }
  return op.emitOpError("has no ") << Exit::getOperationName()
                                   << " of its channel after it in its block";
}

/// An exit leaves the enter before it in its block.
template <typename Enter, typename Exit>
static LogicalResult verifyEnterPrecedes(Exit op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto enter = dyn_cast<Enter>(prev); enter && enter.getChannel() == op.getChannel())
      return success();
    if (auto exit = dyn_cast<Exit>(prev); exit && exit.getChannel() == op.getChannel())
      break;
  }
  return op.emitOpError("has no ") << Enter::getOperationName()
                                   << " of its channel before it in its block";
}

LogicalResult PutEnterOp::verify() { return verifyExitFollows<PutExitOp>(*this); }
LogicalResult GetEnterOp::verify() { return verifyExitFollows<GetExitOp>(*this); }
LogicalResult PutExitOp::verify() { return verifyEnterPrecedes<PutEnterOp>(*this); }
LogicalResult GetExitOp::verify() { return verifyEnterPrecedes<GetEnterOp>(*this); }

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
