//! Calls in and out of compiled code: whatever the engine, everything an
//! embedder can observe of calls is what the interpreter gives: results
//! (i32, i64, f64 and ref arguments and results, several results),
//! traps three calls deep and their backtraces, stack limits (depth and
//! bytes, through the API and `irvm run`), fuel, interrupts and deadlines
//! during a recursion, host imports and callees that cannot be compiled.
//! Calls within a module stay in compiled code (docs/PERFORMANCE.md,
//! "Compiled calls"); these pin what such a call must keep.

use std::time::{Duration, Instant};

use irvm::{Context, Limits, Module, NativeModule, StatusCode, Tier, TypeRegistry, Value};

use crate::common::cli::irvm;

const SOURCE: &str = r#"
vm.module @calls version 0
vm.import @env.twice cconv "0i_i"
vm.export @fib
vm.export @down
vm.export @divide_deep
vm.export @mixed_loop
vm.export @buffer_calls
vm.export @host_calls
vm.export @uncompiled_calls
vm.func @fib(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 2
  %i2 = vm.cmp.lt.i32.s %i0, %i1
  vm.cond_br %i2, ^bb1(), ^bb2()
^bb1:
  vm.return %i0
^bb2:
  %i3 = vm.const.i32 1
  %i4 = vm.sub.i32 %i0, %i3
  %i4 = vm.call @fib(%i4)
  %i5 = vm.sub.i32 %i0, %i1
  %i5 = vm.call @fib(%i5)
  %i4 = vm.add.i32 %i4, %i5
  vm.return %i4
}
vm.func @down(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.cmp.nz.i32 %i0
  vm.cond_br %i1, ^bb2(), ^bb1()
^bb1:
  vm.return %i0
^bb2:
  %i2 = vm.const.i32 1
  %i3 = vm.sub.i32 %i0, %i2
  %i3 = vm.call @down(%i3)
  %i3 = vm.add.i32 %i3, %i2
  vm.return %i3
}
vm.func @leaf(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 1000
  %i2 = vm.div.i32.s %i1, %i0
  vm.return %i2
}
vm.func @inner(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @leaf(%i0)
  %i1 = vm.add.i32 %i1, %i1
  vm.return %i1
}
vm.func @middle(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @inner(%i0)
  %i2 = vm.const.i32 1
  %i1 = vm.add.i32 %i1, %i2
  vm.return %i1
}
vm.func @divide_deep(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  vm.br ^bb1(%i2->%i4, %i2->%i5)
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb3()
^bb2:
  %i7 = vm.sub.i32 %i1, %i4
  %i7 = vm.call @middle(%i7)
  %i5 = vm.add.i32 %i5, %i7
  %i4 = vm.add.i32 %i4, %i3
  vm.br ^bb1()
^bb3:
  vm.return %i5
}
vm.func @mixed(%i0:1: i64, %i2:3: f64, %i4: i32) -> (i64, f64, i32) {
^bb0:
  %i5 = vm.cmp.nz.i32 %i4
  vm.cond_br %i5, ^bb2(), ^bb1()
^bb1:
  vm.return %i0:1, %i2:3, %i4
^bb2:
  %i6 = vm.const.i32 1
  %i7 = vm.sub.i32 %i4, %i6
  %i8:9 = vm.const.i64 3
  %i10:11 = vm.add.i64 %i0:1, %i8:9
  %i12:13 = vm.const.f64 1.5
  %i14:15 = vm.mul.f64 %i2:3, %i12:13
  %i16:17, %i18:19, %i20 = vm.call @mixed(%i10:11, %i14:15, %i7)
  %i16:17 = vm.add.i64 %i16:17, %i0:1
  %i18:19 = vm.add.f64 %i18:19, %i2:3
  %i20 = vm.add.i32 %i20, %i4
  vm.return %i16:17, %i18:19, %i20
}
vm.func @mixed_loop(%i0: i32) -> (i64, f64, i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 4
  %i4:5 = vm.const.i64.zero
  %i6:7 = vm.const.f64.zero
  vm.br ^bb1(%i1->%i8, %i1->%i9)
^bb1:
  %i10 = vm.cmp.lt.i32.s %i8, %i0
  vm.cond_br %i10, ^bb2(), ^bb3()
^bb2:
  %i12:13 = vm.ext.i32.i64.s %i8
  %i14:15 = vm.cast.si32.f64 %i8
  %i16:17, %i18:19, %i20 = vm.call @mixed(%i12:13, %i14:15, %i3)
  %i4:5 = vm.xor.i64 %i4:5, %i16:17
  %i6:7 = vm.add.f64 %i6:7, %i18:19
  %i9 = vm.add.i32 %i9, %i20
  %i8 = vm.add.i32 %i8, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i4:5, %i6:7, %i9
}
vm.func @put(%r0: !vm.buffer, %i0:1: i64, %i2: i32) -> () {
^bb0:
  vm.buffer.store.i32 %i2, %r0, %i0:1
  vm.return
}
vm.func @get(%r0: !vm.buffer, %i0:1: i64) -> (i32) {
^bb0:
  %i2 = vm.buffer.load.i32 %r0, %i0:1
  vm.return %i2
}
vm.func @same(%r0: !vm.buffer) -> (!vm.buffer) {
^bb0:
  vm.return %r0
}
vm.func @buffer_calls(%i0: i32) -> (i32) {
^bb0:
  %i32:33 = vm.ext.i32.i64.s %i0
  %i34:35 = vm.const.i64 4
  %i32:33 = vm.mul.i64 %i32:33, %i34:35
  %i5 = vm.const.i32 16
  %r0 = vm.buffer.alloc %i32:33, %i5
  %i6 = vm.const.i32.zero
  %i7 = vm.const.i32 1
  vm.br ^bb1(%i6->%i8)
^bb1:
  %i9 = vm.cmp.lt.i32.s %i8, %i0
  vm.cond_br %i9, ^bb2(), ^bb3(%i6->%i8, %i6->%i14)
^bb2:
  %i10:11 = vm.ext.i32.i64.s %i8
  %i12 = vm.mul.i32 %i8, %i8
  vm.call @put(%r0, %i10:11, %i12)
  %i8 = vm.add.i32 %i8, %i7
  vm.br ^bb1()
^bb3:
  %i9 = vm.cmp.lt.i32.s %i8, %i0
  vm.cond_br %i9, ^bb4(), ^bb5()
^bb4:
  %i10:11 = vm.ext.i32.i64.s %i8
  %r1 = vm.call @same(%r0)
  %i12 = vm.call @get(%r1, %i10:11)
  %i14 = vm.xor.i32 %i14, %i12
  %i8 = vm.add.i32 %i8, %i7
  vm.br ^bb3()
^bb5:
  vm.return %i14
}
vm.func @inc(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 1
  %i0 = vm.add.i32 %i0, %i1
  vm.return %i0
}
vm.func @host_calls(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  vm.br ^bb1(%i1->%i3, %i1->%i4)
^bb1:
  %i5 = vm.cmp.lt.i32.s %i3, %i0
  vm.cond_br %i5, ^bb2(), ^bb3()
^bb2:
  %i6 = vm.call @inc(%i3)
  %i6 = vm.call @env.twice(%i6)
  %i4 = vm.add.i32 %i4, %i6
  %i3 = vm.add.i32 %i3, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i4
}
vm.func @length_plus(%r0: !vm.buffer, %i0: i32) -> (i32) {
^bb0:
  %i32:33 = vm.buffer.length %r0
  %i3 = vm.trunc.i64.i32 %i32:33
  %i3 = vm.add.i32 %i3, %i0
  vm.return %i3
}
vm.func @uncompiled_calls(%i0: i32) -> (i32) {
^bb0:
  %i32:33 = vm.const.i64 12
  %i3 = vm.const.i32 16
  %r0 = vm.buffer.alloc %i32:33, %i3
  %i4 = vm.const.i32.zero
  %i5 = vm.const.i32 1
  vm.br ^bb1(%i4->%i6, %i4->%i7)
^bb1:
  %i8 = vm.cmp.lt.i32.s %i6, %i0
  vm.cond_br %i8, ^bb2(), ^bb3()
^bb2:
  %i9 = vm.call @length_plus(%r0, %i6)
  %i9 = vm.call @inc(%i9)
  %i7 = vm.xor.i32 %i7, %i9
  %i6 = vm.add.i32 %i6, %i5
  vm.br ^bb1()
^bb3:
  vm.return %i7
}
"#;

