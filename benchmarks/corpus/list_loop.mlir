// A util.list filled and then summed in loops (vm.list.set/get.i32).
func.func @list_loop(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %len = arith.constant 1024 : index
  %rounds = arith.index_cast %n : i32 to index
  %list = util.list.create %len : !util.list<i32>
  util.list.resize %list, %len : !util.list<i32>
  scf.for %i = %c0 to %len step %c1 {
    %v = arith.index_cast %i : index to i32
    util.list.set %list[%i], %v : !util.list<i32>
  }
  %r = scf.for %k = %c0 to %rounds step %c1 iter_args(%acc = %z) -> (i32) {
    %s = scf.for %i = %c0 to %len step %c1 iter_args(%a = %acc) -> (i32) {
      %v = util.list.get %list[%i] : !util.list<i32>
      %a1 = arith.addi %a, %v : i32
      scf.yield %a1 : i32
    }
    scf.yield %s : i32
  }
  return %r : i32
}
