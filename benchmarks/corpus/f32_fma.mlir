// f32 fused multiply-add in a loop (a damped recurrence).
func.func @f32_fma(%n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k = arith.constant 0.999 : f32
  %b = arith.constant 0.5 : f32
  %x0 = arith.constant 1.0 : f32
  %r:2 = scf.while (%i = %c0, %x = %x0) : (i32, f32) -> (i32, f32) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i, %x : i32, f32
  } do {
  ^bb0(%i: i32, %x: f32):
    %y = math.fma %x, %k, %b : f32
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %y : i32, f32
  }
  return %r#1 : f32
}