fn context_with(engine: Tier, limits: Limits) -> Context {
    let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
    ctx.set_tier(engine);
    ctx.register_host_module(&NativeModule::new("env", 1).wrap("twice", |x: i32| 2 * x))
        .expect("host module registers");
    ctx.register_module(Module::from_assembly(SOURCE, "calls.vmasm").expect("assembles"))
        .expect("registers");
    ctx
}

fn context(engine: Tier) -> Context {
    context_with(engine, Limits::default())
}

/// `name(args)` in module `calls`: its results or its trap.
fn outcome(ctx: &mut Context, name: &str, args: &[Value]) -> String {
    outcome_in(ctx, "calls", name, args)
}

/// `name(args)` in `module`: its results, or its trap with its backtrace.
fn outcome_in(ctx: &mut Context, module: &str, name: &str, args: &[Value]) -> String {
    let f = ctx.function(&format!("{module}.{name}")).expect("exported");
    match ctx.invoke(&f, args) {
        Ok(v) => format!("{v:?}"),
        // The trap's text names each frame (runs of one frame folded).
        Err(t) => format!("{t} ({} frames)", t.backtrace.len()),
    }
}

const COMPILED: [Tier; 2] = [Tier::Jit, Tier::Auto];

/// Calls `module.name(args)` `rounds` times in a context `make` makes for
/// each compiled engine, asserting each call's outcome is `want` (later
/// rounds find what the first compiled); returns the contexts, engine by
/// engine, for what a test checks after.
fn same_in_compiled_engines(
    make: impl Fn(Tier) -> Context,
    (module, name, args): (&str, &str, &[Value]),
    rounds: usize,
    want: &str,
    case: &str,
) -> Vec<(Tier, Context)> {
    COMPILED
        .into_iter()
        .map(|engine| {
            let mut ctx = make(engine);
            for round in 0..rounds {
                assert_eq!(
                    outcome_in(&mut ctx, module, name, args),
                    want,
                    "{case} on {engine}, round {round}"
                );
            }
            (engine, ctx)
        })
        .collect()
}

