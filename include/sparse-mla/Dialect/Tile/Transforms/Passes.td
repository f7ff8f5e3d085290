//===- Passes.td - Passes on the tile dialect --------------*- tablegen -*-===//
#ifndef SPARSE_MLA_TILE_PASSES
#define SPARSE_MLA_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileSpecializePass : Pass<"tile-specialize", "::mlir::ModuleOp"> {
  let summary = "Writes one kernel per variant of a kernel's shape parameters";
  let description = [{
    A kernel with `variants([{hw = 16, d = 512}, ...])` is generic over the
    shape parameters it names: `{hw}` dimensions of its tile types and
    `tile.param "hw"` values. Each variant becomes a kernel of its own,
    named `<kernel>_<name><value>...` (the bindings in sorted order, e.g.
    `@bwd_d512_hw16`), with every parameter replaced by its value and the
    binding kept as the `tile.params` attribute (it reaches the manifest).
    The generic kernel is removed. Each variant is verified at once, so a
    size that breaks a rule (a GEMM width that is not a multiple of 8, say)
    is reported with the variant that gave it. A parameter may choose code:
    each `scf.if` whose condition becomes a constant (`tile.param "det" :
    i1`) is replaced by the branch it takes, so the passes that follow see
    the variant's code path alone. They refuse kernels that still have
    shape parameters.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def TileDecodeWorkPass : Pass<"tile-decode-work", "::sparse_mla::tile::KernelOp"> {
  let summary = "Writes each tile.work_id as the decode of the kernel's declared grid";
  let description = [{
    The kernel's `grid(...)` lists each grid dimension's work axes with
    their extents, outermost first, and a window of its work where a launch
    covers part of it. Each `tile.work_id "a"` becomes, where it stands,
    the CTA's coordinate on axis a: its dimension's `tile.block_id`, plus
    the window's start, divided by the extents of the axes inside a and
    taken modulo a's own extent (the outermost axis needs no modulo: the
    runtime keeps the grid within the work). The decode is 32-bit (CTA ids
    are, and the runtime keeps each dimension's work below 2^32), from the
    kernel's scalars and tensor sizes with unsigned arithmetic.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def TileSplitPartitionsPass : Pass<"tile-split-partitions", "::sparse_mla::tile::KernelOp"> {
  let summary = "Gives each partition of a tile.warp_specialize written once its own region";
  let description = [{
    A `tile.warp_specialize` with one region and more register budgets
    holds the code of all its partitions: an op tagged `tile.partition = r`
    runs in partition r, and so does every op that takes its results or
    stands in a loop or branch whose bounds or condition do; a result of
    `scf.for` or `scf.if` belongs where the values yielded for it do; the
    other ops run in every partition. Each partition's region is a clone of
    the body without the ops it does not run, its loops and branches
    without the other partitions' results, and without what it computes
    but does not use. An op that takes values of two partitions, or of
    another than its tag, is an error: partitions hand data over through
    channels.

    The hand-overs follow from the data: a shared tile allocated outside
    the op that ops of one partition write in its body (by their declared
    memory effects; views followed through ViewLikeOpInterface) and ops of
    others read, in one block, gets a `tile.channel` of one stage in its
    place: put_enter before the first write, put_exit after the last (after
    the copies' tokens), get_enter before the first read, get_exit after
    the last one completes (the wait of an asynchronous GEMM). Buffers of
    one producer, each written before any of them is read, share a
    channel. A buffer written by two partitions, read before its last
    write, or used outside that block is an error.

    A `tile.gemm` with `tile.partition_rows = array<i64: 0, r1, ...>` runs
    in every partition, partition p on result rows [r_p, r_p+1): its A
    operand becomes the slice of those rows (columns with `transpose_a`),
    and every value that carries the result (the accumulator's splat, loop
    arguments and results, branch results, elementwise maps) the narrower
    type; a transposed `tile.store_rows` of it writes from column r_p. So
    the kernel holds one dQ^T accumulator, and which warpgroup holds which
    rows is the attribute's. `tile.partition_cols` shares result columns
    the same way: B becomes the slice of those columns (rows with
    `transpose_b`), and a `tile.scatter_add_rows` of the result adds from
    column c_p on (a constant column stays one, so that tile-split-d still
    joins scatters into the same columns): which warpgroup adds which dKV
    columns. The shapes must be known: run it right after tile-specialize;
    the passes after it see one region per partition.
  }];
}

def TileSchedulePass : Pass<"tile-schedule", "::sparse_mla::tile::KernelOp"> {
  let summary = "Sets a kernel's schedule knobs from options, over what its text says";
  let description = [{
    The one place where a build overrides how a kernel is scheduled, so
    that an experiment on the schedule is a compiler option and never an
    edit of the kernel text. Each option left empty keeps what the kernel
    says; each one given must find its knob:
    - `registers`: the register budgets of every `tile.warp_specialize`
      (one per partition);
    - `partition-rows`: the first row of each partition's share of every
      `tile.gemm` with `tile.partition_rows` (which warpgroup holds which
      rows of dQ^T in the backward);
    - `partition-cols`: the same for `tile.partition_cols` (which
      warpgroup adds which columns of dKV);
    The knobs tile-split-d reads (`overlap`, `chunk`) and the stages of the
    channels (tile-lower-channels' `stages`: tile-split-partitions inserts
    the channels) are those passes' options.
    Values are checked where the knob is: the op verifiers refuse budgets
    and shares that do not fit. Run it right after tile-specialize.
  }];
  let options = [
    ListOption<"registers", "registers", "int64_t",
               "Register budget of each partition of every tile.warp_specialize">,
    ListOption<"partitionRows", "partition-rows", "int64_t",
               "First result row of each partition for GEMMs with tile.partition_rows">,
    ListOption<"partitionCols", "partition-cols", "int64_t",
               "First result column of each partition for GEMMs with tile.partition_cols">
  ];
}

def TileAblatePass : Pass<"tile-ablate", "::sparse_mla::tile::KernelOp"> {
  let summary = "Takes gathers or scatters of partitions out, to time what they cost";
  let description = [{
    For timing only (bench/ablate.py): the kernel's results are wrong. What
    a part of the work costs inside the whole kernel is the time it saves
    when taken out with the rest in place.
    - `idle-gathers`: every `tile.gather_rows` of a partition keeps its
      instructions but reads nothing (its row indices become -1 behind a
      run-time test the compiler cannot fold).
    - `idle-scatters`: the same for the `tile.scatter_add_rows` of the
      partitions listed: no byte reaches memory.
    - `drop-scatters`: the `tile.scatter_add_rows` of the partitions listed
      are erased, with the products only they used.
    Options that match no op are an error. Runs after tile-split-partitions.
  }];
  let options = [
    Option<"idleGathers", "idle-gathers", "bool", /*default=*/"false",
           "Gathers of every partition read no row">,
    ListOption<"idleScatters", "idle-scatters", "int64_t",
               "Partitions whose scatters add no row">,
    ListOption<"dropScatters", "drop-scatters", "int64_t",
               "Partitions whose scatters (and the products only they use) are erased">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileCountOpsPass : Pass<"tile-count-ops", "::sparse_mla::tile::KernelOp"> {
  let summary = "Counts how often each CTA runs an op (tests and profiles only)";
  let description = [{
    With `op=<name>`, gives the kernel an optional argument `op_counts`
    (`memref<?x?xi32>` of [CTAs, 1], zeroed by the caller) and, after the
    first op of that name in program order, adds 1 to the CTA's row from
    one thread of each warpgroup that runs it (`tile.counter_add`), where
    the argument is given. CTAs are numbered in launch order, x fastest.
    Run after tile-split-partitions, so that an op of one partition is
    counted by its warpgroup alone. The shipped pipeline does not run it;
    `sparse-mla-bench-to-ptx` does with `count-op`.
  }];
  let options = [
    Option<"op", "op", "std::string", /*default=*/"\"\"",
           "The op to count (none: the pass does nothing)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileLowerChannelsPass : Pass<"tile-lower-channels", "::sparse_mla::tile::KernelOp"> {
  let summary = "Writes out channels as rings of buffers, mbarriers, slots and phases";
  let description = [{
    Each `tile.channel` becomes, where it stands, a `tile.alloc` per buffer
    type (a 3-D ring with more than one stage) and a `1 x 2S` tile of
    mbarriers, full[s] then free[s], initialized to expect the threads of
    its producer partition and of all its consuming partitions. Each
    partition that puts or gets counts its rounds of that side in an i32
    threaded through the `scf.for` and `scf.if` around the side's ops
    (others are refused); round n is slot n % S in phase (n / S) & 1.
    `tile.put_enter` waits for free[s] to complete the phase before and
    gives the slot's buffers, `tile.put_exit` arrives at full[s] (after the
    thread's copies with `after`), `tile.get_enter` waits for full[s],
    `tile.get_exit` arrives at free[s]. Run it after tile-split-partitions
    and tile-split-d: the passes after it see buffers and mbarriers.

    Each channel first gets up to its most stages (`stages` > 0, or else
    its tile.warp_specialize's `stages(n)`, or else as typed), one more at
    a time while the kernel's shared memory holds them: the rings that
    copies fill first (their depth hides the copies' latency), then the
    smallest (the memory buys the most stages), so one value suits
    variants of any size.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Most stages of every channel, as the shared memory allows (0: the "
           "tile.warp_specialize's stages(n), or as typed)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def TileSplitDPass : Pass<"tile-split-d", "::sparse_mla::tile::KernelOp"> {
  let summary = "Cuts wide GEMM-and-scatter chains into column chunks shared by the warpgroups";
  let description = [{
    A chain is a `tile.splat`, `tile.gemm` ops that each accumulate into
    the one before, and a `tile.scatter_add_rows` of the last result. Its
    f32 accumulator costs N/2 registers per thread per 64 rows, so one as
    wide as a kv row (576 columns: 288 registers) cannot be held. A chain
    wider than `chunk` becomes `scf.for` loops over `chunk`-column pieces:
    warpgroup w computes pieces w, w + W, ... (W warpgroups), each from the
    same A operands and a column slice of B, and scatters it. Chains of one
    block that scatter into the same destination, rows and column, with
    only GEMMs and effect-free ops between the scatters, are summed piece
    by piece before one scatter (the later ones must start from +0.0), so
    `dKV += dS^T Q` and `dKV[:, :D] += P^T dO` reduce each element once.
    Pieces covered by the same chains share a loop.

    With `overlap` (the default), chains that one warpgroup runs are cut
    into straight-line pieces instead where two pieces fit its register
    budget (`setmaxnreg`) beside the register tiles live at the scatters:
    each piece's products are one asynchronous wgmma group issued before the
    previous piece is waited for and scattered, so the tensor cores compute
    piece c + 1 while the threads reduce piece c.
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", /*default=*/"64",
           "Columns of one piece">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Issue each piece's products before the previous piece's scatter, "
           "where two pieces fit the registers">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def TileAssignLayoutsPass : Pass<"tile-assign-layouts", "::sparse_mla::tile::KernelOp"> {
  let summary = "Chooses thread layouts for register tiles and swizzles for shared tiles";
  let description = [{
    Gives every register tile without a layout one, starting from the ops
    that fix it and spreading it through the ops that keep it:
    GEMM accumulators are `#tile.mma`; gathers and copies read their row
    indices as slices of the coalesced layout of their rows; loads with no
    other constraint use 16-byte coalesced `#tile.blocked` layouts (a single
    row spread over the warpgroup); ops whose tiles share one layout (maps,
    gathers, scatters, atomics, scans: the `SameLayoutTiles` trait), loops
    and `scf.if` propagate layouts; reductions, broadcasts and the row
    indices of row scatters and stores move between a layout and its
    slices. A cheap producer (load, splat, iota, map, ...) needed in two
    layouts is rematerialized once per layout. Shared allocations get the widest
    swizzle that divides their rows, and slices inherit the parent's.
  }];
  let dependentDialects = ["::sparse_mla::tile::TileDialect"];
}

def TileStageScattersPass : Pass<"tile-stage-scatters", "::sparse_mla::tile::KernelOp"> {
  let summary = "Sends row scatters through shared memory and the TMA where room allows";
  let description = [{
    Gives every `tile.scatter_add_rows` a staging tile (see the op), one per
    warpgroup and value shape, unswizzled with rows padded by 16 bytes, when
    the kernel's shared plan (SharedMemoryPlan.h) with these fits in `limit`
    bytes. Run it after tile-split-d, whose pieces are what a
    staging tile holds, and after tile-pipeline-loops: a second gather stage
    is worth more than staging (bench/NOTES.md), so staging takes only the
    room the rings leave.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"kSharedBytesPerCTA",
           "Bytes of shared memory one CTA may use">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TilePipelineLoopsPass : Pass<"tile-pipeline-loops", "::sparse_mla::tile::KernelOp"> {
  let summary = "Software-pipelines the asynchronous copies of tile.pipelined_for";
  let description = [{
    Rewrites each `tile.pipelined_for` into an `scf.for` whose copies run
    ahead of the compute. The copies at the head of the body, with the index
    computations they depend on, form the prefetch slice. With S stages the
    destination allocations become rings of S buffers; the slice for the
    first S-1 iterations is issued before the loop, and iteration i waits
    for its own copies (`tile.async_wait S-2` and a barrier) and then issues
    those of iteration i+S-1. With one stage, the copies of iteration i+1
    start right after the last use of their buffers in iteration i.
    Copies for iterations past the end are issued with all rows masked, so
    every thread commits the same number of groups. The slice's loads (a
    gather's row indices) run one iteration further ahead and reach their
    copies as iter_args, so issuing a copy never waits for global memory;
    the body's own copies of those loads are issued before its wait.
    `stages` is the most a loop uses: when the kernel's shared plan
    (SharedMemoryPlan.h) with the rings would not fit in `limit` bytes, the
    loop gets the largest number of stages that fits (one stage at least; tile-allocate-shared
    reports a kernel that does not fit even then). A generic kernel asks for
    two stages, and its variants with large tiles get one.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"kSharedBytesPerCTA",
           "Bytes of shared memory one CTA may use">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def TileAllocateSharedPass : Pass<"tile-allocate-shared", "::sparse_mla::tile::KernelOp"> {
  let summary = "Places the shared tiles of a kernel in its dynamic shared memory";
  let description = [{
    Gives each `tile.alloc` its offset in the kernel's shared plan
    (SharedMemoryPlan.h: swizzled tiles first, each stage on a 1024-byte
    atom, then the others on 16 bytes), then each op that needs scratch
    (`ScratchOpInterface`: a scan whose rows span warps) a region per
    warpgroup after them, recorded as its `scratch` offset, and records the
    total as the kernel's `tile.shared_bytes` attribute. Fails
    with a diagnostic when the kernel needs more than the 227 KiB a Hopper
    CTA may use. Run it after tile-assign-layouts: scratch sizes depend on
    layouts.
  }];
  let options = [
    Option<"limit", "limit", "int64_t", /*default=*/"kSharedBytesPerCTA",
           "Bytes of shared memory one CTA may use">
  ];
}

def TileMaterializeWaitsPass : Pass<"tile-materialize-waits", "::sparse_mla::tile::KernelOp"> {
  let summary = "Turns each tile.wait into a counted cp.async wait and a barrier";
  let description = [{
    A `tile.wait` names the copies it waits for by their tokens; the
    hardware counts commit groups. Each wait becomes `tile.async_wait
    {pending = N}`, N the copy groups started after its latest-started
    token in the same block (0 where a nested region with copies lies in
    between, or the token is not found there), followed by a CTA
    `tile.barrier` so that every thread sees the copied data. Run after
    tile-pipeline-loops, which issues the copies in their final order.
  }];
}

def TileCheckSharedHazardsPass : Pass<"tile-check-shared-hazards", "::sparse_mla::tile::KernelOp"> {
  let summary = "Refuses a GEMM that reads shared memory threads wrote with no barrier since";
  let description = [{
    Threads' stores into a shared tile (`tile.write`, `tile.scatter`: ops
    that write a shared tile by their declared effects, but copies whose
    token a `tile.wait` synchronizes and stores to another CTA) reach the
    tensor cores only after a `tile.barrier` (which also fences them for
    wgmma's async proxy). A `tile.gemm` that reads such a tile, or another
    slice of its allocation, with no barrier or `tile.wait` in between is an
    error: on the GPU it would read stale data. Runs on the final tile IR
    (after the passes that insert the channels' and waits' barriers);
    nested regions inherit the writes before them, and what a region leaves
    unsynchronized on any path counts after it; writes carried around a
    loop are not followed.
  }];
}

def TileGroupGemmsPass : Pass<"tile-group-gemms", "::sparse_mla::tile::KernelOp"> {
  let summary = "Marks GEMMs that share one wgmma group";
  let description = [{
    A wgmma group is fenced before its first product and committed and
    waited after its last. Synchronous GEMMs that follow one another with
    only pure ops that make no register tiles in between share a group, and
    an asynchronous product joined by the next (`tile.gemm` into its
    result) shares the joining product's. The pass marks each GEMM that is
    not its group's first (`tile.wgmma_group_not_first`) or last
    (`tile.wgmma_group_not_last`); the lowering fences and commits by them.
  }];
}

def TileAssignBarrierIdsPass : Pass<"tile-assign-barrier-ids", "::sparse_mla::tile::KernelOp"> {
  let summary = "Gives barriers of some warpgroups their hardware barrier ids";
  let description = [{
    A CTA has 16 named barriers. Each `tile.barrier warpgroups([..])` and
    each `tile.any` inside a warp-specialized partition (a vote of the
    warpgroups that run it) gets `tile.barrier_id` and
    `tile.barrier_threads`: the whole CTA 0, warpgroup w alone 1 + w, any
    other set of warpgroups the next free id in order of first appearance
    (the same set, the same id). convert-tile-to-nvvm emits `bar.sync id,
    count` (or `bar.red`) from them and refuses barriers without.
  }];
}

def TileRecordManifestPass : Pass<"tile-record-manifest", "::mlir::ModuleOp"> {
  let summary = "Records what the runtime needs to launch each kernel on the module";
  let description = [{
    Sets the module's `sparse_mla.kernels` to one dictionary per
    `tile.kernel`: name, threads, shared_bytes (tile-allocate-shared),
    cluster, params (the variant's shape parameters, tile-specialize) and
    args (the argument ABI: memrefs as the standard descriptor with their
    rank, element type and static shape; scalars by type).
    sparse-mla-emit-kernels writes it as the JSON manifest.
  }];
}

#endif
