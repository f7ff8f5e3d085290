//===- Passes.td - The end of the pipeline -----------------*- tablegen -*-===//
#ifndef SPARSE_MLA_PIPELINE_PASSES
#define SPARSE_MLA_PIPELINE_PASSES

include "mlir/Pass/PassBase.td"

def EmitKernelsPass : Pass<"sparse-mla-emit-kernels", "::mlir::ModuleOp"> {
  let summary = "Writes the PTX, cubin and manifest of the compiled kernels";
  let description = [{
    Writes the PTX of the `gpu.binary` @sparse_mla_kernels to
    `<output>.ptx`, assembles it with `ptxas` (from PATH, `$CUDA_HOME/bin`
    or `/usr/local/cuda/bin`) into `<output>.cubin` when ptxas is found,
    and writes `<output>.json`: for each kernel its name, threads, dynamic
    shared memory, argument ABI and the registers and spills ptxas reports.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Path prefix of the files to write">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "GPU architecture for ptxas">
  ];
}

#endif