#[test]
fn calls_give_the_interpreters_results_in_every_engine() {
    let cases: [(&str, Vec<Value>); 6] = [
        ("fib", vec![Value::I32(24)]),
        ("down", vec![Value::I32(5_000)]),
        ("mixed_loop", vec![Value::I32(30_000)]),
        ("buffer_calls", vec![Value::I32(30_000)]),
        ("host_calls", vec![Value::I32(30_000)]),
        ("uncompiled_calls", vec![Value::I32(30_000)]),
    ];
    for (name, args) in cases {
        let want = outcome(&mut context(Tier::Interp), name, &args);
        assert!(want.starts_with('['), "{name}: {want}");
        // Twice: the second call finds what was compiled.
        let ran = same_in_compiled_engines(context, ("calls", name, &args), 2, &want, name);
        for (engine, ctx) in ran {
            if Tier::compiler_available() && engine == Tier::Jit {
                assert!(ctx.compiled_functions().0 > 0, "{name} on {engine}");
            }
        }
    }
}

#[test]
fn a_trap_three_calls_deep_has_the_interpreters_backtrace() {
    // `divide_deep` calls `middle`, `middle` calls `inner`, `inner` calls
    // `leaf`, which divides by zero at iteration `k`: early, and after
    // 50,000 iterations, when Auto has compiled what it compiles.
    for k in [2, 50_000] {
        let args = [Value::I32(100_000), Value::I32(k)];
        let want = outcome(&mut context(Tier::Interp), "divide_deep", &args);
        assert!(
            want.contains("division by zero")
                && want.contains("(4 frames)")
                && want.contains("calls.divide_deep+"),
            "{want}"
        );
        for engine in COMPILED {
            let got = outcome(&mut context(engine), "divide_deep", &args);
            assert_eq!(got, want, "k = {k} on {engine}");
        }
    }
}

