// RUN: sparse-mla-opt %s --tile-record-manifest | FileCheck %s
// What the runtime needs to launch each kernel, on the module: name,
// threads, shared memory, cluster, the variant's shape parameters, the grid
// and the argument ABI: each argument by the name the kernel gives it (the
// runtime passes them by name), memrefs as descriptors (rank, element type)
// with their extents (stated, static, or "?": any) and whether the caller
// may leave them out, scalars by type. A strided view is a memref like any
// other. Every size is an expression for the runtime to evaluate on the
// arguments: integers, scalars {arg}, tensor sizes {arg, dim} and [op, lhs,
// rhs]. Each grid dimension lists its axes with their extents and its CTAs
// (the axes' product, or its window's count, with the window's name and
// first item); a kernel that declares none has an empty grid.
// CHECK-LABEL: module attributes {sparse_mla.kernels = [
// CHECK-SAME: {args = [{dtype = "bf16", extents = ["?", 64], kind = "memref", name = "q", optional = false, rank = 2 : i64},
// CHECK-SAME:          {dtype = "f32", extents = {{\[\[}}"mul", {arg = "n"}, 3]], kind = "memref", name = "out", optional = true, rank = 1 : i64},
// CHECK-SAME:          {dtype = "i32", kind = "scalar", name = "n"}, {dtype = "index", kind = "scalar", name = "first"}, {dtype = "f32", kind = "scalar", name = "s"}],
// CHECK-SAME:  cluster = 1 : i64,
// CHECK-SAME:  grid = [{axes = [{extent = ["ceildiv", {arg = "q", dim = 0 : i64}, 64], name = "block"}], count = ["ceildiv", {arg = "q", dim = 0 : i64}, 64]},
// CHECK-SAME:          {axes = [{extent = {arg = "n"}, name = "a"}, {extent = ["mod", {arg = "out", dim = 0 : i64}, 7], name = "b"}], count = 5 : i64, window = {from = {arg = "first"}, name = "slot"}}],
// CHECK-SAME:  name = "first_k16", params = {k = 16 : i64}, shared_bytes = 4096 : i64, threads = 256 : i64},
// CHECK-SAME: {args = [], cluster = 2 : i64, grid = [], name = "second", params = {}, shared_bytes = 0 : i64, threads = 128 : i64}]}
tile.kernel @first_k16(%q: memref<?x64xbf16, strided<[?, 1]>>, %out: memref<?xf32> [%n * 3] optional,
                       %n: i32, %first: index, %s: f32)
    warpgroups(2) grid([block : %q[0] ceildiv 64],
                       [a : %n, b : %out[0] mod 7] window(slot : 5 from %first))
    attributes {tile.params = {k = 16 : i64}, tile.shared_bytes = 4096 : i64} {
}
tile.kernel @second() warpgroups(1) cluster(2) {
}
