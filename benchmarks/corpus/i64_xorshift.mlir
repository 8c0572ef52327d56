// i64 shifts and xors: a xorshift generator folded into a checksum.
func.func @i64_xorshift(%n: i32) -> i64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %seed = arith.constant 88172645463325252 : i64
  %s13 = arith.constant 13 : i64
  %s7 = arith.constant 7 : i64
  %s17 = arith.constant 17 : i64
  %z = arith.constant 0 : i64
  %r:3 = scf.while (%i = %c0, %x = %seed, %acc = %z) : (i32, i64, i64) -> (i32, i64, i64) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i, %x, %acc : i32, i64, i64
  } do {
  ^bb0(%i: i32, %x: i64, %acc: i64):
    %a = arith.shli %x, %s13 : i64
    %x1 = arith.xori %x, %a : i64
    %b = arith.shrui %x1, %s7 : i64
    %x2 = arith.xori %x1, %b : i64
    %c = arith.shli %x2, %s17 : i64
    %x3 = arith.xori %x2, %c : i64
    %acc1 = arith.addi %acc, %x3 : i64
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %x3, %acc1 : i32, i64, i64
  }
  return %r#2 : i64
}
