//! The compiling tier (`vm/jit`) as an embedder sees it: `Tier::Auto`
//! compiles a hot loop and not a brief one, every engine returns the same
//! results, and a trap inside compiled code is reported exactly as the
//! interpreter reports it (same function, offset and message).

use irvm::{Context, Module, Tier, TypeRegistry, Value};

const SOURCE: &str = r#"
vm.module @jitmod version 0
vm.export @sum
vm.export @div_at
vm.func @sum(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3, %i1->%i4)
^bb1:
  %i5 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i5, ^bb2(), ^bb3()
^bb2:
  %i6 = vm.xor.i32 %i4, %i3
  %i4 = vm.add.i32 %i6, %i3
  %i3 = vm.add.i32 %i3, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i4
}
vm.func @div_at(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %i4 = vm.const.i32 1000000
  vm.br ^bb1(%i2->%i5, %i2->%i6)
^bb1:
  %i7 = vm.cmp.lt.i32.s %i5, %i0
  vm.cond_br %i7, ^bb2(), ^bb3()
^bb2:
  %i8 = vm.sub.i32 %i1, %i5
  %i8 = vm.div.i32.s %i4, %i8
  %i6 = vm.add.i32 %i6, %i8
  %i5 = vm.add.i32 %i5, %i3
  vm.br ^bb1()
^bb3:
  vm.return %i6
}
"#;

fn context(engine: Tier) -> Context {
    context_of(SOURCE, engine)
}

/// A context of `engine` with the module assembled from `source`.
fn context_of(source: &str, engine: Tier) -> Context {
    let bytes = irvm::asm::assemble(source, "jit.vmasm").expect("assembles");
    let module = Module::from_bytes(bytes).expect("loads");
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(engine);
    ctx.register_module(module).expect("registers");
    ctx
}

/// The call's results as text (values print as the CLI prints them).
fn call(ctx: &mut Context, name: &str, args: &[Value]) -> Result<String, String> {
    let f = ctx.function(name).expect("exported");
    ctx.invoke(&f, args)
        .map(|v| format!("{v:?}"))
        .map_err(|t| t.to_string())
}

#[test]
fn auto_compiles_a_hot_loop_and_not_a_brief_one() {
    let mut ctx = context(Tier::Auto);
    let brief = call(&mut ctx, "sum", &[Value::I32(100)]).unwrap();
    assert_eq!(
        ctx.compiled_functions().0,
        0,
        "100 iterations stay interpreted"
    );
    let hot = call(&mut ctx, "sum", &[Value::I32(1_000_000)]).unwrap();
    if Tier::compiler_available() {
        let (n, bytes) = ctx.compiled_functions();
        assert_eq!(n, 1, "the hot loop's function is compiled");
        assert!(bytes > 0);
    }
    let mut interp = context(Tier::Interp);
    assert_eq!(call(&mut interp, "sum", &[Value::I32(100)]).unwrap(), brief);
    assert_eq!(
        call(&mut interp, "sum", &[Value::I32(1_000_000)]).unwrap(),
        hot
    );
    assert_eq!(interp.compiled_functions().0, 0, "interp never compiles");
}

#[test]
fn every_engine_gives_the_same_results() {
    for n in [0, 1, 7, 20_001, 300_000] {
        let expect = call(&mut context(Tier::Interp), "sum", &[Value::I32(n)]).unwrap();
        for engine in [Tier::Jit, Tier::Auto] {
            let got = call(&mut context(engine), "sum", &[Value::I32(n)]).unwrap();
            assert_eq!(got, expect, "sum({n}) on {engine}");
        }
    }
}

#[test]
fn a_trap_in_compiled_code_reads_as_the_interpreters() {
    // The divisor reaches zero at iteration k: after 50,000 iterations
    // Auto has compiled the loop, so the trap happens in compiled code
    // (which leaves before the division for the interpreter to trap).
    for k in [3, 50_000] {
        let args = [Value::I32(100_000), Value::I32(k)];
        let expect = call(&mut context(Tier::Interp), "div_at", &args).unwrap_err();
        assert!(expect.contains("div_at"), "{expect}");
        for engine in [Tier::Jit, Tier::Auto] {
            let got = call(&mut context(engine), "div_at", &args).unwrap_err();
            assert_eq!(got, expect, "k = {k} on {engine}");
        }
    }
}

#[test]
fn engine_names_parse_and_print() {
    for e in [Tier::Interp, Tier::Jit, Tier::Auto] {
        assert_eq!(e.to_string().parse::<Tier>(), Ok(e));
    }
    assert!("fast"
        .parse::<Tier>()
        .unwrap_err()
        .contains("interp, jit or auto"));
}

