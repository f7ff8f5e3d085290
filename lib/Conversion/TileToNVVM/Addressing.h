//===- Addressing.h - Global and shared-memory addresses -------*- C++ -*-===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVVM_ADDRESSING_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVVM_ADDRESSING_H

#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "mlir/IR/Builders.h"
#include "LayoutCodegen.h"

#include <functional>

namespace sparse_mla::tile {

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

/// The calling warpgroup's region of `op`'s shared scratch (placed by
/// tile-allocate-shared: offset + warpgroup x bytes), as !llvm.ptr<3>.
mlir::Value warpgroupScratch(mlir::OpBuilder &b, mlir::Location loc, ScratchOpInterface op);

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

} // namespace sparse_mla::tile

#endif
