// Integer powers (math.fpowi), which iree-compile 3.13 lowers to
// vm.fpowi.f32 (ExtF32 0x3E) and vm.fpowi.f64 (ExtF64 0x40). The exponent
// comes first so that the signature's registers are the same in irvm's
// disassembly and the reference's (iree-dump-module numbers an i64 after
// an f32 as %i1:2 where the runtime passes it at %i2:3, which irvm prints:
// tests/all/asm.rs, wide_arguments_take_even_slots).
func.func @powi_f32(%n: i64, %a: f32) -> f32 {
  %r = math.fpowi %a, %n : f32, i64
  return %r : f32
}
func.func @powi_f64(%n: i64, %a: f64) -> f64 {
  %r = math.fpowi %a, %n : f64, i64
  return %r : f64
}