/// `irvm run` with the given flags on a corpus program: (stdout, stderr,
/// exit code).
fn irvm_run(flags: &[&str]) -> (String, String, Option<i32>) {
    let module = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/corpus/nested_i64.vmfb"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "run",
            &format!("--module={module}"),
            "--function=nested_i64",
        ])
        .args(flags)
        .env_remove("IRVM_ENGINE")
        .output()
        .expect("irvm runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn the_cli_engine_flag_changes_nothing_printed() {
    let interp = irvm_run(&["--input=300", "--engine=interp"]);
    assert_eq!(interp.2, Some(0), "{interp:?}");
    for engine in ["--engine=jit", "--engine=auto"] {
        assert_eq!(irvm_run(&["--input=300", engine]), interp, "{engine}");
    }
    // Hooks (a trace, fuel) interpret whatever the engine: the same trace
    // and the same exhaustion point.
    for hook in [
        &["--input=3", "--trace-execution"][..],
        &["--input=300", "--fuel=5000"],
    ] {
        let want = irvm_run(&[hook, &["--engine=interp"]].concat());
        assert_eq!(
            irvm_run(&[hook, &["--engine=jit"]].concat()),
            want,
            "{hook:?}"
        );
    }
}

#[test]
fn an_unknown_engine_is_a_clear_error() {
    let (_, err, code) = irvm_run(&["--input=3", "--engine=fast"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("unknown engine 'fast'"), "{err}");
}

/// Buffers in compiled code: compiled code resolves a register's buffer
/// once (lease and all) and then checks only bounds; a ref block argument
/// changes which buffer a register holds; traps (out of range, read-only)
/// happen after 50,000 iterations, inside compiled code.
const BUFFERS: &str = r#"
vm.module @jitbuf version 0
vm.rodata[0] = 0102030405060708
vm.export @alternate
vm.export @store_until
vm.export @rodata_store_at
vm.export @accumulate
vm.func @alternate(%i0:1: i64) -> (i32) {
^bb0:
  %i2:3 = vm.const.i64 64
  %i4:5 = vm.const.i64 32
  %i6 = vm.const.i32 16
  %r0 = vm.buffer.alloc %i2:3, %i6
  %r1 = vm.buffer.alloc %i4:5, %i6
  %i8:9 = vm.const.i64.zero
  %i10:11 = vm.const.i64 16
  %i12 = vm.const.i32 3
  vm.buffer.fill.i32 %r0, %i8:9, %i10:11, %i12
  %i12 = vm.const.i32 5
  %i14:15 = vm.const.i64 8
  vm.buffer.fill.i32 %r1, %i8:9, %i14:15, %i12
  %i16:17 = vm.const.i64 1
  %i18:19 = vm.const.i64 7
  %i20 = vm.const.i32.zero
  vm.br ^bb1(%i8->%i22, %i9->%i23)
^bb1:
  %i24 = vm.cmp.lt.i64.s %i22:23, %i0:1
  vm.cond_br %i24, ^bb2(), ^bb3()
^bb2:
  %i26:27 = vm.and.i64 %i22:23, %i18:19
  %i28 = vm.buffer.load.i32 %r0, %i26:27
  %i20 = vm.add.i32 %i20, %i28
  %i28 = vm.trunc.i64.i32 %i22:23
  vm.buffer.store.i32 %i28, %r0, %i26:27
  %i22:23 = vm.add.i64 %i22:23, %i16:17
  vm.br ^bb1(%r0->%r2, %r1->%r0, %r2->%r1)
^bb3:
  vm.return %i20
}
vm.func @store_until(%i0:1: i64, %i2:3: i64) -> (i32) {
^bb0:
  %i4:5 = vm.const.i64 4
  %i4:5 = vm.mul.i64 %i2:3, %i4:5
  %i6 = vm.const.i32 16
  %r0 = vm.buffer.alloc %i4:5, %i6
  %i8:9 = vm.const.i64.zero
  %i10:11 = vm.const.i64 1
  vm.br ^bb1(%i8->%i12, %i9->%i13)
^bb1:
  %i14 = vm.cmp.lt.i64.s %i12:13, %i0:1
  vm.cond_br %i14, ^bb2(), ^bb3()
^bb2:
  %i15 = vm.trunc.i64.i32 %i12:13
  vm.buffer.store.i32 %i15, %r0, %i12:13
  %i12:13 = vm.add.i64 %i12:13, %i10:11
  vm.br ^bb1()
^bb3:
  %i12:13 = vm.sub.i64 %i12:13, %i10:11
  %i15 = vm.buffer.load.i32 %r0, %i12:13
  vm.return %i15
}
vm.func @rodata_store_at(%i0:1: i64, %i2:3: i64) -> (i32) {
^bb0:
  %r0 = vm.const.ref.rodata 0
  %i4:5 = vm.const.i64.zero
  %i6:7 = vm.const.i64 1
  %i8:9 = vm.const.i64 7
  %i10 = vm.const.i32.zero
  vm.br ^bb1(%i4->%i12, %i5->%i13)
^bb1:
  %i14 = vm.cmp.lt.i64.s %i12:13, %i0:1
  vm.cond_br %i14, ^bb2(), ^bb5()
^bb2:
  %i16:17 = vm.and.i64 %i12:13, %i8:9
  %i15 = vm.buffer.load.i8.u %r0, %i16:17
  %i10 = vm.add.i32 %i10, %i15
  %i18 = vm.cmp.lt.i64.s %i12:13, %i2:3
  vm.cond_br %i18, ^bb4(), ^bb3()
^bb3:
  vm.buffer.store.i8 %i15, %r0, %i16:17
  vm.br ^bb4()
^bb4:
  %i12:13 = vm.add.i64 %i12:13, %i6:7
  vm.br ^bb1()
^bb5:
  vm.return %i10
}
vm.func @accumulate(%i0:1: i64) -> (i64) {
^bb0:
  %i2:3 = vm.const.i64 8
  %i4 = vm.const.i32 8
  %r0 = vm.buffer.alloc %i2:3, %i4
  %i6:7 = vm.const.i64.zero
  %i8:9 = vm.const.i64 1
  vm.br ^bb1(%i6->%i10, %i7->%i11)
^bb1:
  %i12 = vm.cmp.lt.i64.s %i10:11, %i0:1
  vm.cond_br %i12, ^bb2(), ^bb3()
^bb2:
  %i14:15 = vm.buffer.load.i64 %r0, %i6:7
  %i14:15 = vm.add.i64 %i14:15, %i10:11
  vm.buffer.store.i64 %i14:15, %r0, %i6:7
  %i10:11 = vm.add.i64 %i10:11, %i8:9
  vm.br ^bb1()
^bb3:
  %i14:15 = vm.buffer.load.i64 %r0, %i6:7
  vm.return %i14:15
}
"#;

fn buffers_context(engine: Tier) -> Context {
    context_of(BUFFERS, engine)
}

#[test]
fn buffers_in_compiled_code_behave_as_interpreted() {
    let cases: Vec<(&str, Vec<Value>)> = vec![
        // Two buffers trade registers every iteration.
        ("alternate", vec![Value::I64(100_001)]),
        ("alternate", vec![Value::I64(3)]),
        // In range throughout, then out of range at 60,000.
        ("store_until", vec![Value::I64(59_999), Value::I64(60_000)]),
        ("store_until", vec![Value::I64(100_000), Value::I64(60_000)]),
        // Reads of rodata, then a store to it at iteration 50,000.
        (
            "rodata_store_at",
            vec![Value::I64(70_000), Value::I64(80_000)],
        ),
        (
            "rodata_store_at",
            vec![Value::I64(70_000), Value::I64(50_000)],
        ),
        // Load, add and store the same element (a read, then a write).
        ("accumulate", vec![Value::I64(200_000)]),
    ];
    for (name, args) in cases {
        let want = call(&mut buffers_context(Tier::Interp), name, &args);
        for engine in [Tier::Jit, Tier::Auto] {
            let got = call(&mut buffers_context(engine), name, &args);
            assert_eq!(got, want, "{name}{args:?} on {engine}");
        }
    }
    let trap = call(
        &mut buffers_context(Tier::Auto),
        "store_until",
        &[Value::I64(100_000), Value::I64(60_000)],
    )
    .unwrap_err();
    assert!(trap.contains("store_until"), "{trap}");
    let trap = call(
        &mut buffers_context(Tier::Auto),
        "rodata_store_at",
        &[Value::I64(70_000), Value::I64(50_000)],
    )
    .unwrap_err();
    assert!(trap.contains("rodata_store_at"), "{trap}");
}

/// The hal's vmvx executables run with the device's engine
/// (`DeviceOptions::tier`, which `irvm run --engine` sets): under `Jit`
/// the kernel is compiled, under `Interp` nothing is, and both compute the
/// same. Uses `../shared/benchmarks/vmvx/bmm_exe.vmfb` (a 256x256x256
/// matmul kernel iree-compile emitted); skips without it.
#[test]
fn vmvx_executables_follow_the_device_engine() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/benchmarks/vmvx/bmm_exe.vmfb"
    );
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("skipping: {path} is absent");
        return;
    };
    let run = |engine: Tier| {
        let device = irvm_hal::DeviceConfig::new(irvm_hal::DeviceOptions {
            kind: irvm_hal::DeviceKind::Sync,
            tier: Some(engine),
            ..irvm_hal::DeviceOptions::default()
        });
        let exe = irvm_hal::Executable::load(
            irvm_hal::VMVX_FORMAT,
            bytes.clone(),
            &[],
            irvm::ContextResources::detached(),
            &device,
        )
        .expect("loads");
        let matrix = |fill: f32| {
            let b = irvm::Buffer::new(256 * 256 * 4).unwrap();
            let mut bytes = Vec::with_capacity(256 * 256 * 4);
            for k in 0..256 * 256 {
                bytes.extend_from_slice(&(fill * (k % 7) as f32).to_le_bytes());
            }
            b.with_bytes_mut(|m| m.copy_from_slice(&bytes)).unwrap();
            irvm::Ref::from(b)
        };
        let (a, b, c) = (matrix(1.0), matrix(0.5), matrix(0.0));
        exe.dispatch(irvm_hal::Dispatch {
            function: 0,
            workgroups: [2, 1, 1],
            constants: &[],
            bindings: irvm_hal::BoundRange::each_whole(&[a, b, c.clone()]),
            location: None,
        })
        .expect("dispatches");
        let irvm::Ref::Buffer(out) = c else {
            unreachable!()
        };
        (out.to_vec(), exe.compiled_functions().0)
    };
    let (interp, none) = run(Tier::Interp);
    assert_eq!(none, 0, "Interp compiles nothing");
    assert!(interp.iter().any(|&x| x != 0), "the kernel wrote results");
    let (jit, compiled) = run(Tier::Jit);
    assert_eq!(jit, interp, "same results");
    if Tier::compiler_available() {
        assert!(compiled >= 1, "Jit compiled the kernel");
    }
}

