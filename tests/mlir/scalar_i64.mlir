// i64 arithmetic and conversions to and from i32.
func.func @arith(%a: i64, %b: i64) -> (i64, i64, i64, i64) {
  %add = arith.addi %a, %b : i64
  %mul = arith.muli %a, %b : i64
  %div = arith.divsi %a, %b : i64
  %shl = arith.shli %a, %b : i64
  return %add, %mul, %div, %shl : i64, i64, i64, i64
}
func.func @widen(%a: i32) -> (i64, i64) {
  %s = arith.extsi %a : i32 to i64
  %u = arith.extui %a : i32 to i64
  return %s, %u : i64, i64
}
func.func @narrow(%a: i64) -> i32 {
  %t = arith.trunci %a : i64 to i32
  return %t : i32
}
