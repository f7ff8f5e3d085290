//===- Utils.h - Shared helpers of the tile lowering ------------*- C++ -*-===//
//
// The type converter, small value helpers and the pattern sets; the
// helpers by family: LayoutCodegen.h, Addressing.h, Synchronization.h.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVVM_UTILS_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVVM_UTILS_H

#include "sparse-mla/Conversion/Passes.h"
#include "sparse-mla/Dialect/Tile/IR/Layouts.h"
#include "Addressing.h"
#include "LayoutCodegen.h"
#include "Synchronization.h"
#include "mlir/Transforms/DialectConversion.h"

namespace sparse_mla::tile {

/// Register tiles become the vector of the elements one thread holds, shared
/// tiles a pointer into shared memory, tokens an (unused) i32.
class TileTypeConverter : public mlir::TypeConverter {
public:
  explicit TileTypeConverter(mlir::MLIRContext *ctx);
};

mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value i64Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value toI64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value toI32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// Runs `body` under `cond` (if any).
void ifThen(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
            llvm::function_ref<void(mlir::OpBuilder &)> body);

/// `a && c`, where a null operand is true.
mlir::Value andOpt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                   mlir::Value c);

/// A PTX instruction with side effects and no results.
void emitPtx(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange operands,
             llvm::StringRef asmStr, llvm::StringRef constraints);

void populateElementwiseToVectorPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateGlobalMemoryToNVVMPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateSharedMemoryToNVVMPatterns(TileTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateAsyncCopiesToNVVMPatterns(TileTypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
void populateScattersToNVVMPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateBarriersToNVVMPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateCountersToNVVMPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateElementsToNVVMPatterns(TileTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateGemmToNVVMPatterns(TileTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);

} // namespace sparse_mla::tile

#endif
