//===- InsertChannels.cpp - Channels for buffers partitions share ---------===//
//
// A loop written once for all partitions names its hand-overs by data: one
// partition gathers K into a buffer, others run GEMMs on it. Which accesses
// write is the ops' declared memory effects on the buffer (views followed
// through ViewLikeOpInterface); which partitions run them is the split's
// assignment. The channel's enter and exit ops bracket the accesses, so a
// slot is free again as soon as the last GEMM that reads it has completed.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/Transforms/InsertChannels.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace sparse_mla::tile;

namespace {

Operation *first(Operation *a, Operation *b) {
  return !a || (b && b->isBeforeInBlock(a)) ? b : a;
}
Operation *last(Operation *a, Operation *b) {
  return !a || (b && a->isBeforeInBlock(b)) ? b : a;
}

/// Where the accesses to buffers lie, as ops of their block: the first
/// access and last write of the producer's side, the first access and the
/// end of the last read of the consumers' side. The channel's enter and
/// exit ops go there.
struct Window {
  Operation *firstPut = nullptr, *lastWrite = nullptr, *firstGet = nullptr, *lastGet = nullptr;

  void join(const Window &o) {
    firstPut = first(firstPut, o.firstPut);
    lastWrite = last(lastWrite, o.lastWrite);
    firstGet = first(firstGet, o.firstGet);
    lastGet = last(lastGet, o.lastGet);
  }
};

/// A buffer that one partition writes and others read in one block.
struct Handover {
  AllocOp alloc;
  Block *block = nullptr;
  uint64_t producer = 0, readers = 0;
  /// The uses of the buffer itself on each side (a view is on the side of
  /// its own uses).
  SmallVector<OpOperand *> puts, gets;
  Window window;
  /// The asynchronous copies that write it.
  SmallVector<Value> tokens;
};

/// Reads what the uses of one buffer do, and where.
class Survey {
public:
  Survey(Handover &h, PartitionsOf partitionsOf) : h(h), partitionsOf(partitionsOf) {}

  /// The accesses through `use` (of the buffer or a view of it): whether
  /// they write, read, and the partitions that write.
  LogicalResult visit(OpOperand &use, bool &writes, bool &reads) {
    Operation *user = use.getOwner();
    Operation *at = h.block->findAncestorOpInBlock(*user);
    if (!at)
      return user->emitOpError("uses a buffer that partitions hand over outside the block that "
                               "writes it: its accesses must share one block");
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (view && view.getViewSource() == use.get()) {
      bool w = false, r = false;
      for (OpOperand &next : view.getViewDest().getUses())
        if (failed(visit(next, w, r)))
          return failure();
      if (w && r)
        return user->emitOpError("is a view that partitions both write and read: take one view "
                                 "for each side");
      if (w || r)
        place(at, w, /*end=*/at);
      writes |= w;
      reads |= r;
      return success();
    }
    if (hasEffect<MemoryEffects::Write>(user, use.get())) {
      h.producer |= partitionsOf(user);
      for (Value result : user->getResults())
        if (isa<TokenType>(result.getType()))
          h.tokens.push_back(result);
      h.window.lastWrite = last(h.window.lastWrite, at);
      place(at, /*put=*/true, at);
      writes = true;
      return success();
    }
    h.readers |= partitionsOf(user);
    place(at, /*put=*/false, readEnd(user, at));
    reads = true;
    return success();
  }

private:
  void place(Operation *at, bool put, Operation *end) {
    Window &w = h.window;
    if (put) {
      w.firstPut = first(w.firstPut, at);
    } else {
      w.firstGet = first(w.firstGet, at);
      w.lastGet = last(w.lastGet, end);
    }
  }

  /// Where a read by `user` ends: an asynchronous GEMM reads until the
  /// wait for it (or for a GEMM that joined its group).
  Operation *readEnd(Operation *user, Operation *at) {
    auto gemm = dyn_cast<GemmOp>(user);
    if (!gemm || !gemm.getAsync())
      return at;
    Operation *end = at;
    SmallVector<Operation *> work{gemm};
    while (!work.empty())
      for (Operation *next : work.pop_back_val()->getUsers()) {
        if (Operation *in = h.block->findAncestorOpInBlock(*next))
          end = last(end, in);
        if (isa<GemmOp>(next))
          work.push_back(next);
      }
    return end;
  }

