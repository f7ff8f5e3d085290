// RUN: rm -rf %t && mkdir -p %t
// RUN: sparse-mla-opt %s -split-input-file -verify-diagnostics \
// RUN:   --sparse-mla-emit-kernels="output=%t/missing/k" -o /dev/null
// RUN: not sparse-mla-opt %S/Inputs/emit-kernels-no-output.mlir --sparse-mla-emit-kernels \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIAG
// RUN: sparse-mla-opt %S/Inputs/emit-kernels-no-output.mlir -verify-diagnostics \
// RUN:   --sparse-mla-emit-kernels -o /dev/null
// RUN: %if ptxas %{ sparse-mla-opt %S/Inputs/emit-kernels-bad-ptx.mlir -verify-diagnostics \
// RUN:   --sparse-mla-emit-kernels="output=%t/bad" -o /dev/null %}
// sparse-mla-emit-kernels fails with one diagnostic at the module's
// location (not a dump of the module) when there is nothing to emit, when a
// file cannot be written (here: a missing directory), when no output prefix
// is given, and when ptxas rejects the PTX.
// DIAG: emit-kernels-no-output.mlir:2:1: error: sparse-mla-emit-kernels needs output=<prefix>
// DIAG-NOT: see current operation

// expected-error@+1 {{no gpu.binary with PTX to emit}}
module {
}

// -----

// expected-error@+1 {{cannot write}}
module attributes {gpu.container_module} {
  gpu.binary @sparse_mla_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = ".version 8.3\n.target sm_90a\n.address_size 64\n">]
}
