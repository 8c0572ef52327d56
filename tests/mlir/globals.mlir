// Module globals of several types, loaded and stored across calls.
util.global private mutable @counter = 0 : i32
util.global private mutable @total = 0 : i64
util.global private mutable @scale = 1.5 : f32
func.func @bump(%by: i32) -> (i32, i64, f32) {
  %c = util.global.load @counter : i32
  %c1 = arith.addi %c, %by : i32
  util.global.store %c1, @counter : i32
  %t = util.global.load @total : i64
  %w = arith.extsi %c1 : i32 to i64
  %t1 = arith.addi %t, %w : i64
  util.global.store %t1, @total : i64
  %s = util.global.load @scale : f32
  %f = arith.sitofp %c1 : i32 to f32
  %r = arith.mulf %s, %f : f32
  return %c1, %t1, %r : i32, i64, f32
}
