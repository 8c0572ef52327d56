// scf.for over index with an i32 accumulator (index lowers to i32 or i64).
func.func @for_index_sum(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %ub = arith.index_cast %n : i32 to index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z) -> (i32) {
    %ii = arith.index_cast %i : index to i32
    %m = arith.muli %ii, %ii : i32
    %a = arith.addi %acc, %m : i32
    scf.yield %a : i32
  }
  return %r : i32
}