/// Compiled code stores registers back only where it leaves, and only
/// those the interpreter may read from there on. Each function here leaves
/// compiled code in a different way with values it computed still needed
/// by interpreted instructions: a `vm.fail` of status 0 (which goes on),
/// a call inside the loop, a loop exit that reads an i64 as its two halves
/// and an f32/f64 by their bits, and a value computed, overwritten and
/// computed again around exits.
const WRITEBACK: &str = r#"
vm.module @wb version 0
vm.export @after_fail
vm.export @call_in_loop
vm.export @halves
vm.export @rewritten
vm.func @id(%i0: i32) -> (i32) {
^bb0:
  vm.return %i0
}
vm.func @after_fail(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 40503
  vm.br ^bb1(%i1->%i4, %i1->%i5)
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb3()
^bb2:
  %i5 = vm.mul.i32 %i5, %i3
  %i5 = vm.xor.i32 %i5, %i4
  %i7 = vm.add.i32 %i5, %i2
  vm.fail %i1, "status 0: goes on"
  %i5 = vm.add.i32 %i7, %i5
  %i4 = vm.add.i32 %i4, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i5
}
vm.func @call_in_loop(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 7
  vm.br ^bb1(%i1->%i4, %i1->%i5)
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb3()
^bb2:
  %i8 = vm.mul.i32 %i4, %i3
  %i9 = vm.add.i32 %i8, %i5
  %i10 = vm.call @id(%i9)
  %i5 = vm.xor.i32 %i10, %i8
  %i4 = vm.add.i32 %i4, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i5
}
vm.func @halves(%i0: i32) -> (i32, i32, i32, i32, i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i4:5 = vm.const.i64 6700417
  %i6 = vm.const.f32 0.5
  %i8:9 = vm.const.f64 0.25
  %i10 = vm.const.f32 1.0009765625
  vm.br ^bb1(%i1->%i3)
^bb1:
  %i7 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i7, ^bb2(), ^bb3()
^bb2:
  %i4:5 = vm.mul.i64 %i4:5, %i4:5
  %i6 = vm.mul.f32 %i6, %i10
  %i42:43 = vm.ext.f32.f64 %i6
  %i8:9 = vm.add.f64 %i8:9, %i42:43
  %i3 = vm.add.i32 %i3, %i2
  vm.br ^bb1()
^bb3:
  %i13 = vm.call @id(%i5)
  %i14 = vm.call @id(%i4)
  %i15 = vm.call @id(%i6)
  %i16 = vm.call @id(%i9)
  %i17 = vm.call @id(%i8)
  vm.return %i13, %i14, %i15, %i16, %i17
}
vm.func @rewritten(%i0: i32) -> (i32, i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 3
  vm.br ^bb1(%i1->%i4, %i1->%i5)
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb4()
^bb2:
  %i7 = vm.mul.i32 %i4, %i3
  %i8 = vm.and.i32 %i4, %i3
  vm.cond_br %i8, ^bb3(), ^bb5()
^bb3:
  %i7 = vm.add.i32 %i7, %i2
  %i5 = vm.add.i32 %i5, %i7
  %i4 = vm.add.i32 %i4, %i2
  vm.br ^bb1()
^bb5:
  %i9 = vm.call @id(%i7)
  %i7 = vm.sub.i32 %i9, %i2
  %i5 = vm.xor.i32 %i5, %i7
  %i4 = vm.add.i32 %i4, %i2
  vm.br ^bb1()
^bb4:
  %i10 = vm.call @id(%i7)
  vm.return %i5, %i10
}
"#;

