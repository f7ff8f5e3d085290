// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %kernels/sparse_mla_union.mlir --sparse-mla-to-ptx="output=%t/union" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/union.ptx
// RUN: FileCheck %s --check-prefix=NOV4 < %t/union.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/union.json
// The union builder of token tiles becomes one kernel per (bitmap words,
// entries) variant. Each marks keys and picks entries with shared-memory
// atomics, ranks them by popcounts and a scan (shuffles up the lanes of a
// warp, the warps' totals through shared scratch), places repeats by an
// atomic max that elects each key's first slot of a row and a scan, not an
// atomic counter (the same place on every run), reads index rows 4 bytes
// at a time (rows of topk need not be aligned), and assembles without
// spills.
// PTX-LABEL: .entry sparse_mla_union_cap8192_nb1024
// PTX-DAG: ld.global.b32
// PTX-DAG: atom.shared.or.b32
// PTX-DAG: atom.global.max.s32
// PTX-DAG: popc.b32
// PTX-DAG: shfl.sync.up.b32
// PTX-DAG: bar.sync
// PTX-LABEL: .entry sparse_mla_union_cap16384_nb1024
// PTX-LABEL: .entry sparse_mla_union_cap8192_nb8192
// PTX-LABEL: .entry sparse_mla_union_cap16384_nb8192
// NOV4-NOT: ld.global.v4
// NOV4-NOT: atom.shared.add
// JSON:      "name": "sparse_mla_union_cap8192_nb1024",
// JSON-NEXT: "params": {
// JSON-NEXT:   "cap": 8192,
// JSON-NEXT:   "nb": 1024
// JSON:      "spill_stores": 0,
// JSON-NEXT: "stack_bytes": 0,
// JSON-NEXT: "threads": 128
// JSON:      "name": "sparse_mla_union_cap16384_nb1024",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_union_cap8192_nb8192",
// JSON:      "spill_stores": 0,
// JSON:      "name": "sparse_mla_union_cap16384_nb8192",
// JSON:      "spill_stores": 0,