#[test]
fn deep_recursion_meets_the_same_stack_limits_in_every_tier() {
    let depth = Limits {
        max_stack_depth: 5_000,
        ..Limits::default()
    };
    let bytes = Limits {
        max_stack_bytes: 100_000,
        ..Limits::default()
    };
    for limits in [depth, bytes] {
        let fails = [Value::I32(1_000_000)];
        let want = outcome(&mut context_with(Tier::Interp, limits), "down", &fails);
        assert!(want.contains("VM stack overflow"), "{want}");
        for engine in COMPILED {
            let mut ctx = context_with(engine, limits);
            // Warm up (20,500 calls, past Auto's threshold), then
            // overflow, twice: the context stays usable.
            for _ in 0..41 {
                assert_eq!(outcome(&mut ctx, "down", &[Value::I32(500)]), "[I32(500)]");
            }
            for round in 0..2 {
                assert_eq!(
                    outcome(&mut ctx, "down", &fails),
                    want,
                    "{engine}, round {round}"
                );
            }
        }
    }
}

#[test]
fn compiled_recursion_on_a_small_thread_stack_stays_inside_it() {
    // An embedder's thread with 128 KiB of stack (Python's
    // `threading.stack_size` goes down to 32 KiB): nested compiled calls
    // must leave for the interpreter before they reach its end, not 256 KiB
    // below where they started (which overflowed it), and Jit's compiles,
    // made on the calling thread, move to a thread of their own (Cranelift
    // overflowed such a stack in a debug build).
    let want = outcome(&mut context(Tier::Interp), "down", &[Value::I32(4_000)]);
    assert_eq!(want, "[I32(4000)]");
    for engine in [Tier::Interp, Tier::Jit, Tier::Auto] {
        let got = std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn(move || {
                let mut ctx = context(engine);
                (0..3)
                    .map(|_| outcome(&mut ctx, "down", &[Value::I32(4_000)]))
                    .collect::<Vec<_>>()
            })
            .expect("thread starts")
            .join()
            .expect("no stack overflow");
        assert!(got.iter().all(|g| *g == want), "{engine}: {got:?}");
    }
}

#[test]
fn the_cli_stack_depth_limit_reads_the_same_in_every_engine() {
    let dir = tempfile::tempdir().expect("temp dir");
    let module = dir.path().join("calls.vmasm");
    // The module without its host import.
    let text = SOURCE
        .replace("vm.import @env.twice cconv \"0i_i\"\n", "")
        .replace("  %i6 = vm.call @env.twice(%i6)\n", "");
    std::fs::write(&module, text).expect("writes");
    let m = format!("--module={}", module.display());
    let run = |engine: &str| {
        irvm(&[
            "run",
            &m,
            "--function=down",
            "--input=100000",
            "--max-stack-depth=30000",
            &format!("--engine={engine}"),
        ])
    };
    let (out, err, code) = run("interp");
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("VM stack overflow"), "{err}");
    for engine in ["jit", "auto"] {
        assert_eq!(run(engine), (out.clone(), err.clone(), code), "{engine}");
    }
}

/// What `fib(n)` did with `fuel`: its result or trap, and the fuel left.
fn fib_with_fuel(engine: Tier, observed: bool, fuel: u64, n: i32) -> (String, Option<u64>) {
    let mut ctx = context(engine);
    if observed {
        // An observer runs the hooked loop: fuel one instruction at a
        // time, the reference for the others.
        ctx.set_observer(Some(Box::new(Watch)));
    }
    ctx.set_fuel(Some(fuel));
    (outcome(&mut ctx, "fib", &[Value::I32(n)]), ctx.fuel())
}

struct Watch;

impl irvm::Observer for Watch {
    fn before_instruction(&mut self, _: &irvm::ExecView<'_>) -> irvm::Control {
        irvm::Control::Continue
    }
}

