//===- TileAsyncOps.cpp - The tile ops of asynchrony and synchronization ---===//
//
// Verifiers and syntax of the ops that order work between threads, warpgroups
// and CTAs: progress counters, GEMMs (asynchronous wgmma groups and their
// waits), warp-specialized partitions, scoped barriers, mbarriers and the
// software-pipelined loop. The other ops are in TileOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace sparse_mla::tile;

//===----------------------------------------------------------------------===//
// Progress counters
//===----------------------------------------------------------------------===//

LogicalResult sparse_mla::tile::verifyCounter(Operation *op, MemRefType type) {
  if (type.getRank() != 2 || !type.getElementType().isInteger(32) || type.getMemorySpace() ||
      !type.getLayout().isIdentity())
    return op->emitOpError("counts in a 2-D global memref of i32 with the identity layout, got ")
           << type;
  return success();
}

LogicalResult CounterAddOp::verify() {
  return verifyCounter(*this, getCounter().getType());
}

LogicalResult CounterWaitOp::verify() {
  return verifyCounter(*this, getCounter().getType());
}

LogicalResult AnyOp::verify() {
  if (!cast<RegTileType>(getPred().getType()).getElementType().isInteger(1))
    return emitOpError("takes a tile of i1");
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

GemmOp GemmOp::getJoinedGroup() {
  auto prior = getAcc().getDefiningOp<GemmOp>();
  if (!getAsync() || !prior || !prior.getAsync() || prior->getBlock() != (*this)->getBlock())
    return {};
  return prior;
}

LogicalResult GemmOp::verify() {
  auto aShape = cast<ShapedType>(getA().getType());
  auto bType = cast<SmemTileType>(getB().getType());
  auto accType = cast<RegTileType>(getAcc().getType());
  bool aInRegs = isa<RegTileType>(getA().getType());
  if (aShape.getRank() != 2 || bType.getRank() != 2 || accType.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  Type elt = aShape.getElementType();
  if (!(elt.isBF16() || elt.isF16()) || bType.getElementType() != elt)
    return emitOpError("a and b must both be bf16 or both f16");
  if (!accType.getElementType().isF32())
    return emitOpError("accumulates in f32");
  if (aInRegs && getTransposeA())
    return emitOpError("a register operand cannot be transposed");
  if (auto a = dyn_cast<RegTileType>(getA().getType());
      a && a.getLayout() && !isa<MmaLayoutAttr>(a.getLayout()))
    return emitOpError("a register operand must have the #tile.mma layout");
  TileDim m = getTileDim(aShape, getTransposeA() ? 1 : 0);
  TileDim ka = getTileDim(aShape, getTransposeA() ? 0 : 1);
  TileDim kb = getTileDim(bType, getTransposeB() ? 1 : 0);
  TileDim n = getTileDim(bType, getTransposeB() ? 0 : 1);
  if (ka != kb)
    return emitOpError("contraction sizes differ: ") << ka.str() << " vs " << kb.str();
  if (getTileDim(accType, 0) != m || getTileDim(accType, 1) != n)
    return emitOpError("accumulator must be ") << m.str() << "x" << n.str();
  // Shape parameters are checked once bound.
  if (m.isStatic() && m.size % hopper::kWgmmaM)
    return emitOpError("M (") << m.size << ") must be a multiple of " << hopper::kWgmmaM;
  if (n.isStatic() && n.size % hopper::kWgmmaNStep)
    return emitOpError("N (") << n.size << ") must be a multiple of " << hopper::kWgmmaNStep;
  if (ka.isStatic() && ka.size % hopper::kWgmmaK)
    return emitOpError("K (") << ka.size << ") must be a multiple of " << hopper::kWgmmaK;
  if (accType.getLayout() && !isa<MmaLayoutAttr>(accType.getLayout()))
    return emitOpError("accumulator must have the #tile.mma layout");
  if (getAsync()) {
    // The result is read through tile.gemm_wait, or accumulated into by the
    // next asynchronous product, which then joins its group and is its only
    // reader.
    Value result = getResult();
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      auto next = dyn_cast<GemmOp>(user);
      // A synchronous product reports that it accumulates into this one.
      if (isa<GemmWaitOp>(user) || (next && !next.getAsync() && next.getAcc() == result))
        continue;
      if (next && next.getJoinedGroup() == *this) {
        if (!result.hasOneUse())
          return emitOpError("result of an asynchronous product that the next "
                             "one accumulates into has another reader");
        continue;
      }
      return emitOpError("result of an asynchronous product is read before a "
                         "tile.gemm_wait: ")
             << user->getName();
    }
  }
  if (GemmOp prior = getAcc().getDefiningOp<GemmOp>();
      prior && prior.getAsync() && !getAsync())
    return emitOpError("accumulates into an asynchronous product: give it `async` "
                       "too, or wait for the product first");
  return success();
}

//===----------------------------------------------------------------------===//
// Warp specialization, scoped barriers and mbarriers
//===----------------------------------------------------------------------===//

LogicalResult BarrierOp::verify() {
  std::optional<ArrayRef<int64_t>> wgs = getWarpgroups();
  auto partitions = (*this)->getParentOfType<WarpSpecializeOp>();
  if (!wgs) {
    if (partitions)
      return emitOpError("synchronizes the whole CTA, but inside tile.warp_specialize "
                         "the other warpgroups run other code: give `warpgroups`");
    return success();
  }
  if (partitions) {
    // Every warpgroup of the partition runs this barrier: it must count them.
    auto [first, count] = getRunningWarpgroups(*this);
    for (int64_t w = first; w < first + count; ++w)
      if (!llvm::is_contained(*wgs, w))
        return emitOpError("runs on warpgroup ") << w << ", which it does not list";
  }
  auto kernel = (*this)->getParentOfType<KernelOp>();
  int64_t n = kernel ? kernel.getWarpgroups() : std::numeric_limits<int64_t>::max();
  if (wgs->empty())
    return emitOpError("needs at least one warpgroup");
  for (size_t i = 0; i < wgs->size(); ++i) {
    if ((*wgs)[i] < 0 || (*wgs)[i] >= n)
      return emitOpError("warpgroup ") << (*wgs)[i] << " is not one of the kernel's " << n;
    if (i && (*wgs)[i] <= (*wgs)[i - 1])
      return emitOpError("warpgroups must be listed in increasing order, once each");
  }
  return success();
}

ParseResult MapOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand, 4> inputs;
  SmallVector<Type, 4> types;
  Type resultType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(inputs) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon() || parser.parseTypeList(types) || parser.parseArrow() ||
      parser.parseType(resultType))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body))
    return failure();
  ensureTerminator(*body, parser.getBuilder(), result.location);
  result.addTypes(resultType);
  return parser.resolveOperands(inputs, types, loc, result.operands);
}

