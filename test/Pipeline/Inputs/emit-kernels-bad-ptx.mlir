// expected-error@+1 {{ptxas failed}}
module attributes {gpu.container_module} {
  gpu.binary @sparse_mla_kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = ".version 8.3\n.target sm_90a\n.address_size 64\n.entry broken( {\n}\n">]
}