#[test]
fn fuel_runs_out_at_the_same_instruction_through_calls() {
    let n = 12;
    let (done, left) = fib_with_fuel(Tier::Interp, true, 1 << 30, n);
    assert_eq!(done, "[I32(144)]");
    let cost = (1 << 30) - left.expect("fuel set");
    let mut fuels: Vec<u64> = (0..30).collect();
    fuels.extend([cost / 3, cost / 2 + 1, cost - 1, cost, cost + 1]);
    for fuel in fuels {
        let want = fib_with_fuel(Tier::Interp, true, fuel, n);
        for engine in [Tier::Interp, Tier::Jit, Tier::Auto] {
            assert_eq!(
                fib_with_fuel(engine, false, fuel, n),
                want,
                "fuel {fuel} (the call costs {cost}) on {engine}"
            );
        }
    }
}

#[test]
fn fuel_runs_out_at_the_same_instruction_deep_in_a_recursion() {
    // Costs past a slice of fuel (`exec::dispatch::SLICE`, 2^18): the
    // fuel-counting copy's calls nest deep in compiled code, and both the
    // slice and the fuel run out inside callees, at many depths.
    let n = 22;
    let (done, left) = fib_with_fuel(Tier::Interp, true, 1 << 40, n);
    assert_eq!(done, "[I32(17711)]");
    let cost = (1 << 40) - left.expect("fuel set");
    assert!(cost > 1 << 18, "fib({n}) costs {cost}");
    for fuel in [
        cost - 1,
        cost,
        cost / 2,
        (1 << 18) - 1,
        1 << 18,
        (1 << 18) + 1,
        12_345,
        cost - 7_777,
    ] {
        let want = fib_with_fuel(Tier::Interp, true, fuel, n);
        for engine in [Tier::Interp, Tier::Jit, Tier::Auto] {
            assert_eq!(
                fib_with_fuel(engine, false, fuel, n),
                want,
                "fuel {fuel} (the call costs {cost}) on {engine}"
            );
        }
    }
}

#[test]
fn an_interrupt_stops_a_recursion_in_every_engine() {
    for engine in [Tier::Interp, Tier::Jit, Tier::Auto] {
        let mut ctx = context(engine);
        // Warmed up first, then a recursion of minutes, interrupted.
        assert_eq!(outcome(&mut ctx, "fib", &[Value::I32(22)]), "[I32(17711)]");
        let handle = ctx.interrupt_handle();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            handle.interrupt();
        });
        let f = ctx.function("calls.fib").expect("exported");
        let t0 = Instant::now();
        let e = ctx.invoke(&f, &[Value::I32(60)]).unwrap_err();
        stopper.join().expect("joins");
        assert_eq!(e.code, StatusCode::Cancelled, "{engine}: {e}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{engine}");
        assert_eq!(e.backtrace.last().map(|b| b.function.as_str()), Some("fib"));
        // The context goes on.
        assert_eq!(outcome(&mut ctx, "fib", &[Value::I32(20)]), "[I32(6765)]");
        // A deadline stops it too.
        ctx.set_deadline(Some(Instant::now() + Duration::from_millis(100)));
        let e = ctx.invoke(&f, &[Value::I32(60)]).unwrap_err();
        assert_eq!(e.code, StatusCode::DeadlineExceeded, "{engine}: {e}");
    }
}