void MapOp::print(OpAsmPrinter &p) {
  p << ' ' << getInputs();
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getInputs().getTypes() << " -> " << getResult().getType() << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true, /*printBlockTerminators=*/true);
}

ParseResult WarpSpecializeOp::parse(OpAsmParser &parser, OperationState &result) {
  auto &props = result.getOrAddProperties<Properties>();
  if (succeeded(parser.parseOptionalKeyword("warpgroups"))) {
    DenseI64ArrayAttr warpgroups;
    if (parser.parseLParen() || parser.parseCustomAttributeWithFallback(warpgroups, Type{}) ||
        parser.parseRParen())
      return failure();
    props.warpgroups = warpgroups;
  }
  DenseI64ArrayAttr registers;
  if (parser.parseKeyword("registers") || parser.parseLParen() ||
      parser.parseCustomAttributeWithFallback(registers, Type{}) || parser.parseRParen())
    return failure();
  props.registers = registers;
  if (succeeded(parser.parseOptionalKeyword("stages"))) {
    int64_t stages;
    if (parser.parseLParen() || parser.parseInteger(stages) || parser.parseRParen())
      return failure();
    props.stages = parser.getBuilder().getI64IntegerAttr(stages);
  }
  do {
    if (parser.parseRegion(*result.addRegion()))
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseOptionalAttrDict(result.attributes);
}

void WarpSpecializeOp::print(OpAsmPrinter &p) {
  if (getWarpgroupsAttr()) {
    p << " warpgroups(";
    p.printStrippedAttrOrType(getWarpgroupsAttr());
    p << ")";
  }
  p << " registers(";
  p.printStrippedAttrOrType(getRegistersAttr());
  p << ")";
  if (std::optional<int64_t> stages = getStages())
    p << " stages(" << *stages << ")";
  llvm::interleave(
      getPartitions(), p,
      [&](Region &r) {
        p << " ";
        p.printRegion(r, /*printEntryBlockArgs=*/false);
      },
      ",");
  p.printOptionalAttrDict((*this)->getAttrs(), {getRegistersAttrName(), getWarpgroupsAttrName(),
                                                getStagesAttrName()});
}

LogicalResult WarpSpecializeOp::verify() {
  if (std::optional<int64_t> stages = getStages(); stages && *stages < 1)
    return emitOpError("gives its channels at least one stage, not ") << *stages;
  ArrayRef<int64_t> regs = getRegisters();
  // One region may hold every partition until tile-split-partitions.
  size_t regions = isUnsplit() ? regs.size() : getPartitions().size();
  if (regs.size() != regions)
    return emitOpError("has ") << regions << " regions but " << regs.size()
                               << " register budgets";
  SmallVector<int64_t> sizes(regions, 1);
  if (std::optional<ArrayRef<int64_t>> given = getWarpgroups()) {
    if (given->size() != regions)
      return emitOpError("has ") << regions << " regions but " << given->size()
                                 << " warpgroup counts";
    sizes.assign(given->begin(), given->end());
  }
  int64_t warpgroups = 0;
  for (int64_t s : sizes) {
    if (s < 1)
      return emitOpError("a region runs on at least one warpgroup, not ") << s;
    warpgroups += s;
  }
  if (auto kernel = (*this)->getParentOfType<KernelOp>();
      kernel && kernel.getWarpgroups() != warpgroups)
    return emitOpError("regions must cover the kernel's ")
           << kernel.getWarpgroups() << " warpgroups, not " << warpgroups;
  int64_t total = 0;
  for (auto [r, s] : llvm::zip(regs, sizes)) {
    if (r < hopper::kSetMaxNRegMin || r > hopper::kSetMaxNRegMax || r % hopper::kSetMaxNRegStep)
      return emitOpError("register budget ")
             << r << " is not a multiple of " << hopper::kSetMaxNRegStep << " in ["
             << hopper::kSetMaxNRegMin << ", " << hopper::kSetMaxNRegMax << "]";
    total += r * s * hopper::kWarpgroupThreads;
  }
  if (total > hopper::kRegistersPerCTA)
    return emitOpError("register budgets need ")
           << total << " registers, more than the " << hopper::kRegistersPerCTA << " of a CTA";
  for (Region &region : getPartitions())
    if (!region.empty() && region.front().getNumArguments())
      return emitOpError("regions take no arguments");
  if (!isUnsplit()) {
    WalkResult tagged = getOperation()->walk([&](Operation *op) {
      return op->hasAttr(kPartitionAttr) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (tagged.wasInterrupted())
      return emitOpError("has a region per partition: its ops take no '")
             << kPartitionAttr << "'";
  }
  WalkResult r = getOperation()->walk([&](Operation *op) {
    if (op == getOperation())
      return WalkResult::advance();
    // Ops that split work over, or wait for, every warpgroup of the CTA
    // (tile.wait and a pipelined loop's copies end in a CTA barrier).
    auto gather = dyn_cast<GatherRowsOp>(op);
    if (isa<MBarrierInitOp, ChannelOp, WarpSpecializeOp, AsyncCopyOp, WaitOp, PipelinedForOp>(op) ||
        (gather && !gather.getPerWarpgroup())) {
      op->emitOpError("needs every warpgroup of the CTA: not inside tile.warp_specialize");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

LogicalResult MBarrierInitOp::verify() {
  if ((*this)->getParentOfType<WarpSpecializeOp>())
    return emitOpError("needs every warpgroup of the CTA: not inside tile.warp_specialize");
  if (failed(verifyMBarriers(*this, getBars().getType())))
    return failure();
  TileDim n = getTileDim(getBars().getType(), 1);
  size_t counts = getCounts().size();
  if (counts != 1 && (!n.isStatic() || counts != static_cast<size_t>(n.size)))
    return emitOpError("takes one count for all ") << n.str() << " barriers or one each, not "
                                                   << counts;
  return success();
}
LogicalResult MBarrierArriveOp::verify() {
  if (getAfterCopies() && getExpectTx())
    return emitOpError("arrives after its copies or expects transactions, not both");
  if (getCta() && (getAfterCopies() || getExpectTx()))
    return emitOpError("arrives at another CTA's barrier only as a plain arrival, "
                       "without `after_copies` or `expect_tx`");
  if (failed(verifyClusterAccess(*this, static_cast<bool>(getCta()))))
    return failure();
  return verifyMBarriers(*this, getBars().getType());
}
LogicalResult MBarrierWaitOp::verify() { return verifyMBarriers(*this, getBars().getType()); }

LogicalResult GemmWaitOp::verify() {
  for (Value v : getValues()) {
    auto gemm = v.getDefiningOp<GemmOp>();
    if (!gemm || !gemm.getAsync())
      return emitOpError("waits for the results of tile.gemm {async} only");
    // Groups complete in order: at most the younger groups of this block may
    // still run (a product from another block: none).
    // A product that joins the group of the one before starts none.
    int64_t younger = 0;
    if (gemm->getBlock() == (*this)->getBlock())
      for (Operation *op = gemm->getNextNode(); op && op != getOperation(); op = op->getNextNode())
        if (auto g = dyn_cast<GemmOp>(op); g && g.getAsync() && !g.getJoinedGroup())
          ++younger;
    if (getPending() > static_cast<uint64_t>(younger))
      return emitOpError("leaves ") << getPending() << " groups running, but only " << younger
                                    << " were issued after a product it waits for";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PipelinedForOp
//===----------------------------------------------------------------------===//

ParseResult PipelinedForOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  int64_t stages;
  iv.type = b.getIndexType();
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lb) || parser.parseKeyword("to") ||
      parser.parseOperand(ub) || parser.parseKeyword("step") ||
      parser.parseOperand(step) || parser.parseKeyword("stages") ||
      parser.parseLParen() || parser.parseInteger(stages) ||
      parser.parseRParen())
    return failure();
  SmallVector<OpAsmParser::Argument> regionArgs{iv};
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    if (parser.parseAssignmentList(regionArgs, inits) ||
        parser.parseArrowTypeList(result.types))
      return failure();
    if (regionArgs.size() != result.types.size() + 1)
      return parser.emitError(parser.getNameLoc(),
                              "one type per iter_arg expected");
    for (auto [arg, type] : llvm::zip(llvm::drop_begin(regionArgs), result.types))
      arg.type = type;
  }
  Type index = b.getIndexType();
  if (parser.resolveOperand(lb, index, result.operands) ||
      parser.resolveOperand(ub, index, result.operands) ||
      parser.resolveOperand(step, index, result.operands) ||
      parser.resolveOperands(inits, result.types, parser.getNameLoc(),
                             result.operands))
    return failure();
  result.addAttribute("stages", b.getI64IntegerAttr(stages));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, regionArgs) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  PipelinedForOp::ensureTerminator(*body, b, result.location);
  return success();
}

void PipelinedForOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " = " << getLowerBound() << " to "
    << getUpperBound() << " step " << getStep() << " stages(" << getStages()
    << ")";
  if (!getInitArgs().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(llvm::zip(getRegionIterArgs(), getInitArgs()), p,
                          [&](auto pair) {
                            p << std::get<0>(pair) << " = " << std::get<1>(pair);
                          });
    p << ") -> (" << getResultTypes() << ")";
  }
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/!getInitArgs().empty());
  p.printOptionalAttrDict((*this)->getAttrs(), {"stages"});
}

LogicalResult PipelinedForOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInitArgs().size() + 1 ||
      !body.getArgument(0).getType().isIndex())
    return emitOpError("body takes the index and one argument per iter_arg");
  for (auto [i, init, arg, res] :
       llvm::enumerate(getInitArgs(), getRegionIterArgs(), getResults()))
    if (init.getType() != arg.getType() || init.getType() != res.getType())
      return emitOpError("iter_arg #") << i << " changes type";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (TypeRange(yield.getValues().getTypes()) != getResultTypes())
    return emitOpError("yields values of other types than its results");
  return success();
}
