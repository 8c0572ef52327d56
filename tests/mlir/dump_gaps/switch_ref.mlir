// vm.switch.ref: iree-dump-module 3.13 misreads its operand list (prints
// `vm.switch.ref %i0[] else ...` and decodes the bytes after it as other
// instructions); irvm dump prints the operands.
vm.module @switch_ref {
  vm.export @f
  vm.func @f(%c: i32, %a: !vm.buffer, %b: !vm.buffer) -> !vm.buffer {
    %r = vm.switch.ref %c[%a, %b] else %a : !vm.buffer
    vm.return %r : !vm.buffer
  }
}
