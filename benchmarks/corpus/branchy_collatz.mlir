// Branchy integer code: Collatz steps for 1..n, an scf.if per step.
func.func @branchy_collatz(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %r:2 = scf.while (%k = %c1, %steps = %c0) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi sle, %k, %n : i32
    scf.condition(%lt) %k, %steps : i32, i32
  } do {
  ^bb0(%k: i32, %steps: i32):
    %s:2 = scf.while (%x = %k, %c = %steps) : (i32, i32) -> (i32, i32) {
      %ne = arith.cmpi ne, %x, %c1 : i32
      scf.condition(%ne) %x, %c : i32, i32
    } do {
    ^bb0(%x: i32, %c: i32):
      %bit = arith.andi %x, %c1 : i32
      %even = arith.cmpi eq, %bit, %c0 : i32
      %next = scf.if %even -> (i32) {
        %h = arith.shrui %x, %c1 : i32
        scf.yield %h : i32
      } else {
        %t = arith.muli %x, %c3 : i32
        %t1 = arith.addi %t, %c1 : i32
        scf.yield %t1 : i32
      }
      %c1n = arith.addi %c, %c1 : i32
      scf.yield %next, %c1n : i32, i32
    }
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %k1, %s#1 : i32, i32
  }
  return %r#1 : i32
}