#[test]
fn exits_store_what_the_interpreter_reads() {
    for name in ["after_fail", "call_in_loop", "halves", "rewritten"] {
        for n in [1, 2, 5, 30_000, 100_000] {
            let args = [Value::I32(n)];
            let expect = call(&mut context_of(WRITEBACK, Tier::Interp), name, &args).unwrap();
            for engine in [Tier::Jit, Tier::Auto] {
                let mut ctx = context_of(WRITEBACK, engine);
                let got = call(&mut ctx, name, &args).unwrap();
                assert_eq!(got, expect, "{name}({n}) on {engine}");
                if engine == Tier::Jit && Tier::compiler_available() {
                    assert!(ctx.compiled_functions().0 >= 1, "{name} compiled");
                }
            }
        }
    }
}

/// A kernel as iree-compile's vmvx executables are: it takes its buffers
/// out of a list (`vm.list.get.ref`), loops over them and discards them
/// (`vm.discard.refs`), called from another module through an import. Both
/// ref instructions are compiled, and `Tier::Auto` enters the kernel at
/// its entry once hot. `pick` takes a different buffer out of the list
/// into the same register every 1024 iterations inside its loop, and a
/// list entry of another type (read as null) traps at the end; `drop_at`
/// discards its buffer register inside the loop.
const KERNEL: &str = r#"
vm.module @kern version 0
vm.type !vm.buffer
vm.export @sum
vm.export @pick
vm.export @drop_at
vm.func @sum(%r0: !vm.ref<?>, %i0: i32, %i1: i32) -> (i32) {
^bb0:
  %r1 = vm.list.get.ref %r0, %i0 : !vm.buffer
  %i2 = vm.const.i32 1
  %i3 = vm.add.i32 %i0, %i2
  %r2 = vm.list.get.ref %r0, %i3 : !vm.buffer
  vm.discard.refs %r0
  %i4 = vm.const.i32.zero
  %i6:7 = vm.const.i64.zero
  %i8:9 = vm.const.i64 1
  %i12:13 = vm.ext.i32.i64.s %i1
  vm.br ^bb1(%i6->%i10, %i7->%i11)
^bb1:
  %i14 = vm.cmp.lt.i64.s %i10:11, %i12:13
  vm.cond_br %i14, ^bb2(), ^bb3()
^bb2:
  %i15 = vm.buffer.load.i32 %r1, %i10:11
  %i16 = vm.buffer.load.i32 %r2, %i10:11
  %i4 = vm.add.i32 %i4, %i15
  %i4 = vm.xor.i32 %i4, %i16
  vm.buffer.store.i32 %i4, %r2, %i10:11
  %i10:11 = vm.add.i64 %i10:11, %i8:9
  vm.br ^bb1()
^bb3:
  vm.discard.refs %r1, %r2
  vm.return %i4
}
vm.func @pick(%r0: !vm.ref<?>, %i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 10
  %i36:37 = vm.const.i64 7
  vm.br ^bb1(%i1->%i7, %i1->%i8)
^bb1:
  %i9 = vm.cmp.lt.i32.s %i7, %i0
  vm.cond_br %i9, ^bb2(), ^bb3()
^bb2:
  %i10 = vm.shr.i32.u %i7, %i3
  %r1 = vm.list.get.ref %r0, %i10 : !vm.buffer
  %i42:43 = vm.ext.i32.i64.u %i7
  %i42:43 = vm.and.i64 %i42:43, %i36:37
  %i13 = vm.buffer.load.i32 %r1, %i42:43
  %i8 = vm.add.i32 %i8, %i13
  %i7 = vm.add.i32 %i7, %i2
  vm.br ^bb1()
^bb3:
  vm.discard.refs %r1
  vm.return %i8
}
vm.func @drop_at(%r0: !vm.ref<?>, %i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %r1 = vm.list.get.ref %r0, %i3 : !vm.buffer
  %i36:37 = vm.const.i64 7
  vm.br ^bb1(%i2->%i7, %i2->%i8)
^bb1:
  %i9 = vm.cmp.lt.i32.s %i7, %i0
  vm.cond_br %i9, ^bb2(), ^bb5()
^bb2:
  %i10 = vm.cmp.eq.i32 %i7, %i1
  vm.cond_br %i10, ^bb3(), ^bb4()
^bb3:
  vm.discard.refs %r1
  vm.br ^bb4()
^bb4:
  %i42:43 = vm.ext.i32.i64.u %i7
  %i42:43 = vm.and.i64 %i42:43, %i36:37
  %i13 = vm.buffer.load.i32 %r1, %i42:43
  %i8 = vm.add.i32 %i8, %i13
  %i7 = vm.add.i32 %i7, %i3
  vm.br ^bb1()
^bb5:
  vm.return %i8
}
"#;

