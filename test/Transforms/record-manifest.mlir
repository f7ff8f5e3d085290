// RUN: sparse-mla-opt %s --tile-record-manifest | FileCheck %s
// What the runtime needs to launch each kernel, on the module: name,
// threads, shared memory, cluster, the variant's shape parameters, the grid
// and the argument ABI: each argument by the name the kernel gives it (the
// runtime passes them by name), memrefs as descriptors (rank, element type,
// static shape), scalars by type. A strided view is a memref like any
// other. The grid is one expression per axis for the runtime to evaluate on
// the arguments: integers, scalars {arg}, tensor sizes {arg, dim} and
// [op, lhs, rhs]; a kernel that declares none has an empty one.
// CHECK-LABEL: module attributes {sparse_mla.kernels = [
// CHECK-SAME: {args = [{dtype = "bf16", kind = "memref", name = "q", rank = 2 : i64, shape = array<i64: -9223372036854775808, 64>},
// CHECK-SAME:          {dtype = "f32", kind = "memref", name = "out", rank = 1 : i64, shape = array<i64: -9223372036854775808>},
// CHECK-SAME:          {dtype = "i32", kind = "scalar", name = "n"}, {dtype = "f32", kind = "scalar", name = "s"}],
// CHECK-SAME:  cluster = 1 : i64,
// CHECK-SAME:  grid = {{\[\[}}"ceildiv", {arg = "q", dim = 0 : i64}, 64], ["add", ["mul", {arg = "n"}, 3], ["mod", {arg = "out", dim = 0 : i64}, 7]]],
// CHECK-SAME:  name = "first_k16", params = {k = 16 : i64}, shared_bytes = 4096 : i64, threads = 256 : i64},
// CHECK-SAME: {args = [], cluster = 2 : i64, grid = [], name = "second", params = {}, shared_bytes = 0 : i64, threads = 128 : i64}]}
tile.kernel @first_k16(%q: memref<?x64xbf16, strided<[?, 1]>>, %out: memref<?xf32>, %n: i32, %s: f32)
    warpgroups(2) grid(affine_map<()[rows, n, size] -> (rows ceildiv 64, n * 3 + size mod 7)>, %q[0], %n, %out[0])
    attributes {tile.params = {k = 16 : i64}, tile.shared_bytes = 4096 : i64} {
}
tile.kernel @second() warpgroups(1) cluster(2) {
}
