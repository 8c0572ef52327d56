// A count-down loop: test against zero, one carried value besides the counter.
func.func @countdown(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %r:2 = scf.while (%k = %n, %a = %c1) : (i32, i32) -> (i32, i32) {
    %more = arith.cmpi sgt, %k, %c0 : i32
    scf.condition(%more) %k, %a : i32, i32
  } do {
  ^bb0(%k: i32, %a: i32):
    %m = arith.muli %a, %c3 : i32
    %s = arith.addi %m, %k : i32
    %k1 = arith.subi %k, %c1 : i32
    scf.yield %k1, %s : i32, i32
  }
  return %r#1 : i32
}