/// What calls made inside compiled code newly risk: stacks that must grow
/// part-way through a recursion, a callee compiled after its caller, and
/// every number type through the call and its return.
const INLINE_SOURCE: &str = r#"
vm.module @inline version 0
vm.export @wide_down
vm.export @typed_loop
vm.export @late_callee
vm.func @wide_down(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.cmp.nz.i32 %i0
  vm.cond_br %i1, ^bb2(), ^bb1()
^bb1:
  vm.return %i0
^bb2:
  %i2 = vm.const.i32 1
  %i47 = vm.sub.i32 %i0, %i2
  %i47 = vm.call @wide_down(%i47)
  %i47 = vm.add.i32 %i47, %i0
  vm.return %i47
}
vm.func @typed(%i0: i32, %i1: f32, %i2:3: i64, %i4:5: f64) -> (f64, i32, i64, f32) {
^bb0:
  %i6 = vm.const.i32 3
  %i7 = vm.mul.i32 %i0, %i6
  %i8 = vm.const.f32 0.5
  %i9 = vm.mul.f32 %i1, %i8
  %i10:11 = vm.const.i64 -1000000007
  %i12:13 = vm.mul.i64 %i2:3, %i10:11
  %i14:15 = vm.const.f64 2.25
  %i16:17 = vm.add.f64 %i4:5, %i14:15
  vm.return %i16:17, %i7, %i12:13, %i9
}
vm.func @typed_loop(%i0: i32) -> (f64, i32, i64, f32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i4:5 = vm.const.i64.zero
  %i6:7 = vm.const.f64.zero
  %i20 = vm.const.f32 0.0
  vm.br ^bb1(%i1->%i8, %i1->%i9)
^bb1:
  %i10 = vm.cmp.lt.i32.s %i8, %i0
  vm.cond_br %i10, ^bb2(), ^bb3()
^bb2:
  %i11 = vm.cast.si32.f32 %i8
  %i12:13 = vm.ext.i32.i64.s %i8
  %i14:15 = vm.cast.si32.f64 %i8
  %i16:17, %i18, %i22:23, %i19 = vm.call @typed(%i8, %i11, %i12:13, %i14:15)
  %i6:7 = vm.add.f64 %i6:7, %i16:17
  %i9 = vm.xor.i32 %i9, %i18
  %i4:5 = vm.add.i64 %i4:5, %i22:23
  %i20 = vm.add.f32 %i20, %i19
  %i8 = vm.add.i32 %i8, %i2
  vm.br ^bb1()
^bb3:
  vm.return %i6:7, %i9, %i4:5, %i20
}
vm.func @late_leaf(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32 7
  %i2 = vm.mul.i32 %i0, %i1
  %i2 = vm.xor.i32 %i2, %i0
  vm.return %i2
}
vm.func @late_callee(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  vm.br ^bb1(%i2->%i4, %i2->%i5)
^bb1:
  %i6 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i6, ^bb2(), ^bb5()
^bb2:
  %i7 = vm.cmp.lt.i32.s %i4, %i1
  vm.cond_br %i7, ^bb3(), ^bb4()
^bb3:
  %i5 = vm.add.i32 %i5, %i4
  %i4 = vm.add.i32 %i4, %i3
  vm.br ^bb1()
^bb4:
  %i8 = vm.call @late_leaf(%i4)
  %i5 = vm.add.i32 %i5, %i8
  %i4 = vm.add.i32 %i4, %i3
  vm.br ^bb1()
^bb5:
  vm.return %i5
}
"#;

fn inline_context(engine: Tier) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(engine);
    ctx.register_module(Module::from_assembly(INLINE_SOURCE, "inline.vmasm").expect("assembles"))
        .expect("registers");
    ctx
}

#[test]
fn a_recursion_that_outgrows_the_stacks_part_way_gives_the_interpreters_result() {
    // 48 registers a frame: the register and frame stacks start small and
    // must grow (outside compiled code) many times on the way down, in a
    // fresh context each time; then again with the stacks grown.
    // The last reaches the default stack byte limit (1 MiB, 320 bytes a
    // frame) part-way.
    for n in [100, 1_000, 3_000, 5_000] {
        let args = [Value::I32(n)];
        let want = outcome_in(
            &mut inline_context(Tier::Interp),
            "inline",
            "wide_down",
            &args,
        );
        if n <= 3_000 {
            assert_eq!(want, format!("[I32({})]", n * (n + 1) / 2));
        } else {
            assert!(want.contains("VM stack overflow"), "{want}");
        }
        let call = ("inline", "wide_down", &args[..]);
        same_in_compiled_engines(inline_context, call, 3, &want, &format!("n = {n}"));
    }
}

