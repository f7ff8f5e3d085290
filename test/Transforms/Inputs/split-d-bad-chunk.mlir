// Input of split-d.mlir's fourth RUN: a chunk that is not a multiple of 8 columns
// (a command-line option) fails the pass with a diagnostic.
// expected-error @+1 {{tile-split-d: chunk (12) must be a positive multiple of 8}}
tile.kernel @bad_chunk() warpgroups(1) {
}
