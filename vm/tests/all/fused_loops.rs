//! Loops made of fused superinstructions, including the one-pair loops the
//! plain interpreter iterates in place, give the same results as the hooked
//! interpreter (selected by setting fuel), which runs every instruction on
//! its own. Register aliasing between the pair's halves is the interesting
//! part: the compare may overwrite the add's operand, the add may write the
//! compare's bound.

use irvm::{Context, Module, TypeRegistry, Value};

const PROGRAM: &str = r#"vm.module @loops version 0
vm.type !vm.buffer
vm.rodata[0] = 0000000000000000

// A counting loop: one fused pair that branches to itself.
vm.export @count
vm.func @count(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 1
  %i2 = vm.const.i32.zero
  vm.br ^bb1()
^bb1:
  %i2 = vm.add.i32 %i2, %i1
  %i3 = vm.cmp.lt.i32.s %i2, %i0
  vm.cond_br %i3, ^bb1(), ^bb2()
^bb2:
  vm.return %i2
}

// The compare overwrites the step: while below the bound the step is the
// compare's 1, so this counts by the initial step once, then by one.
vm.export @step_is_cmp
vm.func @step_is_cmp(%i0: i32, %i1: i32) -> (i32, i32) {
^bb0:
  %i2 = vm.const.i32.zero
  vm.br ^bb1()
^bb1:
  %i2 = vm.add.i32 %i2, %i1
  %i1 = vm.cmp.lt.i32.s %i2, %i0
  vm.cond_br %i1, ^bb1(), ^bb2()
^bb2:
  vm.return %i2, %i1
}

// The add writes the bound: the loop runs until the sum wraps below it.
vm.export @bound_is_sum
vm.func @bound_is_sum(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 1000000007
  vm.br ^bb1()
^bb1:
  %i0 = vm.add.i32 %i0, %i1
  %i2 = vm.cmp.lt.i32.s %i0, %i0
  vm.cond_br %i2, ^bb1(), ^bb2()
^bb2:
  vm.return %i0
}

// A self-loop with a block argument: the remap runs on every iteration.
vm.export @with_remap
vm.func @with_remap(%i0: i32) -> (i32, i32) {
^bb0:
  %i1 = vm.const.i32 3
  %i2 = vm.const.i32.zero
  %i4 = vm.const.i32.zero
  vm.br ^bb1()
^bb1:
  %i2 = vm.add.i32 %i2, %i1
  %i3 = vm.cmp.lt.i32.s %i2, %i0
  vm.cond_br %i3, ^bb1(%i2 -> %i4), ^bb2()
^bb2:
  vm.return %i2, %i4
}

// 64-bit: the same with i64 registers.
vm.export @count64
vm.func @count64(%i0: i32) -> (i64) {
^bb0:
  %i2:3 = vm.const.i64 3
  %i4:5 = vm.const.i64.zero
  %i6:7 = vm.ext.i32.i64.s %i0
  vm.br ^bb1()
^bb1:
  %i4:5 = vm.add.i64 %i4:5, %i2:3
  %i8 = vm.cmp.lt.i64.s %i4:5, %i6:7
  vm.cond_br %i8, ^bb1(), ^bb2()
^bb2:
  vm.return %i4:5
}

// The shape iree-compile emits: compare-and-branch at the loop head, the
// body, then an add fused with the back edge `br`, whose block argument
// moves the register the first add wrote.
vm.export @back_edge
vm.func @back_edge(%i0: i32) -> (i32, i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32.zero
  vm.br ^bb1()
^bb1:
  %i4 = vm.cmp.lt.i32.s %i1, %i0
  vm.cond_br %i4, ^bb2(), ^bb3()
^bb2:
  %i4 = vm.xor.i32 %i3, %i1
  %i4 = vm.add.i32 %i4, %i2
  %i1 = vm.add.i32 %i1, %i2
  vm.br ^bb1(%i4 -> %i3)
^bb3:
  vm.return %i3, %i4
}

