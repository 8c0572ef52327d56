func.func @quot(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  return %q : i32
}
func.func @main(%a: i32, %b: i32) -> i32 {
  %one = arith.constant 1 : i32
  %s = arith.addi %a, %one : i32
  %q = call @quot(%s, %b) : (i32, i32) -> i32
  return %q : i32
}
