// A VM module over !vm.buffer (python/tests/test_compat.py, vm_buffers):
// the length of a buffer given, a new buffer filled with 7s, and a buffer
// given back with its first byte incremented. Compiled by iree-compile 3.13:
// iree-compile --compile-from=vm vm_buffer.mlir -o vm_buffer.vmfb
vm.module @bufs {
  vm.export @length
  vm.func @length(%b: !vm.buffer) -> i64 {
    %n = vm.buffer.length %b : !vm.buffer -> i64
    vm.return %n : i64
  }
  vm.export @make
  vm.func @make(%n: i64) -> !vm.buffer {
    %c16 = vm.const.i32 16
    %b = vm.buffer.alloc %n, %c16 : !vm.buffer
    %c0 = vm.const.i64 0
    %v = vm.const.i32 7
    vm.buffer.fill.i8 %b, %c0, %n, %v : i32 -> !vm.buffer
    vm.return %b : !vm.buffer
  }
  vm.export @bump
  vm.func @bump(%b: !vm.buffer) -> !vm.buffer {
    %c0 = vm.const.i64 0
    %v = vm.buffer.load.i8.u %b[%c0] : !vm.buffer -> i32
    %c1 = vm.const.i32 1
    %w = vm.add.i32 %v, %c1 : i32
    vm.buffer.store.i8 %w, %b[%c0] : i32 -> !vm.buffer
    vm.return %b : !vm.buffer
  }
}
