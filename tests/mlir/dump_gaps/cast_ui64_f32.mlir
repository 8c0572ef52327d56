// vm.cast.ui64.f32 (ExtF32 0x3D): iree-dump-module 3.13 stops at it with
// "UNIMPLEMENTED; unhandled ext opcode"; irvm dump prints it.
vm.module @cast_ui64_f32 {
  vm.export @f
  vm.func @f(%x: i64) -> f32 {
    %r = vm.cast.ui64.f32 %x : i64 -> f32
    vm.return %r : f32
  }
}
