// Input of invalid.mlir's second RUN: a parse error in a later region of
// tile.warp_specialize, after one whose ops use values not yet defined (a
// fuzzer's find, minimized: the generated parser of variadic regions freed
// the first region while the parser still held its forward references).
tile.slice%g[%stage,%c]:!tile.smem<2x6xf16>to!tile.smem<4x4xf16>tile.warp_specialize registers([]){scf.for%b=%0to%s step%c{%stage=arith.remui%b,%c:index%d=arith.divui%b,%c:index%p=arith.andi%2,%e:i32 arith.ori%y,%e:i32
arith.muli%b,%4:index%cd=tile.gather_rows%r[%rs,%0]into%f{}:memref<?x4xf16>,!tile.reg<4xi2>,!tile.smem<4x4xf16>}},{arith.remui%b,%c:index%d%b, %c: index