  Handover &h;
  PartitionsOf partitionsOf;
};

/// The hand-over of `alloc`, if ops of one partition write it inside `body`
/// and others read it; a diagnostic where that cannot be.
FailureOr<std::optional<Handover>> handoverOf(AllocOp alloc, Region &body,
                                              PartitionsOf partitionsOf) {
  Handover h;
  h.alloc = alloc;
  // The block of the first write inside the body.
  SmallVector<Value> work{alloc.getResult()};
  while (!work.empty() && !h.block)
    for (OpOperand &use : work.pop_back_val().getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == use.get())
        work.push_back(view.getViewDest());
      else if (body.isAncestor(user->getParentRegion()) &&
               hasEffect<MemoryEffects::Write>(user, use.get()))
        h.block = user->getBlock();
    }
  if (!h.block)
    return std::optional<Handover>();
  Survey survey(h, partitionsOf);
  for (OpOperand &use : alloc.getResult().getUses()) {
    bool writes = false, reads = false;
    if (failed(survey.visit(use, writes, reads)))
      return failure();
    (writes ? h.puts : h.gets).push_back(&use);
  }
  if (!llvm::has_single_bit(h.producer))
    return alloc.emitOpError("is written inside tile.warp_specialize by more than one "
                             "partition: one partition puts what the others get");
  if ((h.readers & ~h.producer) == 0)
    return std::optional<Handover>(); // the producer's own buffer
  if (!h.window.lastWrite->isBeforeInBlock(h.window.firstGet))
    return alloc.emitOpError("is read inside tile.warp_specialize before its last write: "
                             "partitions hand over a buffer once it is written");
  return std::optional<Handover>(std::move(h));
}

} // namespace

LogicalResult sparse_mla::tile::insertChannels(WarpSpecializeOp ws, PartitionsOf partitionsOf,
                                               bool &inserted) {
  Region &body = ws.getPartitions().front();
  auto kernel = ws->getParentOfType<KernelOp>();
  SmallVector<Handover> handovers;
  WalkResult walk = kernel.walk([&](AllocOp alloc) {
    if (ws->isAncestor(alloc))
      return WalkResult::advance();
    FailureOr<std::optional<Handover>> h = handoverOf(alloc, body, partitionsOf);
    if (failed(h))
      return WalkResult::interrupt();
    if (*h)
      handovers.push_back(std::move(**h));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Buffers of one block and producer, in program order, each written
  // before any of them is read share a channel (P^T and dS^T): one slot,
  // one pair of barriers.
  SmallVector<SmallVector<Handover *>> groups;
  for (Handover &h : handovers) {
    auto joins = [&](Handover *o) {
      return o->block == h.block && o->producer == h.producer &&
             h.window.lastWrite->isBeforeInBlock(o->window.firstGet) &&
             o->window.lastWrite->isBeforeInBlock(h.window.firstGet);
    };
    if (!groups.empty() && llvm::all_of(groups.back(), joins))
      groups.back().push_back(&h);
    else
      groups.push_back({&h});
  }
  OpBuilder b(ws);
  for (auto &group : groups) {
    Handover &lead = *group.front();
    Window window;
    SmallVector<Type> buffers;
    SmallVector<Value> tokens;
    for (Handover *h : group) {
      window.join(h->window);
      buffers.push_back(h->alloc.getType());
      llvm::append_range(tokens, h->tokens);
    }
    Location loc = lead.alloc.getLoc();
    b.setInsertionPoint(ws);
    auto type = ChannelType::get(b.getContext(), buffers, 1);
    Value channel = ChannelOp::create(b, loc, type).getResult();
    auto tag = b.getI64IntegerAttr(llvm::countr_zero(lead.producer));
    b.setInsertionPoint(window.firstPut);
    auto put = PutEnterOp::create(b, loc, channel);
    put->setAttr(kPartitionAttr, tag);
    b.setInsertionPointAfter(window.lastWrite);
    PutExitOp::create(b, loc, channel, tokens)->setAttr(kPartitionAttr, tag);
    b.setInsertionPoint(window.firstGet);
    auto get = GetEnterOp::create(b, loc, channel);
    b.setInsertionPointAfter(window.lastGet);
    GetExitOp::create(b, loc, channel);
    for (auto [i, h] : llvm::enumerate(group)) {
      for (OpOperand *use : h->puts)
        use->set(put.getResult(i));
      for (OpOperand *use : h->gets)
        use->set(get.getResult(i));
      h->alloc.erase();
    }
    inserted = true;
  }
  return success();
}
