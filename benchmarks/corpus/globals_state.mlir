// Module state in globals: each iteration loads and stores two globals
// (they start at zero). iree-compile hoists the final load of @total above
// the loop, so the result is 0 from both runners; the loop still loads and
// stores both globals every iteration.
util.global private mutable @count = 0 : i32
util.global private mutable @total = 0 : i64
func.func @globals_state(%n: i32) -> i64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> (i32) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %i : i32
  } do {
  ^bb0(%i: i32):
    %c = util.global.load @count : i32
    %c1n = arith.addi %c, %c1 : i32
    util.global.store %c1n, @count : i32
    %t = util.global.load @total : i64
    %w = arith.extsi %c1n : i32 to i64
    %t1 = arith.addi %t, %w : i64
    util.global.store %t1, @total : i64
    %i1 = arith.addi %i, %c1 : i32
    scf.yield %i1 : i32
  }
  %out = util.global.load @total : i64
  return %out : i64
}
