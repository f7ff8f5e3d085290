// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_postprocess.mlir --sparse-mla-to-ptx="output=%t/post" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/post.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/post.json
// The postprocess converts the fixed-point workspace back (i64 -> f32 times
// the unit) and writes a row that `lost` flags as NaN; ptxas assembles it
// for sm_90a without spills.
// PTX: .entry sparse_mla_postprocess
// PTX-DAG: cvt.rn.f32.s64
// PTX-DAG: selp.f32 {{.*}}, 0f7FC00000, %p
// The manifest states each tensor's extents (lost: a flag per row of
// fixed) and which may be left out.
// JSON:      "name": "ws",
// JSON:      "name": "fixed",
// JSON:      "dtype": "i32",
// JSON-NEXT: "extents": [
// JSON-NEXT:   {
// JSON-NEXT:     "arg": "fixed",
// JSON-NEXT:     "dim": 0
// JSON-NEXT:   }
// JSON-NEXT: ],
// JSON-NEXT: "kind": "memref",
// JSON-NEXT: "name": "lost",
// JSON-NEXT: "optional": true,
// JSON-NEXT: "rank": 1
// JSON:      "name": "dkv",
// JSON:      "spill_stores": 0
