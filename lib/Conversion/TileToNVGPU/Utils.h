//===- Utils.h - Shared helpers of the tile lowering ------------*- C++ -*-===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVGPU_UTILS_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVGPU_UTILS_H

#include "sparse-mla/Conversion/Passes.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>

namespace sparse_mla::tile {

/// Register tiles become the vector of the elements one thread holds, shared
/// tiles a pointer into shared memory, tokens an (unused) i32.
class TileTypeConverter : public mlir::TypeConverter {
public:
  explicit TileTypeConverter(mlir::MLIRContext *ctx);
};

/// Index of the calling thread within its warpgroup (0..127), as i32.
mlir::Value threadInWarpgroup(mlir::OpBuilder &b, mlir::Location loc);

/// Index of the calling thread's warpgroup (i32), broadcast from lane 0 so
/// that ptxas knows it is warp-uniform.
mlir::Value warpgroupIndex(mlir::OpBuilder &b, mlir::Location loc);

/// i32 value of a layout base formula for thread `tid`.
mlir::Value evalBaseTerm(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value tid, const BaseTerm &term);

/// Base coordinates (i32) of the calling thread for `layout`, one per dim.
llvm::SmallVector<mlir::Value, 2>
threadBaseCoords(mlir::OpBuilder &b, mlir::Location loc, mlir::Attribute layout,
                 unsigned rank);

mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value i64Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value toI64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value toI32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// The aligned base pointer of a global memref, as !llvm.ptr<1>.
mlir::Value globalBasePointer(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value memref);

/// Element strides (i64) of a global memref: row-major from the sizes with
/// the identity layout, read from the descriptor with a strided one (rows
/// of a view apart by more than their length).
llvm::SmallVector<mlir::Value> memrefStrides(mlir::OpBuilder &b, mlir::Location loc,
                                             mlir::Value memref);

/// The stride (i64) between the rows of a memref of rank >= 2.
mlir::Value rowPitch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value memref);

/// The size (i64) of dimension `d` of a memref.
mlir::Value memrefDim(mlir::OpBuilder &b, mlir::Location loc, mlir::Value memref,
                      unsigned d);

/// Base of the CTA's dynamic shared memory, as !llvm.ptr<3>.
mlir::Value sharedBasePointer(mlir::OpBuilder &b, mlir::Location loc);

/// Byte offset (i32) of element (row, col) in a shared tile, swizzle applied.
mlir::Value sharedByteOffset(mlir::OpBuilder &b, mlir::Location loc,
                             SharedLayoutAttr layout, unsigned elementBytes,
                             mlir::Value row, mlir::Value col);

/// `base + offset` bytes.
mlir::Value bytePointer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                        mlir::Value offset);

/// Position in a sliced layout's element list of the element at `coord`.
int64_t slicePosition(const ThreadElements &slice, int64_t coord);

/// Element (or vector of `n` elements) type of an access.
mlir::Type accessType(mlir::Type elt, unsigned n);

/// One access of a tile op: a run of elements at tile coordinates.
struct Run {
  int64_t first;                         // index of its first element
  llvm::SmallVector<mlir::Value, 2> coords; // tile coordinates (i32)
  llvm::SmallVector<int64_t, 2> offsets;    // constant part of the coordinates
  llvm::SmallVector<mlir::Value, 2> base;   // the thread's part (coords - offsets)
};

/// The runs of `te.vector` elements the calling thread holds.
llvm::SmallVector<Run> runsOf(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Attribute layout, const ThreadElements &te);

/// Scatters a loaded run into the thread's element list.
void insertRun(mlir::OpBuilder &b, mlir::Location loc,
               llvm::SmallVectorImpl<mlir::Value> &elems, mlir::Value run,
               int64_t first);

/// The run of `n` elements starting at `first` of a thread's vector.
mlir::Value extractRun(mlir::OpBuilder &b, mlir::Location loc, mlir::Value vec,
                       int64_t first, unsigned n);

/// Runs `body` under `cond` (if any).
void ifThen(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
            llvm::function_ref<void(mlir::OpBuilder &)> body);

/// For sliced tiles, the predicate of the one thread that writes each
/// element (null for layouts that hold each element once).
mlir::Value ownerPredicate(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Attribute layout);

/// `a && c`, where a null operand is true.
mlir::Value andOpt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                   mlir::Value c);

/// A PTX instruction with side effects and no results.
void emitPtx(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange operands,
             llvm::StringRef asmStr, llvm::StringRef constraints);

/// The 32-bit shared address of mbarrier `index` of a 1 x N tile at `bars`.
mlir::Value mbarrierAddress(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bars,
                            mlir::Value index);

/// The calling warpgroup's region of `op`'s shared scratch (placed by
/// tile-allocate-shared: offset + warpgroup x bytes), as !llvm.ptr<3>.
mlir::Value warpgroupScratch(mlir::OpBuilder &b, mlir::Location loc, ScratchOpInterface op);

