// RUN: sparse-mla-opt %s -split-input-file -verify-diagnostics
// Each rule of the smla ops' verifiers.
func.func @key_clock_outside_a_loop(%c: memref<?x?xi32>, %k: memref<?x?xi32>, %i: index, %s: i32) {
  // expected-error @+1 {{must be in the body of an scf.for from 0 over the blocks of keys}}
  smla.key_clock %c, %k[%i] range %i round %i window %s : memref<?x?xi32>, memref<?x?xi32>
  return
}


// -----

func.func @key_clock_from_one(%c: memref<?x?xi32>, %k: memref<?x?xi32>, %i: index, %s: i32) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %j = %c1 to %i step %c64 {
    // expected-error @+1 {{must be in the body of an scf.for from 0 over the blocks of keys}}
    smla.key_clock %c, %k[%i] range %i round %i window %s : memref<?x?xi32>, memref<?x?xi32>
  }
  return
}


// -----

func.func @key_clock_of_wide_keys(%c: memref<?x?xi32>, %k: memref<?x?xi64>, %i: index, %s: i32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  scf.for %j = %c0 to %i step %c64 {
    // expected-error @+1 {{reads its keys from a 2-D memref of i32, got 'memref<?x?xi64>'}}
    smla.key_clock %c, %k[%i] range %i round %i window %s : memref<?x?xi32>, memref<?x?xi64>
  }
  return
}


// -----

func.func @key_clock_of_float_counters(%c: memref<?x?xf32>, %k: memref<?x?xi32>, %i: index,
                                       %s: i32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  scf.for %j = %c0 to %i step %c64 {
    // expected-error @+1 {{counts in a 2-D global memref of i32}}
    smla.key_clock %c, %k[%i] range %i round %i window %s : memref<?x?xf32>, memref<?x?xi32>
  }
  return
}

// -----

func.func @columns_of_floats(%i: index) {
  // expected-error @+1 {{result #0 must be 1-D register tile of i32}}
  %r, %t = smla.columns from %i tokens %i count %i heads %i count %i per_token %i row_heads %i
      : !tile.reg<16xf32>
  return
}

// -----

func.func @key_rows_of_a_matrix(%k: !tile.reg<64x2xi32>, %n: i32) {
  // expected-error @+1 {{operand #0 must be 1-D register tile of i32}}
  %r = smla.key_rows %k below %n first %n groups %n of %n : !tile.reg<64x2xi32>
  return
}

// -----

func.func @slot_counts_of_wide_integers(%c: memref<?x?xi64>, %i: index) {
  // expected-error @+1 {{operand #0 must be 2D memref of 32-bit signless integer values}}
  %n = smla.slot_count %c[%i, %i] width %i : memref<?x?xi64>
  return
}
