// Integer remainder in a data-dependent inner loop: sum of gcd(k, 1001) for k in 1..n.
func.func @gcd_sum(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m = arith.constant 1001 : i32
  %r:2 = scf.while (%k = %c1, %acc = %c0) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi sle, %k, %n : i32
    scf.condition(%lt) %k, %acc : i32, i32
  } do {
  ^bb0(%k: i32, %acc: i32):
    %g:2 = scf.while (%x = %k, %y = %m) : (i32, i32) -> (i32, i32) {
      %nz = arith.cmpi ne, %y, %c0 : i32
      scf.condition(%nz) %x, %y : i32, i32
    } do {
    ^bb0(%x: i32, %y: i32):
      %rem = arith.remsi %x, %y : i32
      scf.yield %y, %rem : i32, i32
    }
    %acc1 = arith.addi %acc, %g#0 : i32
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %k1, %acc1 : i32, i32
  }
  return %r#1 : i32
}
