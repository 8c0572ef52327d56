// Iterative Fibonacci for the debugger tests (tests/all/dbg.rs, tests/all/dap.rs).

func.func @fib(%n: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %res:3 = scf.while (%k = %zero, %x = %zero, %y = %one) : (i32, i32, i32) -> (i32, i32, i32) {
    %more = arith.cmpi slt, %k, %n : i32
    scf.condition(%more) %k, %x, %y : i32, i32, i32
  } do {
  ^bb0(%k: i32, %x: i32, %y: i32):

    %next = arith.addi %x, %y : i32
    %k1 = arith.addi %k, %one : i32
    scf.yield %k1, %y, %next : i32, i32, i32
  }
  return %res#1 : i32
}