const KERNEL_APP: &str = r#"
vm.module @app version 0
vm.type !vm.buffer
vm.type !vm.list<!vm.opaque>
vm.import @kern.sum cconv "0rii_i"
vm.import @kern.pick cconv "0ri_i"
vm.import @kern.drop_at cconv "0rii_i"
vm.export @run
vm.export @pick_from
vm.export @drop_from
vm.func @buffers(%i0: i32) -> (!vm.ref<?>) {
^bb0:
  %i1 = vm.const.i32 64
  %r0 = vm.list.alloc %i1 : !vm.list<!vm.opaque>
  vm.list.resize %r0, %i1
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %i4:5 = vm.ext.i32.i64.s %i0
  %i6:7 = vm.const.i64 4
  %i6:7 = vm.mul.i64 %i4:5, %i6:7
  %i8 = vm.const.i32 16
  %i10:11 = vm.const.i64.zero
  vm.br ^bb1(%i2->%i12)
^bb1:
  %i13 = vm.cmp.lt.i32.s %i12, %i1
  vm.cond_br %i13, ^bb2(), ^bb3()
^bb2:
  %r1 = vm.buffer.alloc %i6:7, %i8
  %i14 = vm.mul.i32 %i12, %i8
  %i14 = vm.add.i32 %i14, %i3
  vm.buffer.fill.i32 %r1, %i10:11, %i4:5, %i14
  vm.list.set.ref %r0, %i12, %r1
  %i12 = vm.add.i32 %i12, %i3
  vm.br ^bb1()
^bb3:
  %i15 = vm.const.i32 63
  vm.list.set.ref %r0, %i15, %r0
  vm.return %r0
}
vm.func @run(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %r0 = vm.call @buffers(%i1)
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %i4 = vm.const.i32 31
  vm.br ^bb1(%i2->%i5, %i2->%i6)
^bb1:
  %i7 = vm.cmp.lt.i32.s %i5, %i0
  vm.cond_br %i7, ^bb2(), ^bb3()
^bb2:
  %i8 = vm.and.i32 %i5, %i4
  %i9 = vm.call @kern.sum(%r0, %i8, %i1)
  %i6 = vm.xor.i32 %i6, %i9
  %i6 = vm.add.i32 %i6, %i5
  %i5 = vm.add.i32 %i5, %i3
  vm.br ^bb1()
^bb3:
  vm.return %i6
}
vm.func @pick_from(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 8
  %r0 = vm.call @buffers(%i1)
  %i2 = vm.call @kern.pick(%r0, %i0)
  vm.return %i2
}
vm.func @drop_from(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32 8
  %r0 = vm.call @buffers(%i2)
  %i3 = vm.call @kern.drop_at(%r0, %i0, %i1)
  vm.return %i3
}
"#;

