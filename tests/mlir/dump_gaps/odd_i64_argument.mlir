// An i64 argument after one i32: the runtime passes it in %i2:3 (the next
// even slot) and the body reads %i2:3, but iree-dump-module 3.13 prints the
// signature as `(%i0: i32, %i1:2: i64)`, counting slots without aligning;
// irvm dump prints `%i2:3`.
vm.module @odd_i64_argument {
  vm.export @f
  vm.func @f(%x: i32, %l: i64) -> (i64, i32) {
    vm.return %l, %x : i64, i32
  }
}