#[test]
fn every_number_type_passes_through_a_compiled_call_and_its_return() {
    for n in [3, 30_000] {
        let args = [Value::I32(n)];
        let want = outcome_in(
            &mut inline_context(Tier::Interp),
            "inline",
            "typed_loop",
            &args,
        );
        assert!(want.starts_with("[F64("), "{want}");
        let call = ("inline", "typed_loop", &args[..]);
        same_in_compiled_engines(inline_context, call, 2, &want, &format!("n = {n}"));
    }
}

#[test]
fn a_callee_compiled_after_its_caller_is_called_from_compiled_code() {
    // The loop runs 30,000 times before its first call: Auto compiles the
    // caller while the callee has never run; the callee gets hot through
    // the calls the interpreter makes for the compiled caller, and is
    // called from compiled code once compiled.
    let args = [Value::I32(100_000), Value::I32(30_000)];
    let want = outcome_in(
        &mut inline_context(Tier::Interp),
        "inline",
        "late_callee",
        &args,
    );
    let call = ("inline", "late_callee", &args[..]);
    for (engine, ctx) in same_in_compiled_engines(inline_context, call, 2, &want, "late_callee") {
        if Tier::compiler_available() {
            assert_eq!(ctx.compiled_functions().0, 2, "{engine}");
        }
    }
}

#[test]
fn a_loop_that_calls_from_its_first_pass_stays_in_compiled_code() {
    // Every pass calls the leaf. The leaf's first calls are the
    // interpreter's (it is not compiled yet when the caller's code first
    // reaches the call), and the interpreter makes their returns; the
    // caller must then go back to compiled code at its next back edge and
    // call the leaf from there. Before session 18 it did not: on `Jit` the
    // instruction after an entry was still to be interpreted at the back
    // edge, on `Auto` the leaf's "no loops here" was kept for the caller's
    // loop, and either way the loop ran in the interpreter to its end,
    // entering the leaf's code once a pass (10x slower than `Interp`).
    let args = [Value::I32(100_000), Value::I32(0)];
    let want = outcome_in(
        &mut inline_context(Tier::Interp),
        "inline",
        "late_callee",
        &args,
    );
    let mut entries = Vec::new();
    for engine in COMPILED {
        let mut ctx = inline_context(engine);
        assert_eq!(
            outcome_in(&mut ctx, "inline", "late_callee", &args),
            want,
            "{engine}"
        );
        entries.push((engine, ctx.compiled_entries()));
    }
    if Tier::compiler_available() {
        // A few entries at the start (the caller, the leaf while it is not
        // callable yet), none a pass.
        assert!(
            entries.iter().all(|&(_, n)| n < 1_000),
            "entries into compiled code: {entries:?}"
        );
    }
}

#[test]
fn contexts_of_one_module_share_its_code_and_each_calls_its_own_functions() {
    // One module in two contexts, one after the other: the first compiles
    // the hot functions, the second links that code with its own callees'
    // addresses instead of compiling again. The first is dropped before
    // the second runs, so code that still pointed at the first's
    // functions (their entry cells, the frame records' function) would
    // read freed memory; the second's results and its trap's backtrace
    // three calls deep must be the interpreter's.
    let deep = [Value::I32(100_000), Value::I32(50_000)];
    let want_fib = outcome(&mut context(Tier::Interp), "fib", &[Value::I32(24)]);
    let want_trap = outcome(&mut context(Tier::Interp), "divide_deep", &deep);
    let brief = outcome(&mut context(Tier::Interp), "fib", &[Value::I32(3)]);
    for engine in COMPILED {
        let module = Module::from_assembly(SOURCE, "calls.vmasm").expect("assembles");
        let make = |module: Module| {
            let mut ctx = Context::new(&TypeRegistry::new());
            ctx.set_tier(engine);
            ctx.register_host_module(&NativeModule::new("env", 1).wrap("twice", |x: i32| 2 * x))
                .expect("host module registers");
            ctx.register_module(module).expect("registers");
            ctx
        };
        let mut first = make(module.clone());
        assert_eq!(outcome(&mut first, "fib", &[Value::I32(24)]), want_fib);
        assert_eq!(outcome(&mut first, "divide_deep", &deep), want_trap);
        let compiled = first.compiled_functions().0;
        drop(first);
        let mut second = make(module);
        // A call too brief to make anything hot finds fib's code.
        assert_eq!(outcome(&mut second, "fib", &[Value::I32(3)]), brief);
        if Tier::compiler_available() {
            assert!(compiled >= 2, "{engine}: {compiled} compiled in the first");
            assert!(
                second.compiled_functions().0 >= 1,
                "{engine}: the second context linked nothing"
            );
        }
        assert_eq!(
            outcome(&mut second, "fib", &[Value::I32(24)]),
            want_fib,
            "{engine}"
        );
        assert_eq!(
            outcome(&mut second, "divide_deep", &deep),
            want_trap,
            "{engine}"
        );
    }
}

