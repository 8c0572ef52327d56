// The VM instructions on buffers, lists, globals and refs, and the
// control-flow ones (br_table, call, print, trace, fail), as iree-compile
// 3.13 emits them from VM dialect input. dump.rs compares iree-dump-module's
// disassembly with irvm dump's. vm.switch.ref is in dump_gaps/
// (iree-dump-module misreads its operands).
vm.module @isa_refs {
  vm.rodata private @bytes dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>
  vm.global.i32 private mutable @gi32 : i32
  vm.global.i64 private mutable @gi64 : i64
  vm.global.f32 private mutable @gf32 : f32
  vm.global.f64 private mutable @gf64 : f64
  vm.global.ref private mutable @gref : !vm.buffer

  vm.export @buffers
  vm.func @buffers(%n: i64, %k: i64, %v: i32) -> (i32, i32, i32, i32, i32, i64, f32, f64, i32, i64, i64) {
    %c16 = vm.const.i32 16
    %c0 = vm.const.i64.zero
    %buf = vm.buffer.alloc %n, %c16 : !vm.buffer
    %ro = vm.const.ref.rodata @bytes : !vm.buffer
    %cl = vm.buffer.clone %ro, %c0, %k, %c16 : !vm.buffer -> !vm.buffer
    vm.buffer.copy %cl, %c0, %buf, %k, %k : !vm.buffer -> !vm.buffer
    %eq = vm.buffer.compare %cl, %c0, %buf, %k, %k : !vm.buffer, !vm.buffer
    %l = vm.buffer.length %buf : !vm.buffer -> i64
    %vl = vm.ext.i32.i64.s %v : i32 -> i64
    %vf = vm.cast.si32.f32 %v : i32 -> f32
    %vd = vm.cast.si64.f64 %vl : i64 -> f64
    vm.buffer.fill.i8 %buf, %c0, %k, %v : i32 -> !vm.buffer
    vm.buffer.fill.i16 %buf, %c0, %k, %v : i32 -> !vm.buffer
    vm.buffer.fill.i32 %buf, %c0, %k, %v : i32 -> !vm.buffer
    vm.buffer.fill.i64 %buf, %c0, %k, %vl : i64 -> !vm.buffer
    vm.buffer.fill.f32 %buf, %c0, %k, %vf : f32 -> !vm.buffer
    vm.buffer.fill.f64 %buf, %c0, %k, %vd : f64 -> !vm.buffer
    vm.buffer.store.i8 %v, %buf[%k] : i32 -> !vm.buffer
    vm.buffer.store.i16 %v, %buf[%k] : i32 -> !vm.buffer
    vm.buffer.store.i32 %v, %buf[%k] : i32 -> !vm.buffer
    vm.buffer.store.i64 %vl, %buf[%k] : i64 -> !vm.buffer
    vm.buffer.store.f32 %vf, %buf[%k] : f32 -> !vm.buffer
    vm.buffer.store.f64 %vd, %buf[%k] : f64 -> !vm.buffer
    %a = vm.buffer.load.i8.s %buf[%k] : !vm.buffer -> i32
    %b = vm.buffer.load.i8.u %buf[%k] : !vm.buffer -> i32
    %c = vm.buffer.load.i16.s %buf[%k] : !vm.buffer -> i32
    %d = vm.buffer.load.i16.u %buf[%k] : !vm.buffer -> i32
    %e = vm.buffer.load.i32 %buf[%k] : !vm.buffer -> i32
    %f = vm.buffer.load.i64 %buf[%k] : !vm.buffer -> i64
    %g = vm.buffer.load.f32 %buf[%k] : !vm.buffer -> f32
    %h = vm.buffer.load.f64 %buf[%k] : !vm.buffer -> f64
    %hash = vm.buffer.hash %buf, %c0, %k : !vm.buffer -> i64
    vm.return %eq, %a, %b, %c, %d, %f, %g, %h, %e, %l, %hash : i32, i32, i32, i32, i32, i64, f32, f64, i32, i64, i64
  }

  vm.export @lists
  vm.func @lists(%n: i32, %i: i32, %b: !vm.buffer) -> (i32, i32, i64, f32, f64, !vm.buffer) {
    %li = vm.list.alloc %n : (i32) -> !vm.list<i32>
    vm.list.reserve %li, %n : (!vm.list<i32>, i32)
    vm.list.resize %li, %n : (!vm.list<i32>, i32)
    %size = vm.list.size %li : (!vm.list<i32>) -> i32
    vm.list.set.i32 %li, %i, %n : (!vm.list<i32>, i32, i32)
    %x = vm.list.get.i32 %li, %i : (!vm.list<i32>, i32) -> i32
    %ll = vm.list.alloc %n : (i32) -> !vm.list<i64>
    vm.list.resize %ll, %n : (!vm.list<i64>, i32)
    %nl = vm.ext.i32.i64.s %n : i32 -> i64
    vm.list.set.i64 %ll, %i, %nl : (!vm.list<i64>, i32, i64)
    %y = vm.list.get.i64 %ll, %i : (!vm.list<i64>, i32) -> i64
    %lf = vm.list.alloc %n : (i32) -> !vm.list<f32>
    vm.list.resize %lf, %n : (!vm.list<f32>, i32)
    %nf = vm.cast.si32.f32 %n : i32 -> f32
    vm.list.set.f32 %lf, %i, %nf : (!vm.list<f32>, i32, f32)
    %z = vm.list.get.f32 %lf, %i : (!vm.list<f32>, i32) -> f32
    %ld = vm.list.alloc %n : (i32) -> !vm.list<f64>
    vm.list.resize %ld, %n : (!vm.list<f64>, i32)
    %nd = vm.cast.si64.f64 %nl : i64 -> f64
    vm.list.set.f64 %ld, %i, %nd : (!vm.list<f64>, i32, f64)
    %w = vm.list.get.f64 %ld, %i : (!vm.list<f64>, i32) -> f64
    %lr = vm.list.alloc %n : (i32) -> !vm.list<?>
    vm.list.resize %lr, %n : (!vm.list<?>, i32)
    vm.list.set.ref %lr, %i, %b : (!vm.list<?>, i32, !vm.buffer)
    %r = vm.list.get.ref %lr, %i : (!vm.list<?>, i32) -> !vm.buffer
    vm.return %size, %x, %y, %z, %w, %r : i32, i32, i64, f32, f64, !vm.buffer
  }

  vm.export @globals
  vm.func @globals(%x: i32, %b: !vm.buffer) -> (i32, i64, f32, f64, !vm.buffer) {
    %l = vm.ext.i32.i64.s %x : i32 -> i64
    %f = vm.cast.si32.f32 %x : i32 -> f32
    %d = vm.cast.si64.f64 %l : i64 -> f64
    vm.global.store.i32 %x, @gi32 : i32
    vm.global.store.i64 %l, @gi64 : i64
    vm.global.store.f32 %f, @gf32 : f32
    vm.global.store.f64 %d, @gf64 : f64
    vm.global.store.ref %b, @gref : !vm.buffer
    %a1 = vm.global.load.i32 @gi32 : i32
    %a2 = vm.global.load.i64 @gi64 : i64
    %a3 = vm.global.load.f32 @gf32 : f32
    %a4 = vm.global.load.f64 @gf64 : f64
    %a5 = vm.global.load.ref @gref : !vm.buffer
    vm.return %a1, %a2, %a3, %a4, %a5 : i32, i64, f32, f64, !vm.buffer
  }

  vm.export @refs
  vm.func @refs(%a: !vm.buffer, %b: !vm.buffer, %c: i32, %o: !vm.ref<?>) -> (i32, i32, i32, !vm.buffer, !vm.buffer) {
    %eq = vm.cmp.eq.ref %a, %b : !vm.buffer
    %ne = vm.cmp.ne.ref %a, %b : !vm.buffer
    %nz = vm.cmp.nz.ref %a : !vm.buffer
    %s = vm.select.ref %c, %a, %b : !vm.buffer
    %cast = vm.cast.any.ref %o : !vm.ref<?> -> !vm.buffer
    vm.return %eq, %ne, %nz, %s, %cast : i32, i32, i32, !vm.buffer, !vm.buffer
  }

  vm.export @control
  vm.func @control(%i: i32, %x: i32) -> i32 {
    vm.print "x"(%x) : i32
    vm.trace "x"(%x) : i32
    vm.br_table %i {
      default: ^bb1(%x : i32),
      0: ^bb2(%x : i32),
      1: ^bb3
    }
  ^bb1(%a: i32):
    vm.return %a : i32
  ^bb2(%b: i32):
    %r = vm.call @helper(%b) : (i32) -> i32
    vm.return %r : i32
  ^bb3:
    vm.fail %x, "failed"
  }

  vm.func private @helper(%x: i32) -> i32 {
    %c1 = vm.const.i32 1
    %y = vm.add.i32 %x, %c1 : i32
    vm.return %y : i32
  }
}
