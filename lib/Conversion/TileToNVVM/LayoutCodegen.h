//===- LayoutCodegen.h - Which elements a thread holds, as IR --*- C++ -*-===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVVM_LAYOUTCODEGEN_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVVM_LAYOUTCODEGEN_H

#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "mlir/IR/Builders.h"

namespace sparse_mla::tile {

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

/// For sliced tiles, the predicate of the one thread that writes each
/// element (null for layouts that hold each element once).
mlir::Value ownerPredicate(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Attribute layout);

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

} // namespace sparse_mla::tile

#endif
