// Every scalar VM instruction iree-compile 3.13 emits from VM dialect
// input and iree-dump-module 3.13 disassembles: float and integer
// arithmetic, compares, casts, selects, switches, constants, one group
// per function (chained so that no result folds away). dump.rs compares
// iree-dump-module's disassembly of it with irvm dump's, and checks that
// tests/mlir covers the instruction table. vm.cast.ui64.f32 is in
// dump_gaps/ (iree-dump-module cannot disassemble it). The f64 <-> 32-bit
// integer casts of the bytecode are missing: the VM dialect of 3.13 has no
// such ops ("custom op 'vm.cast.f64.si32' is unknown"). i64 and f64
// arguments come first or at even i32 slots (dump_gaps/odd_i64_argument.mlir).
vm.module @isa_scalar {
  vm.export @float_math_f32
  vm.func @float_math_f32(%x: f32, %y: f32) -> (f32) {
    %u0 = vm.abs.f32 %x : f32
    %u1 = vm.neg.f32 %u0 : f32
    %u2 = vm.ceil.f32 %u1 : f32
    %u3 = vm.floor.f32 %u2 : f32
    %u4 = vm.round.f32 %u3 : f32
    %u5 = vm.atan.f32 %u4 : f32
    %u6 = vm.cos.f32 %u5 : f32
    %u7 = vm.sin.f32 %u6 : f32
    %u8 = vm.exp.f32 %u7 : f32
    %u9 = vm.exp2.f32 %u8 : f32
    %u10 = vm.expm1.f32 %u9 : f32
    %u11 = vm.log.f32 %u10 : f32
    %u12 = vm.log10.f32 %u11 : f32
    %u13 = vm.log1p.f32 %u12 : f32
    %u14 = vm.log2.f32 %u13 : f32
    %u15 = vm.rsqrt.f32 %u14 : f32
    %u16 = vm.sqrt.f32 %u15 : f32
    %u17 = vm.tanh.f32 %u16 : f32
    %u18 = vm.erf.f32 %u17 : f32
    %re = vm.round.f32.even %u18 : f32
    %b0 = vm.add.f32 %re, %y : f32
    %b1 = vm.mul.f32 %b0, %y : f32
    %b2 = vm.sub.f32 %b1, %y : f32
    %b3 = vm.div.f32 %b2, %y : f32
    %b4 = vm.rem.f32 %b3, %y : f32
    %b5 = vm.min.f32 %b4, %y : f32
    %b6 = vm.max.f32 %b5, %y : f32
    %b7 = vm.pow.f32 %b6, %y : f32
    %b8 = vm.atan2.f32 %b7, %y : f32
    %fm = vm.fma.f32 %b8, %y, %x : f32
    vm.return %fm : f32
  }
  vm.export @float_compare_f32
  vm.func @float_compare_f32(%x: f32, %y: f32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32) {
    %eqo = vm.cmp.eq.f32.o %x, %y : f32
    %equ = vm.cmp.eq.f32.u %x, %y : f32
    %neo = vm.cmp.ne.f32.o %x, %y : f32
    %neu = vm.cmp.ne.f32.u %x, %y : f32
    %lto = vm.cmp.lt.f32.o %x, %y : f32
    %ltu = vm.cmp.lt.f32.u %x, %y : f32
    %lteo = vm.cmp.lte.f32.o %x, %y : f32
    %lteu = vm.cmp.lte.f32.u %x, %y : f32
    %nan = vm.cmp.nan.f32 %x : f32
    vm.return %eqo, %equ, %neo, %neu, %lto, %ltu, %lteo, %lteu, %nan : i32, i32, i32, i32, i32, i32, i32, i32, i32
  }
  vm.export @float_math_f64
  vm.func @float_math_f64(%x: f64, %y: f64) -> (f64) {
    %u0 = vm.abs.f64 %x : f64
    %u1 = vm.neg.f64 %u0 : f64
    %u2 = vm.ceil.f64 %u1 : f64
    %u3 = vm.floor.f64 %u2 : f64
    %u4 = vm.round.f64 %u3 : f64
    %u5 = vm.atan.f64 %u4 : f64
    %u6 = vm.cos.f64 %u5 : f64
    %u7 = vm.sin.f64 %u6 : f64
    %u8 = vm.exp.f64 %u7 : f64
    %u9 = vm.exp2.f64 %u8 : f64
    %u10 = vm.expm1.f64 %u9 : f64
    %u11 = vm.log.f64 %u10 : f64
    %u12 = vm.log10.f64 %u11 : f64
    %u13 = vm.log1p.f64 %u12 : f64
    %u14 = vm.log2.f64 %u13 : f64
    %u15 = vm.rsqrt.f64 %u14 : f64
    %u16 = vm.sqrt.f64 %u15 : f64
    %u17 = vm.tanh.f64 %u16 : f64
    %u18 = vm.erf.f64 %u17 : f64
    %re = vm.round.f64.even %u18 : f64
    %b0 = vm.add.f64 %re, %y : f64
    %b1 = vm.mul.f64 %b0, %y : f64
    %b2 = vm.sub.f64 %b1, %y : f64
    %b3 = vm.div.f64 %b2, %y : f64
    %b4 = vm.rem.f64 %b3, %y : f64
    %b5 = vm.min.f64 %b4, %y : f64
    %b6 = vm.max.f64 %b5, %y : f64
    %b7 = vm.pow.f64 %b6, %y : f64
    %b8 = vm.atan2.f64 %b7, %y : f64
    %fm = vm.fma.f64 %b8, %y, %x : f64
    vm.return %fm : f64
  }
  vm.export @float_compare_f64
  vm.func @float_compare_f64(%x: f64, %y: f64) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32) {
    %eqo = vm.cmp.eq.f64.o %x, %y : f64
    %equ = vm.cmp.eq.f64.u %x, %y : f64
    %neo = vm.cmp.ne.f64.o %x, %y : f64
    %neu = vm.cmp.ne.f64.u %x, %y : f64
    %lto = vm.cmp.lt.f64.o %x, %y : f64
    %ltu = vm.cmp.lt.f64.u %x, %y : f64
    %lteo = vm.cmp.lte.f64.o %x, %y : f64
    %lteu = vm.cmp.lte.f64.u %x, %y : f64
    %nan = vm.cmp.nan.f64 %x : f64
    vm.return %eqo, %equ, %neo, %neu, %lto, %ltu, %lteo, %lteu, %nan : i32, i32, i32, i32, i32, i32, i32, i32, i32
  }
  vm.export @casts_f32
  vm.func @casts_f32(%x: f32, %i: i32, %l: i64) -> (i32, i64, i32, i64, f32, f32, f32, i32, f32, f64) {
    %a = vm.cast.f32.si32 %x : f32 -> i32
    %b = vm.cast.f32.si64 %x : f32 -> i64
    %c = vm.cast.f32.ui32 %x : f32 -> i32
    %d = vm.cast.f32.ui64 %x : f32 -> i64
    %e = vm.cast.si32.f32 %i : i32 -> f32
    %f = vm.cast.ui32.f32 %i : i32 -> f32
    %g = vm.cast.si64.f32 %l : i64 -> f32
    %bi = vm.bitcast.f32.i32 %x : f32 -> i32
    %bf = vm.bitcast.i32.f32 %i : i32 -> f32
    %ext = vm.ext.f32.f64 %x : f32 -> f64
    vm.return %a, %b, %c, %d, %e, %f, %g, %bi, %bf, %ext : i32, i64, i32, i64, f32, f32, f32, i32, f32, f64
  }
  vm.export @casts_f64
  vm.func @casts_f64(%x: f64, %l: i64) -> (i64, i64, f64, f64, i64, f64, f32) {
    %b = vm.cast.f64.si64 %x : f64 -> i64
    %d = vm.cast.f64.ui64 %x : f64 -> i64
    %g = vm.cast.si64.f64 %l : i64 -> f64
    %h = vm.cast.ui64.f64 %l : i64 -> f64
    %bi = vm.bitcast.f64.i64 %x : f64 -> i64
    %bf = vm.bitcast.i64.f64 %l : i64 -> f64
    %tr = vm.trunc.f64.f32 %x : f64 -> f32
    vm.return %b, %d, %g, %h, %bi, %bf, %tr : i64, i64, f64, f64, i64, f64, f32
  }
  vm.export @int_math_i32
  vm.func @int_math_i32(%x: i32, %y: i32, %n: i32) -> (i32) {
    %b0 = vm.sub.i32 %x, %y : i32
    %b1 = vm.mul.i32 %b0, %y : i32
    %b2 = vm.add.i32 %b1, %y : i32
    %b3 = vm.div.i32.s %b2, %y : i32
    %b4 = vm.div.i32.u %b3, %y : i32
    %b5 = vm.rem.i32.s %b4, %y : i32
    %b6 = vm.rem.i32.u %b5, %y : i32
    %b7 = vm.and.i32 %b6, %y : i32
    %b8 = vm.or.i32 %b7, %y : i32
    %b9 = vm.xor.i32 %b8, %y : i32
    %b10 = vm.min.i32.s %b9, %y : i32
    %b11 = vm.min.i32.u %b10, %y : i32
    %b12 = vm.max.i32.s %b11, %y : i32
    %b13 = vm.max.i32.u %b12, %y : i32
    %u0 = vm.abs.i32 %b13 : i32
    %u1 = vm.not.i32 %u0 : i32
    %u2 = vm.ctlz.i32 %u1 : i32
    %s0 = vm.shl.i32 %u2, %n : i32
    %s1 = vm.shr.i32.s %s0, %n : i32
    %s2 = vm.shr.i32.u %s1, %n : i32
    %fm = vm.fma.i32 %s2, %y, %x : i32
    vm.return %fm : i32
  }
  vm.export @int_compare_i32
  vm.func @int_compare_i32(%x: i32, %y: i32) -> (i32, i32, i32, i32, i32) {
    %eq = vm.cmp.eq.i32 %x, %y : i32
    %ne = vm.cmp.ne.i32 %x, %y : i32
    %lt_i32_s = vm.cmp.lt.i32.s %x, %y : i32
    %lt_i32_u = vm.cmp.lt.i32.u %x, %y : i32
    %nz = vm.cmp.nz.i32 %x : i32
    vm.return %eq, %ne, %lt_i32_s, %lt_i32_u, %nz : i32, i32, i32, i32, i32
  }
  vm.export @int_math_i64
  vm.func @int_math_i64(%x: i64, %y: i64, %n: i32) -> (i64) {
    %b0 = vm.sub.i64 %x, %y : i64
    %b1 = vm.mul.i64 %b0, %y : i64
    %b2 = vm.add.i64 %b1, %y : i64
    %b3 = vm.div.i64.s %b2, %y : i64
    %b4 = vm.div.i64.u %b3, %y : i64
    %b5 = vm.rem.i64.s %b4, %y : i64
    %b6 = vm.rem.i64.u %b5, %y : i64
    %b7 = vm.and.i64 %b6, %y : i64
    %b8 = vm.or.i64 %b7, %y : i64
    %b9 = vm.xor.i64 %b8, %y : i64
    %b10 = vm.min.i64.s %b9, %y : i64
    %b11 = vm.min.i64.u %b10, %y : i64
    %b12 = vm.max.i64.s %b11, %y : i64
    %b13 = vm.max.i64.u %b12, %y : i64
    %u0 = vm.abs.i64 %b13 : i64
    %u1 = vm.not.i64 %u0 : i64
    %u2 = vm.ctlz.i64 %u1 : i64
    %s0 = vm.shl.i64 %u2, %n : i64
    %s1 = vm.shr.i64.s %s0, %n : i64
    %s2 = vm.shr.i64.u %s1, %n : i64
    %fm = vm.fma.i64 %s2, %y, %x : i64
    vm.return %fm : i64
  }
  vm.export @int_compare_i64
  vm.func @int_compare_i64(%x: i64, %y: i64) -> (i32, i32, i32, i32, i32) {
    %eq = vm.cmp.eq.i64 %x, %y : i64
    %ne = vm.cmp.ne.i64 %x, %y : i64
    %lt_i64_s = vm.cmp.lt.i64.s %x, %y : i64
    %lt_i64_u = vm.cmp.lt.i64.u %x, %y : i64
    %nz = vm.cmp.nz.i64 %x : i64
    vm.return %eq, %ne, %lt_i64_s, %lt_i64_u, %nz : i32, i32, i32, i32, i32
  }
  vm.export @int_widths
  vm.func @int_widths(%l: i64, %x: i32) -> (i32, i32, i32, i32, i32, i32, i64, i64, i32) {
    %a = vm.ext.i8.i32.s %x : i32 -> i32
    %b = vm.ext.i8.i32.u %x : i32 -> i32
    %c = vm.ext.i16.i32.s %x : i32 -> i32
    %d = vm.ext.i16.i32.u %x : i32 -> i32
    %e = vm.trunc.i32.i8 %x : i32 -> i32
    %f = vm.trunc.i32.i16 %x : i32 -> i32
    %g = vm.ext.i32.i64.s %x : i32 -> i64
    %h = vm.ext.i32.i64.u %x : i32 -> i64
    %k = vm.trunc.i64.i32 %l : i64 -> i32
    vm.return %a, %b, %c, %d, %e, %f, %g, %h, %k : i32, i32, i32, i32, i32, i32, i64, i64, i32
  }
  vm.export @select_switch_i32
  vm.func @select_switch_i32(%x: i32, %y: i32, %c: i32) -> (i32, i32) {
    %s = vm.select.i32 %c, %x, %y : i32
    %w = vm.switch.i32 %c[%x, %y] else %s : i32
    vm.return %s, %w : i32, i32
  }
  vm.export @select_switch_i64
  vm.func @select_switch_i64(%x: i64, %y: i64, %c: i32) -> (i64, i64) {
    %s = vm.select.i64 %c, %x, %y : i64
    %w = vm.switch.i64 %c[%x, %y] else %s : i64
    vm.return %s, %w : i64, i64
  }
  vm.export @select_switch_f32
  vm.func @select_switch_f32(%x: f32, %y: f32, %c: i32) -> (f32, f32) {
    %s = vm.select.f32 %c, %x, %y : f32
    %w = vm.switch.f32 %c[%x, %y] else %s : f32
    vm.return %s, %w : f32, f32
  }
  vm.export @select_switch_f64
  vm.func @select_switch_f64(%x: f64, %y: f64, %c: i32) -> (f64, f64) {
    %s = vm.select.f64 %c, %x, %y : f64
    %w = vm.switch.f64 %c[%x, %y] else %s : f64
    vm.return %s, %w : f64, f64
  }
  vm.export @constants
  vm.func @constants() -> (i32, i32, i64, i64, f32, f32, f64, f64) {
    %a = vm.const.i32 7
    %b = vm.const.i32.zero
    %c = vm.const.i64 -9
    %d = vm.const.i64.zero
    %e = vm.const.f32 1.5
    %f = vm.const.f32.zero
    %g = vm.const.f64 -2.25
    %h = vm.const.f64.zero
    vm.return %a, %b, %c, %d, %e, %f, %g, %h : i32, i32, i64, i64, f32, f32, f64, f64
  }
}
