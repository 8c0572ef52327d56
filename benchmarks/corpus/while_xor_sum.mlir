// scf.while with the test in the "before" region: the loop shape of
// ../shared/examples/loop.mlir (cmp + cond_br, body, br with a remap).
func.func @while_xor_sum(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %a = %c0) : (i32, i32) -> (i32, i32) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i, %a : i32, i32
  } do {
  ^bb0(%i: i32, %a: i32):
    %x = arith.xori %a, %i : i32
    %s = arith.addi %x, %c1 : i32
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1, %s : i32, i32
  }
  return %r#1 : i32
}
