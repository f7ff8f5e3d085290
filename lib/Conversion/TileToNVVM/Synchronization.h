//===- Synchronization.h - Barriers and mbarriers --------------*- C++ -*-===//
#ifndef SPARSE_MLA_LIB_CONVERSION_TILETONVVM_SYNCHRONIZATION_H
#define SPARSE_MLA_LIB_CONVERSION_TILETONVVM_SYNCHRONIZATION_H

#include "mlir/IR/Builders.h"

namespace sparse_mla::tile {

/// Mbarrier `index` of a 1 x N tile at `bars`, as !llvm.ptr<3> (the NVVM
/// mbarrier ops), and as its 32-bit shared address (inline PTX).
mlir::Value mbarrierPointer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bars,
                            mlir::Value index);
mlir::Value mbarrierAddress(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bars,
                            mlir::Value index);

/// Whether `op` is in a kernel launched in clusters (its gpu.func carries
/// nvvm.cluster_dim).
bool inClusterKernel(mlir::Operation *op);

/// Every thread of the cluster's CTAs waits for all the others
/// (barrier.cluster.arrive, release, then wait, acquire).
void clusterBarrier(mlir::OpBuilder &b, mlir::Location loc);

/// `bar.sync 1 + w, 128`: the threads of the calling warpgroup w (barrier 0
/// is the CTA's).
void warpgroupBarrier(mlir::OpBuilder &b, mlir::Location loc);

} // namespace sparse_mla::tile

#endif
