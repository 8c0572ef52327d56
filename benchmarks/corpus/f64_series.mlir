// f64 arithmetic (kept f64: compiled with --iree-input-demote-f64-to-f32=false):
// a Leibniz series for pi.
func.func @f64_series(%n: i32) -> f64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %four = arith.constant 4.0 : f64
  %r:4 = scf.while (%i = %c0, %acc = %zero, %sign = %one, %d = %one) : (i32, f64, f64, f64) -> (i32, f64, f64, f64) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %i, %acc, %sign, %d : i32, f64, f64, f64
  } do {
  ^bb0(%i: i32, %acc: f64, %sign: f64, %d: f64):
    %t = arith.divf %sign, %d : f64
    %acc1 = arith.addf %acc, %t : f64
    %s1 = arith.negf %sign : f64
    %d1 = arith.addf %d, %two : f64
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %acc1, %s1, %d1 : i32, f64, f64, f64
  }
  %pi = arith.mulf %r#1, %four : f64
  return %pi : f64
}
