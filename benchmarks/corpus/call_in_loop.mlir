// A call to an internal function in every iteration (kept out of line by
// the util dialect's never-inline policy).
util.func private @mix(%a: i32, %b: i32) -> i32 attributes {inlining_policy = #util.inline.never} {
  %x = arith.xori %a, %b : i32
  %c7 = arith.constant 7 : i32
  %y = arith.muli %x, %c7 : i32
  util.return %y : i32
}
func.func @call_in_loop(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %a = %c0) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %i, %a : i32, i32
  } do {
  ^bb0(%i: i32, %a: i32):
    %m = util.call @mix(%a, %i) : (i32, i32) -> i32
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %m : i32, i32
  }
  return %r#1 : i32
}