fn kernel_context(engine: Tier) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(engine);
    for source in [KERNEL, KERNEL_APP] {
        let bytes = irvm::asm::assemble(source, "kernel.vmasm").expect("assembles");
        ctx.register_module(Module::from_bytes(bytes).expect("loads"))
            .expect("registers");
    }
    ctx
}

#[test]
fn kernels_taking_buffers_from_lists_run_compiled_as_interpreted() {
    let cases: Vec<(&str, Vec<Value>)> = vec![
        // 3000 calls of 64 iterations: Auto compiles the kernel after about
        // 300 calls and then enters it at its entry.
        ("run", vec![Value::I32(3000), Value::I32(64)]),
        ("run", vec![Value::I32(5), Value::I32(1)]),
        // A different buffer every 1024 iterations, inside the loop.
        ("pick_from", vec![Value::I32(40_000)]),
        // Entry 63 is the list itself: read as null, then the load traps.
        ("pick_from", vec![Value::I32(70_000)]),
        // The buffer register is discarded at iteration 50,000 (compiled
        // by then): the next load traps on the null register.
        ("drop_from", vec![Value::I32(60_000), Value::I32(50_000)]),
        ("drop_from", vec![Value::I32(40_000), Value::I32(50_000)]),
    ];
    for (name, args) in cases {
        let want = call(&mut kernel_context(Tier::Interp), name, &args);
        for engine in [Tier::Jit, Tier::Auto] {
            let mut ctx = kernel_context(engine);
            let got = call(&mut ctx, name, &args);
            assert_eq!(got, want, "{name}{args:?} on {engine}");
            if name == "run" && matches!(args[0], Value::I32(3000)) && Tier::compiler_available() {
                assert!(ctx.compiled_functions().0 >= 1, "the kernel compiled");
            }
        }
    }
    let trap = call(
        &mut kernel_context(Tier::Auto),
        "pick_from",
        &[Value::I32(70_000)],
    )
    .unwrap_err();
    assert!(trap.contains("pick"), "{trap}");
}

/// A loop that appends `n` elements to a `!vm.list<i32>` one at a time
/// (`vm.list.size`, `vm.list.resize` to one more, `vm.list.set.i32`),
/// then reserves room for 100 more and grows it by 100 at once (400 bytes:
/// bulk work, which the copies with limits leave to the interpreter) and
/// shrinks it to `n / 2`;
/// returns the last element and the length. `@size_of_null` traps on
/// `vm.list.size` of a null list.
pub(crate) const APPEND_LOOP: &str = r#"
vm.module @lists version 0
vm.type i32
vm.type !vm.list<i32>
vm.export @append
vm.export @size_of_null
vm.func @append(%i0: i32) -> (i32, i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %r0 = vm.list.alloc %i1 : !vm.list<i32>
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3)
^bb1:
  %i4 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i4, ^bb2(), ^bb3()
