func.func @square(%x: i32) -> i32 attributes {noinline} {
  %y = arith.muli %x, %x : i32
  return %y : i32
}
func.func @sum_squares(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %acc = %c0) : (i32, i32) -> (i32, i32) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i, %acc : i32, i32
  } do {
  ^bb0(%i: i32, %acc: i32):
    %sq = func.call @square(%i) : (i32) -> i32
    %acc1 = arith.addi %acc, %sq : i32
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %acc1 : i32, i32
  }
  return %r#1 : i32
}
