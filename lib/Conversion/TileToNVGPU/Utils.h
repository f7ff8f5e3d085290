//===- Utils.h - Shared helpers of the tile lowering ------------*- C++ -*-===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVGPU_UTILS_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVGPU_UTILS_H

#include "sparse-mla/Conversion/Passes.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "mlir/Transforms/DialectConversion.h"

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

/// Row-major element strides (i64) of a memref whose rows are contiguous.
llvm::SmallVector<mlir::Value> rowMajorStrides(mlir::OpBuilder &b,
                                               mlir::Location loc,
                                               mlir::Value memref);

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

void populateElementwiseToVectorPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateMemoryToNVGPUPatterns(TileTypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
/// Puts GEMMs that follow each other into one wgmma group: one fence before
/// the first, one commit and wait after the last. Run before the patterns.
void groupAdjacentGemms(mlir::Operation *root);
void populateGemmToNVGPUPatterns(TileTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);

} // namespace sparse_mla::tile

#endif
