// expected-error@+1 {{sparse-mla-emit-kernels needs output=<prefix>}}
module {
}