/// `name(args)` of module `inline` run with `fuel` (through the hooked
/// loop when `observed`): its results or trap, the fuel left, and how
/// often compiled code was entered.
fn inline_with_fuel(
    engine: Tier,
    observed: bool,
    fuel: u64,
    name: &str,
    args: &[Value],
) -> (String, Option<u64>, u64) {
    let mut ctx = inline_context(engine);
    if observed {
        ctx.set_observer(Some(Box::new(Watch)));
    }
    ctx.set_fuel(Some(fuel));
    let done = outcome_in(&mut ctx, "inline", name, args);
    (done, ctx.fuel(), ctx.compiled_entries())
}

#[test]
fn calls_in_code_that_counts_fuel_stay_compiled_and_charge_as_the_interpreter() {
    // The fuel-counting copy of compiled code makes its calls itself (it
    // left at every call before session 19: fib with fuel was 8x slower
    // than without). It must charge exactly what the interpreter charges:
    // the call's unit and the callee's first run, the return's unit and
    // the run after the call, so that fuel runs out at the same
    // instruction wherever it runs out, in a caller or a callee, at any
    // depth, with every number type passing through.
    let cases: [(&str, Vec<Value>); 3] = [
        ("late_callee", vec![Value::I32(60_000), Value::I32(20_000)]),
        ("typed_loop", vec![Value::I32(20_000)]),
        ("wide_down", vec![Value::I32(2_000)]),
    ];
    for (name, args) in &cases {
        let (done, left, _) = inline_with_fuel(Tier::Interp, true, 1 << 40, name, args);
        assert!(done.starts_with('['), "{name}: {done}");
        let cost = (1 << 40) - left.expect("fuel set");
        let mut fuels = vec![cost - 1, cost, cost + 1, cost / 2, cost / 3 + 1, 1, 2, 3];
        fuels.extend([(1 << 18) - 1, 1 << 18, (1 << 18) + 1].map(|f| f.min(cost - 2)));
        for fuel in fuels {
            let (want, want_left, _) = inline_with_fuel(Tier::Interp, true, fuel, name, args);
            for engine in [Tier::Interp, Tier::Jit, Tier::Auto] {
                let (got, got_left, _) = inline_with_fuel(engine, false, fuel, name, args);
                assert_eq!(
                    (&got, got_left),
                    (&want, want_left),
                    "{name} with fuel {fuel} (it costs {cost}) on {engine}"
                );
            }
        }
        if Tier::compiler_available() {
            // With fuel to spare, the loops and recursions run in compiled
            // code: a few entries (the start, each slice's end), not one
            // a call. (The second run: `Auto` compiles a function without
            // loops once its calls made it hot, after 20,000.)
            for engine in COMPILED {
                let mut ctx = inline_context(engine);
                ctx.set_fuel(Some(1 << 40));
                let first = outcome_in(&mut ctx, "inline", name, args);
                let before = ctx.compiled_entries();
                assert_eq!(outcome_in(&mut ctx, "inline", name, args), first);
                let entries = ctx.compiled_entries() - before;
                assert!(
                    entries < 200,
                    "{name} on {engine}: {entries} entries into compiled code"
                );
            }
        }
    }
}
