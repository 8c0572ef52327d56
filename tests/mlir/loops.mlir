// Loops with several carried values: gcd, collatz steps, a float series.
func.func @gcd(%a: i32, %b: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%x = %a, %y = %b) : (i32, i32) -> (i32, i32) {
    %nz = arith.cmpi ne, %y, %c0 : i32
    scf.condition(%nz) %x, %y : i32, i32
  } do {
  ^bb0(%x: i32, %y: i32):
    %m = arith.remsi %x, %y : i32
    scf.yield %y, %m : i32, i32
  }
  return %r#0 : i32
}
func.func @collatz(%n: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  %r:2 = scf.while (%x = %n, %steps = %c0) : (i64, i32) -> (i64, i32) {
    %more = arith.cmpi ne, %x, %one : i64
    scf.condition(%more) %x, %steps : i64, i32
  } do {
  ^bb0(%x: i64, %steps: i32):
    %rem = arith.remsi %x, %two : i64
    %odd = arith.cmpi ne, %rem, %one : i64
    %half = arith.divsi %x, %two : i64
    %t = arith.muli %x, %three : i64
    %t1 = arith.addi %t, %one : i64
    %next = arith.select %odd, %half, %t1 : i64
    %s1 = arith.addi %steps, %c1 : i32
    scf.yield %next, %s1 : i64, i32
  }
  return %r#1 : i32
}
func.func @harmonic(%n: i32) -> f32 {
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
