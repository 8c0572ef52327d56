// Calls (imports, variadic, yieldable, an internal function kept out of
// line), vm.import.resolved, indirect globals, ref constants, vm.yield and
// vm.break, as iree-compile 3.13 emits them from VM dialect input. The
// module imports `other`, so it is disassembled, never run. Not here:
// vm.cond_break (iree-compile 3.13 writes an encoding both the reference's
// verifier and irvm reject), and vm.global.load.indirect.f32, which it
// writes with vm.global.load.indirect.f64's opcode (both disassemblers
// print the f64 form; see the `NOT_EMITTED` list in tests/all/dump.rs).
vm.module @isa_calls {
  vm.import private @other.f(%x : i32) -> i32
  vm.import private @other.v(%x : i32, %rest : i32 ...) -> i32
  vm.import private optional @other.opt() -> i32
  vm.global.i32 private mutable @gi32 : i32
  vm.global.i64 private mutable @gi64 : i64
  vm.global.f32 private mutable @gf32 : f32
  vm.global.f64 private mutable @gf64 : f64
  vm.global.ref private mutable @gref : !vm.buffer
  vm.global.i32 private mutable @hi32 : i32
  vm.global.i64 private mutable @hi64 : i64
  vm.global.f32 private mutable @hf32 : f32
  vm.global.f64 private mutable @hf64 : f64
  vm.global.ref private mutable @href : !vm.buffer

  vm.export @calls
  vm.func @calls(%x: i32) -> (i32, i32, i32, i32) {
    %a = vm.call @other.f(%x) : (i32) -> i32
    %b = vm.call.variadic @other.v(%x, [%x, %a]) : (i32, i32 ...) -> i32
    %c = vm.import.resolved @other.opt : i32
    %d = vm.call @helper(%b) : (i32) -> i32
    vm.return %a, %b, %c, %d : i32, i32, i32, i32
  }

  vm.func private @helper(%x: i32) -> i32 attributes {inlining_policy = #util.inline.never} {
    %c1 = vm.const.i32 1
    %y = vm.add.i32 %x, %c1 : i32
    vm.return %y : i32
  }

  // Addresses computed at run time (byte offsets into the globals, and a
  // ref global ordinal), so the accesses stay indirect.
  vm.export @indirect_globals
  vm.func @indirect_globals(%o1: i32, %o2: i32, %o3: i32, %o4: i32, %o5: i32, %x: i32, %b: !vm.buffer) -> (i32, i64, f32, f64, !vm.buffer) {
    %l = vm.ext.i32.i64.s %x : i32 -> i64
    %f = vm.cast.si32.f32 %x : i32 -> f32
    %d = vm.cast.si64.f64 %l : i64 -> f64
    vm.global.store.indirect.i32 %x, %o1 : i32 -> i32
    vm.global.store.indirect.i64 %l, %o2 : i64 -> i32
    vm.global.store.indirect.f32 %f, %o3 : f32 -> i32
    vm.global.store.indirect.f64 %d, %o4 : f64 -> i32
    vm.global.store.indirect.ref %b, %o5 : !vm.buffer -> i32
    %a1 = vm.global.load.indirect.i32 %o1 : i32 -> i32
    %a2 = vm.global.load.indirect.i64 %o2 : i32 -> i64
    %a3 = vm.global.load.indirect.f32 %o3 : i32 -> f32
    %a4 = vm.global.load.indirect.f64 %o4 : i32 -> f64
    %a5 = vm.global.load.indirect.ref %o5 : i32 -> !vm.buffer
    vm.return %a1, %a2, %a3, %a4, %a5 : i32, i64, f32, f64, !vm.buffer
  }

  vm.export @ref_moves
  vm.func @ref_moves(%a: !vm.buffer) -> (!vm.buffer, !vm.buffer, !vm.buffer) {
    %z = vm.const.ref.zero : !vm.buffer
    vm.return %a, %a, %z : !vm.buffer, !vm.buffer, !vm.buffer
  }

  vm.export @yields
  vm.func @yields(%x: i32) -> i32 {
    vm.yield ^bb1
  ^bb1:
    vm.return %x : i32
  }

  vm.export @yieldable_calls
  vm.func @yieldable_calls(%x: i32) -> i32 {
    vm.call.yieldable @other.f(%x) : (i32) -> ^bb1 (i32)
  ^bb1(%r: i32):
    vm.return %r : i32
  }

  vm.export @yieldable_variadic_calls
  vm.func @yieldable_variadic_calls(%x: i32) -> i32 {
    vm.call.variadic.yieldable @other.v(%x, %x, %x) <{segment_sizes = dense<[-1, 2]> : vector<2xi16>, segment_types = [i32, i32]}> : (i32, i32, i32) -> ^bb1 (i32)
  ^bb1(%r: i32):
    vm.return %r : i32
  }

  vm.export @breaks
  vm.func @breaks(%x: i32) -> i32 {
    vm.break ^bb1
  ^bb1:
    vm.return %x : i32
  }
}