/// Whether `op` is in a kernel launched in clusters (its gpu.func carries
/// nvvm.cluster_dim).
bool inClusterKernel(mlir::Operation *op);

/// Every thread of the cluster's CTAs waits for all the others
/// (barrier.cluster.arrive, release, then wait, acquire).
void clusterBarrier(mlir::OpBuilder &b, mlir::Location loc);

/// getInterleavedColumn (Layouts.h) of an i32 column, at run time.
mlir::Value interleavedColumn(mlir::OpBuilder &b, mlir::Location loc, mlir::Value col);

/// Contiguous elements of a thread's tile once its columns are interleaved:
/// the pairs of each run (runs start at a multiple of their length, so a
/// pair starts at an even column and stays contiguous), at stored columns.
struct InterleavedPiece {
  mlir::Value row, col; // tile row; stored column within the tile (i32)
  mlir::Value logicalCol; // the column of the first element
  int64_t first;        // position of the first element in the thread's vector
  unsigned count;       // 1 or 2
  int64_t rowOffset;    // the row's static part (ThreadElements::offsets)
};
llvm::SmallVector<InterleavedPiece> interleavedPieces(mlir::OpBuilder &b, mlir::Location loc,
                                                      RegTileType type);

/// `bar.sync 1 + w, 128`: the threads of the calling warpgroup w (barrier 0
/// is the CTA's).
void warpgroupBarrier(mlir::OpBuilder &b, mlir::Location loc);

/// Pointer to the element of a global window at tile coordinates `coords`,
/// and the predicate that all bounded coordinates are inside their bounds.
struct WindowAccess {
  mlir::Value base;
  llvm::SmallVector<mlir::Value> strides;
  llvm::SmallVector<mlir::Value> indices; // i64
  llvm::SmallVector<mlir::Value> bounds;  // i64, empty when unbounded
  unsigned firstTileDim;

  WindowAccess(mlir::OpBuilder &b, mlir::Location loc, mlir::Value memref,
               mlir::ValueRange idx, mlir::ValueRange bnds, unsigned tileRank);

  mlir::Value pointer(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elt,
                      llvm::ArrayRef<mlir::Value> coords);

  /// Coordinates of the element `k` places after `coords` along the
  /// innermost dimension (the direction of a thread's runs).
  static llvm::SmallVector<mlir::Value, 2>
  shifted(mlir::OpBuilder &b, mlir::Location loc,
          llvm::ArrayRef<mlir::Value> coords, int64_t k);

  /// Compares in 32 bits (coordinates and bounds are tensor dimensions,
  /// below 2^31): half the registers and instructions of 64-bit compares.
  mlir::Value inBounds(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::ArrayRef<mlir::Value> coords);
};

/// Shared-memory address of a run of a register tile (in `regLayout`, runs
/// of `vector` elements) in the shared tile of `type` at `base`.
mlir::Value sharedRunPointer(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value base, SmemTileType type, const Run &run,
                             mlir::Attribute regLayout, unsigned vector);

/// The thread's elements of a register tile of `type` (as `vt`, its
/// converted type) read from the shared tile at `srcBase`.
mlir::Value readRunsFromShared(mlir::OpBuilder &b, mlir::Location loc, RegTileType type,
                               mlir::VectorType vt, mlir::Value srcBase, SmemTileType src);

/// Stores one run (a scalar or vector value) at a pointer.
using RunStore = std::function<void(mlir::OpBuilder &, mlir::Location, mlir::Value value,
                                    mlir::Value ptr)>;

/// Stores the thread's elements of `value` (a register tile of `type`) into
/// the shared tile at `dstBase`, converting f32 to its element type; each run
/// with `store` where given, else with llvm.store.
void writeRunsToShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                       RegTileType type, mlir::Value dstBase, SmemTileType dst,
                       const RunStore &store = nullptr);

void populateElementwiseToVectorPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateGlobalMemoryToNVGPUPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateSharedMemoryToNVGPUPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateAsyncCopiesToNVGPUPatterns(TileTypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
void populateScattersToNVGPUPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateBarriersToNVGPUPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateElementsToNVGPUPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
/// Gives each `tile.barrier {warpgroups}`, and each `tile.any` inside a
/// partition, its hardware barrier id (the `kBarrierIdAttr` attribute) and
/// thread count.
constexpr llvm::StringLiteral kBarrierIdAttr = "tile.barrier_id";
/// The threads that take part in it (the partition may be gone by then).
constexpr llvm::StringLiteral kBarrierThreadsAttr = "tile.barrier_threads";
void assignBarrierIds(mlir::Operation *root);

/// Puts GEMMs that follow each other into one wgmma group: one fence before
/// the first, one commit and wait after the last. Run before the patterns.
void groupAdjacentGemms(mlir::Operation *root);
void populateGemmToNVGPUPatterns(TileTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);

} // namespace sparse_mla::tile

#endif
