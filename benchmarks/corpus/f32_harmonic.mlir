// int-to-float conversion, f32 divide and add per iteration.
func.func @f32_harmonic(%n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %f0 = arith.constant 0.0 : f32
  %f1 = arith.constant 1.0 : f32
  %r:2 = scf.while (%i = %c0, %acc = %f0) : (i32, f32) -> (i32, f32) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %i, %acc : i32, f32
  } do {
  ^bb0(%i: i32, %acc: f32):
    %i1 = arith.addi %i, %c1 : i32
    %fi = arith.sitofp %i1 : i32 to f32
    %inv = arith.divf %f1, %fi : f32
    %acc1 = arith.addf %acc, %inv : f32
    scf.yield %i1, %acc1 : i32, f32
  }
  return %r#1 : f32
}
