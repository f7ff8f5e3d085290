// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_preprocess.mlir --sparse-mla-to-ptx="output=%t/pre" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/pre.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/pre.json
// The preprocess kernel reaches PTX with 16-byte loads and a shuffle
// reduction, and ptxas assembles it for sm_90a without spills.
// PTX: .target sm_90a
// PTX: .entry sparse_mla_preprocess
// PTX-DAG: ld.global.v4.b32
// PTX-DAG: shfl.sync.bfly.b32
// JSON: "name": "sparse_mla_preprocess"
// JSON: "spill_stores": 0
// JSON: "threads": 128