// 64-bit: an accumulator and a counter stepped by five, back edge fused
// with the counter's add.
vm.export @back_edge64
vm.func @back_edge64(%i0: i32) -> (i64) {
^bb0:
  %i2:3 = vm.const.i64.zero
  %i4:5 = vm.ext.i32.i64.s %i0
  %i6:7 = vm.const.i64 5
  %i8:9 = vm.const.i64.zero
  vm.br ^bb1()
^bb1:
  %i10 = vm.cmp.lt.i64.s %i2:3, %i4:5
  vm.cond_br %i10, ^bb2(), ^bb3()
^bb2:
  %i8:9 = vm.add.i64 %i8:9, %i2:3
  %i2:3 = vm.add.i64 %i2:3, %i6:7
  vm.br ^bb1()
^bb3:
  vm.return %i8:9
}

// Eight read-only bytes.
vm.export @rodata
vm.func @rodata() -> (!vm.buffer) {
^bb0:
  %r0 = vm.const.ref.rodata 0
  vm.return %r0
}

// A dot product shaped like a vmvx kernel's inner loop: index arithmetic
// (add.i64;add.i64, fma.i64;add.i64), two loads (one pair), the
// multiply-accumulate and its store (fma.f32;buffer.store.f32). `%r2`
// holds the accumulator at element `%i4:5`; an index out of range traps in
// the second half of a pair.
vm.export @dot
vm.func @dot(%r0: !vm.buffer, %r1: !vm.buffer, %r2: !vm.buffer, %i0:1: i64, %i2:3: i64, %i4:5: i64) -> (f32) {
^bb0:
  %i6:7 = vm.const.i64.zero
  %i8:9 = vm.const.i64 1
  vm.br ^bb1()
^bb1:
  %i10 = vm.cmp.lt.i64.s %i6:7, %i0:1
  vm.cond_br %i10, ^bb2(), ^bb3()
^bb2:
  %i12:13 = vm.add.i64 %i6:7, %i2:3
  %i12:13 = vm.add.i64 %i12:13, %i2:3
  %i14 = vm.buffer.load.f32 %r0, %i12:13
  %i16:17 = vm.fma.i64 %i6:7, %i8:9, %i2:3
  %i16:17 = vm.add.i64 %i16:17, %i6:7
  %i15 = vm.buffer.load.f32 %r1, %i16:17
  %i18 = vm.buffer.load.f32 %r2, %i4:5
  %i18 = vm.fma.f32 %i14, %i15, %i18
  vm.buffer.store.f32 %i18, %r2, %i4:5
  %i6:7 = vm.add.i64 %i6:7, %i8:9
  vm.br ^bb1()
^bb3:
  %i18 = vm.buffer.load.f32 %r2, %i4:5
  vm.return %i18
}
"#;

fn run(name: &str, args: &[Value], hooked: bool) -> Vec<Value> {
    try_run(name, args, hooked).unwrap()
}

fn try_run(name: &str, args: &[Value], hooked: bool) -> Result<Vec<Value>, irvm::Trap> {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(Module::from_assembly(PROGRAM, "loops.vmasm").unwrap())
        .unwrap();
    if hooked {
        ctx.set_fuel(Some(u64::MAX / 2));
    }
    let f = ctx.function(&format!("loops.{name}")).unwrap();
    ctx.invoke(&f, args)
}

/// Runs `name` both ways; both must give `expected`.
fn check(name: &str, args: &[Value], expected: &[Value]) {
    let plain = run(name, args, false);
    let hooked = run(name, args, true);
    assert_eq!(
        format!("{plain:?}"),
        format!("{expected:?}"),
        "{name} plain"
    );
    assert_eq!(
        format!("{hooked:?}"),
        format!("{expected:?}"),
        "{name} hooked"
    );
}