^bb2:
  %i5 = vm.list.size %r0
  %i6 = vm.add.i32 %i5, %i2
  vm.list.resize %r0, %i6
  vm.list.set.i32 %r0, %i5, %i3
  %i3 = vm.add.i32 %i3, %i2
  vm.br ^bb1()
^bb3:
  %i7 = vm.list.size %r0
  %i8 = vm.const.i32 100
  %i9 = vm.add.i32 %i7, %i8
  vm.list.reserve %r0, %i9
  vm.list.resize %r0, %i9
  %i10 = vm.shr.i32.u %i7, %i2
  %i11 = vm.add.i32 %i10, %i2
  vm.list.resize %r0, %i11
  %i12 = vm.list.get.i32 %r0, %i10
  %i13 = vm.list.size %r0
  vm.return %i12, %i13
}
vm.func @size_of_null() -> (i32) {
^bb0:
  %r0 = vm.const.ref.zero
  %i0 = vm.list.size %r0
  vm.return %i0
}
"#;

#[test]
fn a_list_append_loop_stays_in_compiled_code() {
    // Before `vm.list.size`, `vm.list.resize`, `vm.list.reserve` and
    // `vm.list.alloc` were compiled, each
    // pass left compiled code twice, and `Tier::Jit` entered it again
    // after each: 200,000 entries for 100,000 appends.
    for n in [0, 1, 7, 100_000] {
        let args = [Value::I32(n)];
        let want = call(&mut context_of(APPEND_LOOP, Tier::Interp), "append", &args).unwrap();
        assert_eq!(
            want,
            format!("[I32({}), I32({})]", n / 2, n / 2 + 1),
            "append({n})"
        );
        for engine in [Tier::Jit, Tier::Auto] {
            let mut ctx = context_of(APPEND_LOOP, engine);
            let got = call(&mut ctx, "append", &args).unwrap();
            assert_eq!(got, want, "append({n}) on {engine}");
            if n == 100_000 && Tier::compiler_available() {
                // Jit enters at the start, Auto at the loop head once the
                // loop is hot, and neither leaves again.
                let entries = ctx.compiled_entries();
                assert!(
                    entries == 1,
                    "{entries} entries into compiled code on {engine}"
                );
            }
        }
    }
}

#[test]
fn list_traps_in_compiled_code_read_as_the_interpreters() {
    // A list grown past the context's limit (at the resize to 1,001) and
    // the size of a null list.
    let limited = |engine| {
        let registry = TypeRegistry::new();
        let limits = irvm::Limits {
            max_list_elements: 1000,
            ..irvm::Limits::default()
        };
        let mut ctx = Context::with_limits(&registry, limits);
        ctx.set_tier(engine);
        let bytes = irvm::asm::assemble(APPEND_LOOP, "lists.vmasm").expect("assembles");
        ctx.register_module(Module::from_bytes(bytes).expect("loads"))
            .expect("registers");
        ctx
    };
    let grown = call(&mut limited(Tier::Interp), "append", &[Value::I32(5000)]).unwrap_err();
    assert!(grown.contains("list of 1001 elements exceeds"), "{grown}");
    assert!(grown.contains("append"), "{grown}");
    let null = call(
        &mut context_of(APPEND_LOOP, Tier::Interp),
        "size_of_null",
        &[],
    )
    .unwrap_err();
    assert!(null.contains("list is null"), "{null}");
    for engine in [Tier::Jit, Tier::Auto] {
        let got = call(&mut limited(engine), "append", &[Value::I32(5000)]).unwrap_err();
        assert_eq!(got, grown, "on {engine}");
        let got = call(&mut context_of(APPEND_LOOP, engine), "size_of_null", &[]).unwrap_err();
        assert_eq!(got, null, "on {engine}");
    }
}

