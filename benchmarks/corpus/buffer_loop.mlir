// A util.buffer written and summed in loops (vm.buffer.store/load.i32).
func.func @buffer_loop(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0 : i32
  %len = arith.constant 1024 : index
  %bytes = arith.constant 4096 : index
  %rounds = arith.index_cast %n : i32 to index
  %buf = util.buffer.alloc uninitialized : !util.buffer{%bytes}
  scf.for %i = %c0 to %len step %c1 {
    %v = arith.index_cast %i : index to i32
    %off = arith.muli %i, %c4 : index
    util.buffer.store %v, %buf[%off for %c4] : i32 -> !util.buffer{%bytes}
  }
  %r = scf.for %k = %c0 to %rounds step %c1 iter_args(%acc = %z) -> (i32) {
    %s = scf.for %i = %c0 to %len step %c1 iter_args(%a = %acc) -> (i32) {
      %off = arith.muli %i, %c4 : index
      %v = util.buffer.load %buf[%off for %c4] : !util.buffer{%bytes} -> i32
      %a1 = arith.addi %a, %v : i32
      scf.yield %a1 : i32
    }
    scf.yield %s : i32
  }
  return %r : i32
}
