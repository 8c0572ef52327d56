// A long loop for the debugger's pause and interrupt tests: the sum of
// (i xor 3) for i below n, in i64.
func.func @spin(%n: i64) -> i64 {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %three = arith.constant 3 : i64
  %res:2 = scf.while (%i = %zero, %acc = %zero) : (i64, i64) -> (i64, i64) {
    %more = arith.cmpi slt, %i, %n : i64
    scf.condition(%more) %i, %acc : i64, i64
  } do {
  ^bb0(%i: i64, %acc: i64):
    %x = arith.xori %i, %three : i64
    %acc1 = arith.addi %acc, %x : i64
    %i1 = arith.addi %i, %one : i64
    scf.yield %i1, %acc1 : i64, i64
  }
  return %res#1 : i64
}