/// `@fill(n, k)`: sets a buffer into each of the `n` elements of a
/// `!vm.list<!vm.buffer>` (`vm.list.set.ref`), but at iteration `k` the
/// list itself (a ref of another type: a trap); returns whether the last
/// element holds a buffer. `@into_values` sets a buffer into a list of
/// i32s (a trap).
const SET_REF_LOOP: &str = r#"
vm.module @refs version 0
vm.type i32
vm.type !vm.buffer
vm.type !vm.list<!vm.buffer>
vm.type !vm.list<i32>
vm.export @fill
vm.export @into_values
vm.func @fill(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %i4 = vm.const.i32 16
  %i36:37 = vm.const.i64 4
  %r0 = vm.list.alloc %i0 : !vm.list<!vm.buffer>
  vm.list.resize %r0, %i0
  %r1 = vm.buffer.alloc %i36:37, %i4
  vm.br ^bb1(%i2->%i7)
^bb1:
  %i8 = vm.cmp.lt.i32.s %i7, %i0
  vm.cond_br %i8, ^bb2(), ^bb4()
^bb2:
  %i9 = vm.cmp.eq.i32 %i7, %i1
  vm.cond_br %i9, ^bb3(), ^bb5()
^bb3:
  vm.list.set.ref %r0, %i7, %r0
  vm.br ^bb5()
^bb5:
  vm.list.set.ref %r0, %i7, %r1
  %i7 = vm.add.i32 %i7, %i3
  vm.br ^bb1()
^bb4:
  %i10 = vm.sub.i32 %i0, %i3
  %r2 = vm.list.get.ref %r0, %i10 : !vm.buffer
  %i11 = vm.cmp.nz.ref %r2
  vm.return %i11
}
vm.func @into_values() -> (i32) {
^bb0:
  %i0 = vm.const.i32 4
  %i32:33 = vm.const.i64 4
  %r0 = vm.list.alloc %i0 : !vm.list<i32>
  vm.list.resize %r0, %i0
  %r1 = vm.buffer.alloc %i32:33, %i0
  %i3 = vm.const.i32 1
  vm.list.set.ref %r0, %i3, %r1
  vm.return %i3
}
"#;

#[test]
fn setting_refs_into_a_list_runs_compiled_as_interpreted() {
    // 100,000 sets stay in compiled code (before, each left it); a list
    // set into a list of buffers traps at iteration 3 (interpreted in
    // Auto) and 60,000 (compiled); a buffer set into a list of values.
    let run = |engine, name: &str, args: &[Value]| {
        let mut ctx = context_of(SET_REF_LOOP, engine);
        let got = call(&mut ctx, name, args);
        (got, ctx.compiled_entries())
    };
    let cases: Vec<(&str, Vec<Value>)> = vec![
        ("fill", vec![Value::I32(100_000), Value::I32(-1)]),
        ("fill", vec![Value::I32(100_000), Value::I32(3)]),
        ("fill", vec![Value::I32(100_000), Value::I32(60_000)]),
        ("into_values", vec![]),
    ];
    for (name, args) in cases {
        let (want, _) = run(Tier::Interp, name, &args);
        match &want {
            Ok(v) => assert_eq!(v, "[I32(1)]"),
            Err(e) => assert!(
                e.contains("source ref type mismatch") || e.contains("list cannot store refs"),
                "{e}"
            ),
        }
        for engine in [Tier::Jit, Tier::Auto] {
            let (got, entries) = run(engine, name, &args);
            assert_eq!(got, want, "{name}{args:?} on {engine}");
            if want.is_ok() && Tier::compiler_available() {
                // Jit: the start, and after the `vm.buffer.alloc` (which
                // the interpreter runs).
                assert!(entries <= 2, "{entries} entries on {engine}");
            }
        }
    }
}

/// `cycles.make(n)`: `n` variant lists, each holding itself (a cycle that
/// only the context's collector reclaims), allocated in a loop.
const SELF_CYCLES: &str = r#"
vm.module @cycles version 0
vm.export @make
vm.func @make(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3)
^bb1:
  %i4 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i4, ^bb2(), ^bb3()
^bb2:
  %r0 = vm.list.alloc %i2 : !vm.list<?>
  vm.list.resize %r0, %i2
  vm.list.set.ref %r0, %i1, %r0
  %i3 = vm.add.i32 %i3, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i3
}
"#;

#[test]
fn a_variant_list_allocated_in_compiled_code_stays_there_and_is_tracked() {
    // Before, `helpers::list_alloc` left every list that may hold lists to
    // the interpreter (the context's cycle tracker was out of compiled
    // code's reach): Jit left compiled code and came back each pass. Now
    // it tracks them itself: the collections (at each doubling of the
    // tracked lists, and the last one asked for here) reclaim the same
    // lists as the interpreter's.
    let n = 10_000;
    let mut interp = context_of(SELF_CYCLES, Tier::Interp);
    assert_eq!(
        call(&mut interp, "make", &[Value::I32(n)]).unwrap(),
        "[I32(10000)]"
    );
    let left = interp.collect_cycles();
    assert!(left > 0, "{left}");
    for engine in [Tier::Jit, Tier::Auto] {
        let mut ctx = context_of(SELF_CYCLES, engine);
        let got = call(&mut ctx, "make", &[Value::I32(n)]).unwrap();
        assert_eq!(got, "[I32(10000)]", "{engine}");
        assert_eq!(ctx.collect_cycles(), left, "{engine}");
        if Tier::compiler_available() {
            let entries = ctx.compiled_entries();
            assert!(
                entries == 1,
                "{entries} entries into compiled code on {engine}"
            );
        }
    }
}
