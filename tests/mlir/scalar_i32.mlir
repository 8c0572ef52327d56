// i32 arithmetic, bitwise ops, comparisons and selects.
func.func @arith(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32) {
  %add = arith.addi %a, %b : i32
  %sub = arith.subi %a, %b : i32
  %mul = arith.muli %a, %b : i32
  %div = arith.divsi %a, %b : i32
  %rem = arith.remsi %a, %b : i32
  return %add, %sub, %mul, %div, %rem : i32, i32, i32, i32, i32
}
func.func @unsigned(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
  %div = arith.divui %a, %b : i32
  %rem = arith.remui %a, %b : i32
  %min = arith.minui %a, %b : i32
  %max = arith.maxsi %a, %b : i32
  return %div, %rem, %min, %max : i32, i32, i32, i32
}
func.func @bits(%a: i32, %s: i32) -> (i32, i32, i32, i32, i32, i32) {
  %shl = arith.shli %a, %s : i32
  %shrs = arith.shrsi %a, %s : i32
  %shru = arith.shrui %a, %s : i32
  %and = arith.andi %a, %s : i32
  %or = arith.ori %a, %s : i32
  %xor = arith.xori %a, %s : i32
  return %shl, %shrs, %shru, %and, %or, %xor : i32, i32, i32, i32, i32, i32
}
func.func @compare(%a: i32, %b: i32) -> (i32, i1, i1) {
  %lt = arith.cmpi slt, %a, %b : i32
  %ult = arith.cmpi ult, %a, %b : i32
  %sel = arith.select %lt, %a, %b : i32
  return %sel, %lt, %ult : i32, i1, i1
}