#[test]
fn self_loops_match_the_instruction_by_instruction_interpreter() {
    check("count", &[Value::I32(1000)], &[Value::I32(1000)]);
    check("count", &[Value::I32(-5)], &[Value::I32(1)]);
    check(
        "step_is_cmp",
        &[Value::I32(10), Value::I32(4)],
        &[Value::I32(10), Value::I32(0)],
    );
    check(
        "step_is_cmp",
        &[Value::I32(10), Value::I32(20)],
        &[Value::I32(20), Value::I32(0)],
    );
    // x < x is never true: one iteration.
    check("bound_is_sum", &[Value::I32(5)], &[Value::I32(1000000012)]);
    check(
        "with_remap",
        &[Value::I32(100)],
        &[Value::I32(102), Value::I32(99)],
    );
    check("count64", &[Value::I32(100)], &[Value::I64(102)]);
}

#[test]
fn back_edges_fused_with_an_add_match_the_instruction_by_instruction_interpreter() {
    for n in [0, 1, 7, 1000] {
        let mut a = 0i32;
        for k in 0..n {
            a = (a ^ k).wrapping_add(1);
        }
        check(
            "back_edge",
            &[Value::I32(n)],
            &[Value::I32(a), Value::I32(0)],
        );
        let sum: i64 = (0..n as i64).step_by(5).sum();
        check("back_edge64", &[Value::I32(n)], &[Value::I64(sum)]);
    }
}

fn f32_buffer(values: &[f32]) -> Value {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Value::Ref(irvm::Ref::Buffer(std::sync::Arc::new(
        irvm::Buffer::from_vec(bytes),
    )))
}

#[test]
fn kernel_pairs_match_the_instruction_by_instruction_interpreter() {
    let a: Vec<f32> = (0..40).map(|k| k as f32 * 0.5 - 3.0).collect();
    let b: Vec<f32> = (0..60).map(|k| 1.0 / (k as f32 + 1.5)).collect();
    for (n, off) in [(0i64, 0i64), (1, 0), (7, 3), (20, 9)] {
        let mut acc = 0.25f32;
        for k in 0..n {
            let (x, y) = (a[(k + 2 * off) as usize], b[(2 * k + off) as usize]);
            acc += x * y;
        }
        let args = |acc0: f32| {
            [
                f32_buffer(&a),
                f32_buffer(&b),
                f32_buffer(&[9.0, acc0]),
                Value::I64(n),
                Value::I64(off),
                Value::I64(1),
            ]
        };
        // Fresh buffers for each interpreter: the kernel writes `%r2`.
        for hooked in [false, true] {
            let got = run("dot", &args(0.25), hooked);
            assert_eq!(
                format!("{got:?}"),
                format!("{:?}", [Value::F32(acc)]),
                "dot n={n} off={off} hooked={hooked}"
            );
        }
    }
    // Traps in a pair's second half name the second instruction, as the
    // hooked interpreter (which runs it on its own) does: the second load
    // out of range, and the store into a read-only buffer.
    let trap = |args: &[Value]| {
        let plain = try_run("dot", args, false).unwrap_err();
        let hooked = try_run("dot", args, true).unwrap_err();
        assert_eq!(plain.to_string(), hooked.to_string());
        plain.to_string()
    };
    let second_load = trap(&[
        f32_buffer(&a),
        f32_buffer(&b),
        f32_buffer(&[1.0]),
        Value::I64(3),
        Value::I64(0),
        Value::I64(5),
    ]);
    assert!(second_load.contains("OUT_OF_RANGE"), "{second_load}");
    let read_only = run("rodata", &[], false).remove(0);
    let store = trap(&[
        f32_buffer(&a),
        f32_buffer(&b),
        read_only,
        Value::I64(3),
        Value::I64(0),
        Value::I64(1),
    ]);
    assert!(
        store.contains("read-only") || store.contains("PERMISSION"),
        "{store}"
    );
}
