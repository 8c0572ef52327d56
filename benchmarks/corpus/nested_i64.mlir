// Nested scf.for loops accumulating in i64.
func.func @nested_i64(%n: i32) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %z = arith.constant 0 : i64
  %ub = arith.index_cast %n : i32 to index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z) -> (i64) {
    %ii = arith.index_cast %i : index to i64
    %inner = scf.for %j = %c0 to %c1000 step %c1 iter_args(%b = %acc) -> (i64) {
      %jj = arith.index_cast %j : index to i64
      %p = arith.muli %ii, %jj : i64
      %q = arith.addi %b, %p : i64
      scf.yield %q : i64
    }
    scf.yield %inner : i64
  }
  return %r : i64
}
