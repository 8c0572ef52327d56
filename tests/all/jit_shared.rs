//! The contexts of one module share each function's compiled code
//! (`jit::SharedCode`): whatever the order, threads, engines, limits and
//! budgets of those contexts, each gets the interpreter's results, and a
//! function one context stopped compiling (dropped, refused for want of
//! memory) is still compiled by another. A module loaded twice shares
//! nothing.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use irvm::{Context, Limits, Module, Tier, TypeRegistry, Value};

/// `sum(n)`: `n` passes of a loop of `body` additions over `regs`
/// registers (3 and up), then the sum of the first 32. With `body` 400
/// and `regs` 40 it is too large to compile on the calling thread: with
/// `Tier::Auto` it compiles in the background.
fn wide(body: usize, regs: u16) -> String {
    let mut s = String::from(
        "vm.module @m version 0\nvm.export @sum\nvm.func @sum(%i0: i32) -> (i32) {\n\
         ^bb0:\n  %i1 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n",
    );
    for k in 0..body {
        let (d, a, b) = (
            3 + (k * 7) % (regs as usize - 3),
            3 + k % (regs as usize - 3),
            3 + (k * 13 + 5) % (regs as usize - 3),
        );
        s.push_str(&format!(
            "  %i{d} = vm.add.i32 %i{a}, %i{b}\n  %i{d} = vm.add.i32 %i{d}, %i1\n"
        ));
    }
    s.push_str(
        "  %i0 = vm.sub.i32 %i0, %i1\n  %i2 = vm.cmp.nz.i32 %i0\n  \
         vm.cond_br %i2, ^bb1(), ^bb2()\n^bb2:\n  %i2 = vm.const.i32.zero\n",
    );
    for r in 3..regs.min(35) {
        s.push_str(&format!("  %i2 = vm.add.i32 %i2, %i{r}\n"));
    }
    s.push_str("  vm.return %i2\n}\n");
    s
}

/// A function large enough to compile in the background (`Tier::Auto`).
fn background_sized() -> String {
    wide(400, 40)
}

fn context_of(module: &Module, tier: Tier, limits: Limits) -> Context {
    let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
    ctx.set_tier(tier);
    ctx.register_module(module.clone()).expect("registers");
    ctx
}

fn sum(ctx: &mut Context, n: i32) -> Result<i32, String> {
    let f = ctx.function("m.sum").expect("exported");
    match ctx.invoke(&f, &[Value::I32(n)]) {
        Ok(v) => match v[..] {
            [Value::I32(v)] => Ok(v),
            ref other => panic!("{other:?}"),
        },
        Err(t) => Err(t.to_string()),
    }
}

/// Runs `sum(n)` in `ctx` until its function is compiled (or a minute has
/// passed): whether it was.
fn compiles_within_a_minute(ctx: &mut Context, n: i32, want: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        assert_eq!(sum(ctx, n), Ok(want));
        if ctx.compiled_functions().0 > 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn many_threads_make_one_modules_function_hot_at_once() {
    // Eight contexts of one module, on eight threads released together,
    // half on each engine: the large function compiles in the background
    // (Auto) or on the calling thread (Jit) while the others interpret;
    // every context gets the interpreter's sums, and ends with code.
    let source = background_sized();
    let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
    let n = 20_500;
    let want = sum(&mut context_of(&module, Tier::Interp, Limits::default()), n).expect("runs");
    let start = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|k| {
            let (module, start) = (module.clone(), start.clone());
            std::thread::spawn(move || {
                let tier = if k % 2 == 0 { Tier::Auto } else { Tier::Jit };
                let mut ctx = context_of(&module, tier, Limits::default());
                start.wait();
                assert_eq!(sum(&mut ctx, n), Ok(want), "{tier}, thread {k}");
                let compiled = compiles_within_a_minute(&mut ctx, n, want);
                (tier, compiled)
            })
        })
        .collect();
    for t in threads {
        let (tier, compiled) = t.join().expect("no thread panics");
        if Tier::compiler_available() {
            assert!(compiled, "{tier}: never compiled");
        }
    }
}

/// `sum(n)`: a small loop of `n` passes (hot after 20,000 of them, in
/// little time), then `body` additions over `regs` registers once: as
/// large as [`wide`] to the compiler (`body` 400 and up: a background
/// compile), but quick to make hot.
fn lopsided(body: usize, regs: u16) -> String {
    let mut s = String::from(
        "vm.module @m version 0\nvm.export @sum\nvm.func @sum(%i0: i32) -> (i32) {\n\
         ^bb0:\n  %i1 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n  %i3 = vm.add.i32 %i3, %i0\n  \
         %i0 = vm.sub.i32 %i0, %i1\n  %i2 = vm.cmp.nz.i32 %i0\n  vm.cond_br %i2, ^bb1(), ^bb2()\n\
         ^bb2:\n",
    );
    for k in 0..body {
        let (d, a, b) = (
            3 + (k * 7) % (regs as usize - 3),
            3 + k % (regs as usize - 3),
            3 + (k * 13 + 5) % (regs as usize - 3),
        );
        s.push_str(&format!(
            "  %i{d} = vm.add.i32 %i{a}, %i{b}\n  %i{d} = vm.add.i32 %i{d}, %i1\n"
        ));
    }
    s.push_str("  %i2 = vm.const.i32.zero\n");
    for r in 3..regs.min(35) {
        s.push_str(&format!("  %i2 = vm.add.i32 %i2, %i{r}\n"));
    }
    s.push_str("  vm.return %i2\n}\n");
    s
}

#[test]
fn a_compile_given_up_by_a_dropped_context_is_made_by_another() {
    if !Tier::compiler_available() {
        return;
    }
    let n = 20_010;
    // The worker thread kept busy with other modules' compiles (their
    // contexts alive until the end), so that the dropped contexts' job
    // waits in the queue and is given up there.
    let slow = lopsided(600, 40);
    let busy: Vec<Context> = (0..4)
        .map(|_| {
            let other = Module::from_assembly(&slow, "m.vmasm").expect("assembles");
            let mut ctx = context_of(&other, Tier::Auto, Limits::default());
            sum(&mut ctx, n).expect("runs");
            ctx
        })
        .collect();
    let module = Module::from_assembly(&lopsided(400, 40), "m.vmasm").expect("assembles");
    let want = sum(&mut context_of(&module, Tier::Interp, Limits::default()), n).expect("runs");
    let mut gone = context_of(&module, Tier::Auto, Limits::default());
    // Hot at the very end of the call: its compile is queued.
    assert_eq!(sum(&mut gone, n), Ok(want));
    assert_eq!(
        gone.compiled_functions().0,
        0,
        "compiled before the busy ones"
    );
    drop(gone);
    let mut other = context_of(&module, Tier::Auto, Limits::default());
    assert!(
        compiles_within_a_minute(&mut other, n, want),
        "the function was never compiled after its first claimant went"
    );
    drop(busy);
}

#[test]
fn a_compile_refused_for_one_contexts_budget_is_made_for_another() {
    if !Tier::compiler_available() {
        return;
    }
    // The small loop's compile is charged over 1 MiB: refused in a
    // context of that budget, made in one of the default budget.
    let source = wide(4, 8);
    let tiny = Limits {
        max_memory_bytes: 1 << 20,
        ..Limits::default()
    };
    for tier in [Tier::Jit, Tier::Auto] {
        let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
        let n = 30_000;
        let want = sum(&mut context_of(&module, Tier::Interp, tiny), n).expect("runs");
        let mut small = context_of(&module, tier, tiny);
        assert_eq!(sum(&mut small, n), Ok(want));
        let left = small.functions_left_to_interpreter();
        assert_eq!(left.len(), 1, "{tier}: {left:?}");
        assert!(
            left[0].reason.to_string().contains("--max-memory-bytes"),
            "{tier}: {left:?}"
        );
        let mut roomy = context_of(&module, tier, Limits::default());
        assert!(
            compiles_within_a_minute(&mut roomy, n, want),
            "{tier}: the roomy context never compiled it"
        );
        assert!(roomy.functions_left_to_interpreter().is_empty());
        // The small one keeps its refusal, and its results.
        assert_eq!(sum(&mut small, n), Ok(want));
    }
}

#[test]
fn contexts_of_one_module_with_different_checks_each_get_their_own_copy() {
    // Plain, fuel (the copy with limits), deadline and pause flag (the
    // polled copy), on both engines, all on one module at once: results,
    // and fuel running out at the interpreter's place.
    let source = wide(12, 10);
    let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
    let n = 60_000;
    let want = sum(&mut context_of(&module, Tier::Interp, Limits::default()), n).expect("runs");
    let fuel = 700_001;
    let out_of_fuel = {
        let mut ctx = context_of(&module, Tier::Interp, Limits::default());
        ctx.set_fuel(Some(fuel));
        (sum(&mut ctx, n), ctx.fuel())
    };
    assert!(out_of_fuel.0.is_err(), "{out_of_fuel:?}");
    let start = Arc::new(Barrier::new(12));
    let threads: Vec<_> = (0..12)
        .map(|k| {
            let (module, start, out_of_fuel) = (module.clone(), start.clone(), out_of_fuel.clone());
            std::thread::spawn(move || {
                let tier = [Tier::Auto, Tier::Jit][k % 2];
                let mut ctx = context_of(&module, tier, Limits::default());
                match k / 2 % 3 {
                    0 => {}
                    1 => {
                        ctx.set_deadline(Some(Instant::now() + Duration::from_secs(3600)));
                        ctx.set_pause_flag(Some(Arc::new(std::sync::atomic::AtomicBool::new(
                            false,
                        ))));
                    }
                    _ => ctx.set_fuel(Some(u64::MAX / 2)),
                }
                start.wait();
                for round in 0..3 {
                    assert_eq!(sum(&mut ctx, n), Ok(want), "{tier}, {k}, round {round}");
                }
                // Then fuel that runs out part-way.
                ctx.set_fuel(Some(fuel));
                assert_eq!(
                    (sum(&mut ctx, n), ctx.fuel()),
                    out_of_fuel,
                    "{tier}, {k}: fuel"
                );
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panics");
    }
}

/// A module whose `hub(n)` calls `calls` small functions `n` times each,
/// in a loop, and `rec(n)` a mutual recursion through them.
fn many_callees(calls: usize) -> String {
    let mut s = String::from("vm.module @m version 0\nvm.export @hub\nvm.export @ping\n");
    for k in 0..calls {
        s.push_str(&format!(
            "vm.func @f{k}(%i0: i32) -> (i32) {{\n^bb0:\n  %i1 = vm.const.i32 {m}\n  \
             %i2 = vm.mul.i32 %i0, %i1\n  %i3 = vm.const.i32 {k}\n  \
             %i2 = vm.xor.i32 %i2, %i3\n  vm.return %i2\n}}\n",
            m = 2 * k + 1
        ));
    }
    s.push_str(
        "vm.func @hub(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32.zero\n  \
         %i2 = vm.const.i32 1\n  vm.br ^bb1(%i1->%i3, %i1->%i4)\n^bb1:\n  \
         %i5 = vm.cmp.lt.i32.s %i3, %i0\n  vm.cond_br %i5, ^bb2(), ^bb3()\n^bb2:\n",
    );
    for k in 0..calls {
        s.push_str(&format!(
            "  %i6 = vm.call @f{k}(%i3)\n  %i4 = vm.add.i32 %i4, %i6\n"
        ));
    }
    s.push_str("  %i3 = vm.add.i32 %i3, %i2\n  vm.br ^bb1()\n^bb3:\n  vm.return %i4\n}\n");
    // ping/pong: a mutual recursion that traps at the bottom when asked
    // (a division by its argument, zero there).
    s.push_str(
        "vm.func @ping(%i0: i32, %i1: i32) -> (i32) {\n^bb0:\n  %i2 = vm.cmp.nz.i32 %i0\n  \
         vm.cond_br %i2, ^bb2(), ^bb1()\n^bb1:\n  %i3 = vm.const.i32 7\n  \
         %i3 = vm.div.i32.s %i3, %i1\n  vm.return %i3\n^bb2:\n  %i4 = vm.const.i32 1\n  \
         %i5 = vm.sub.i32 %i0, %i4\n  %i5 = vm.call @pong(%i5, %i1)\n  \
         %i5 = vm.add.i32 %i5, %i0\n  vm.return %i5\n}\n\
         vm.func @pong(%i0: i32, %i1: i32) -> (i32) {\n^bb0:\n  \
         %i2 = vm.call @ping(%i0, %i1)\n  %i3 = vm.const.i32 3\n  \
         %i2 = vm.mul.i32 %i2, %i3\n  vm.return %i2\n}\n",
    );
    s
}

fn call(ctx: &mut Context, name: &str, args: &[Value]) -> String {
    let f = ctx.function(&format!("m.{name}")).expect("exported");
    match ctx.invoke(&f, args) {
        Ok(v) => format!("{v:?}"),
        Err(t) => {
            let frames: Vec<String> = t
                .backtrace
                .iter()
                .map(|f| format!("{}@{:?}", f.function, f.offset))
                .collect();
            format!("{t} [{}]", frames.join(" "))
        }
    }
}

#[test]
fn calls_to_many_functions_are_linked_to_each_contexts_own() {
    // A caller of 40 functions and a mutual recursion that traps at its
    // bottom: compiled in a first context, which is dropped; then linked
    // in others made one after the other and at once.
    let source = many_callees(40);
    let cases = [
        ("hub", vec![Value::I32(21_000)]),
        ("ping", vec![Value::I32(400), Value::I32(2)]),
        ("ping", vec![Value::I32(400), Value::I32(0)]),
    ];
    let interp = {
        let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
        let mut ctx = context_of(&module, Tier::Interp, Limits::default());
        cases
            .iter()
            .map(|(name, args)| call(&mut ctx, name, args))
            .collect::<Vec<_>>()
    };
    assert!(interp[2].contains("division by zero"), "{}", interp[2]);
    for engine in [Tier::Jit, Tier::Auto] {
        let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
        let run = |module: &Module| {
            let mut ctx = context_of(module, engine, Limits::default());
            for _ in 0..2 {
                let got: Vec<String> = cases
                    .iter()
                    .map(|(name, args)| call(&mut ctx, name, args))
                    .collect();
                assert_eq!(got, interp, "{engine}");
            }
            ctx.compiled_functions().0
        };
        let first = run(&module);
        if Tier::compiler_available() {
            // (Auto: the loop, and its callees once their calls made
            // them hot.)
            assert!(first >= 3, "{engine}: {first} compiled");
        }
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4).map(|_| scope.spawn(|| run(&module))).collect();
            for t in threads {
                let linked = t.join().expect("no thread panics");
                if Tier::compiler_available() {
                    assert!(linked >= first, "{engine}: {linked} linked of {first}");
                }
            }
        });
    }
}

#[test]
fn a_module_loaded_twice_shares_no_code() {
    if !Tier::compiler_available() {
        return;
    }
    // Compiled in a context of one load: a context of the other load
    // finds nothing after a call too brief to make the loop hot, while a
    // context of the same load (a clone) links it at once.
    let source = wide(4, 8);
    let one = Module::from_assembly(&source, "m.vmasm").expect("assembles");
    let two = Module::from_assembly(&source, "m.vmasm").expect("assembles");
    let want = sum(
        &mut context_of(&one, Tier::Interp, Limits::default()),
        100_000,
    )
    .expect("runs");
    let mut hot = context_of(&one, Tier::Auto, Limits::default());
    assert_eq!(sum(&mut hot, 100_000), Ok(want));
    assert_eq!(hot.compiled_functions().0, 1);
    let brief = sum(&mut context_of(&one, Tier::Interp, Limits::default()), 3).expect("runs");
    let mut other_load = context_of(&two, Tier::Auto, Limits::default());
    assert_eq!(sum(&mut other_load, 3), Ok(brief));
    assert_eq!(other_load.compiled_functions().0, 0, "shared across loads");
    let mut same_load = context_of(&one, Tier::Auto, Limits::default());
    assert_eq!(sum(&mut same_load, 3), Ok(brief));
    assert_eq!(
        same_load.compiled_functions().0,
        1,
        "not shared in one load"
    );
}

#[test]
fn contexts_made_run_and_dropped_at_random_on_eight_threads_keep_their_results() {
    // Four loads of one function (hot near the end of most calls), eight
    // threads making contexts of them for a few seconds: either engine,
    // plain, fuel or polled, some with a budget too small to compile;
    // most dropped at once (their compiles given up), some kept a while
    // and called again. Every call gets the interpreter's sum, and each
    // load's function is still compiled by a fresh context at the end.
    let modules: Vec<Module> = (0..4)
        .map(|_| Module::from_assembly(&lopsided(400, 40), "m.vmasm").expect("assembles"))
        .collect();
    let ns = [19_995, 20_005, 20_030, 40_000];
    let wants: Vec<i32> = ns
        .iter()
        .map(|&n| {
            sum(
                &mut context_of(&modules[0], Tier::Interp, Limits::default()),
                n,
            )
            .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(4);
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (modules, wants) = (&modules, &wants);
            s.spawn(move || {
                let mut seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(t + 1);
                let mut next = move || {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed
                };
                let mut kept: Vec<Context> = Vec::new();
                while Instant::now() < deadline {
                    let m = &modules[(next() % 4) as usize];
                    let tier = [Tier::Auto, Tier::Jit, Tier::Auto][(next() % 3) as usize];
                    let limits = if next() % 5 == 0 {
                        Limits {
                            max_memory_bytes: 1 << 20,
                            ..Limits::default()
                        }
                    } else {
                        Limits::default()
                    };
                    let mut ctx = context_of(m, tier, limits);
                    match next() % 4 {
                        0 => ctx.set_fuel(Some(u64::MAX / 4)),
                        1 => ctx.set_deadline(Some(Instant::now() + Duration::from_secs(3600))),
                        _ => {}
                    }
                    let k = (next() % 4) as usize;
                    assert_eq!(sum(&mut ctx, ns[k]), Ok(wants[k]), "{tier} {limits:?}");
                    if next() % 3 == 0 {
                        kept.push(ctx);
                        if kept.len() > 3 {
                            let i = (next() % 4) as usize;
                            let mut old = kept.swap_remove(i);
                            assert_eq!(sum(&mut old, ns[k]), Ok(wants[k]));
                        }
                    }
                }
            });
        }
    });
    if Tier::compiler_available() {
        for m in &modules {
            let mut fresh = context_of(m, Tier::Auto, Limits::default());
            assert!(compiles_within_a_minute(&mut fresh, 20_005, wants[1]));
        }
    }
}

#[test]
fn contexts_that_change_engine_between_calls_keep_their_results() {
    // The Auto and Jit copies are shared apart (entered at different
    // places): contexts switching engines between calls, on a module
    // whose other contexts compiled either copy, keep the interpreter's
    // results, calls and trap included.
    let source = many_callees(6);
    let cases = [
        ("hub", vec![Value::I32(21_000)]),
        ("ping", vec![Value::I32(300), Value::I32(5)]),
        ("ping", vec![Value::I32(300), Value::I32(0)]),
    ];
    let module = Module::from_assembly(&source, "m.vmasm").expect("assembles");
    let interp: Vec<String> = {
        let mut ctx = context_of(&module, Tier::Interp, Limits::default());
        cases.iter().map(|(f, a)| call(&mut ctx, f, a)).collect()
    };
    let mut auto = context_of(&module, Tier::Auto, Limits::default());
    let mut jit = context_of(&module, Tier::Jit, Limits::default());
    for round in 0..4 {
        for ctx in [&mut auto, &mut jit] {
            let got: Vec<String> = cases.iter().map(|(f, a)| call(ctx, f, a)).collect();
            assert_eq!(got, interp, "round {round}, {}", ctx.tier());
            let next = if ctx.tier() == Tier::Jit {
                Tier::Auto
            } else {
                Tier::Jit
            };
            ctx.set_tier(next);
        }
        let mut fresh = context_of(
            &module,
            [Tier::Auto, Tier::Jit][round % 2],
            Limits::default(),
        );
        let got: Vec<String> = cases.iter().map(|(f, a)| call(&mut fresh, f, a)).collect();
        assert_eq!(got, interp, "round {round}, fresh");
    }
}

#[test]
fn code_another_context_compiled_runs_in_a_later_contexts_init() {
    // `__init` calls a hot loop and a trapping-free chain of calls: the
    // first context compiles them while registering; the next links them
    // while registering (its module's state being set up), and its global
    // holds what the interpreter's does.
    let source = "vm.module @m version 0\nvm.global.i32 mutable @g = 0 : i32\n\
        vm.export @__init\nvm.export @get\n\
        vm.func @step(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32 3\n  \
        %i0 = vm.mul.i32 %i0, %i1\n  %i1 = vm.const.i32 1\n  %i0 = vm.add.i32 %i0, %i1\n  \
        vm.return %i0\n}\n\
        vm.func @__init() -> () {\n^bb0:\n  %i0 = vm.const.i32.zero\n  \
        %i1 = vm.const.i32 1\n  %i2 = vm.const.i32 50000\n  vm.br ^bb1(%i0->%i3, %i0->%i4)\n\
        ^bb1:\n  %i5 = vm.cmp.lt.i32.s %i3, %i2\n  vm.cond_br %i5, ^bb2(), ^bb3()\n^bb2:\n  \
        %i6 = vm.call @step(%i3)\n  %i4 = vm.xor.i32 %i4, %i6\n  %i3 = vm.add.i32 %i3, %i1\n  \
        vm.br ^bb1()\n^bb3:\n  vm.global.store.i32 %i4, @g\n  vm.return\n}\n\
        vm.func @get() -> (i32) {\n^bb0:\n  %i0 = vm.global.load.i32 @g\n  vm.return %i0\n}\n";
    let module = Module::from_assembly(source, "m.vmasm").expect("assembles");
    let get = |ctx: &mut Context| {
        let f = ctx.function("m.get").expect("exported");
        format!("{:?}", ctx.invoke(&f, &[]))
    };
    let want = get(&mut context_of(&module, Tier::Interp, Limits::default()));
    for engine in [Tier::Auto, Tier::Jit] {
        let module = Module::from_assembly(source, "m.vmasm").expect("assembles");
        let mut first = context_of(&module, engine, Limits::default());
        assert_eq!(get(&mut first), want, "{engine}");
        if Tier::compiler_available() {
            assert!(first.compiled_functions().0 >= 1, "{engine}");
        }
        drop(first);
        for _ in 0..3 {
            let mut next = context_of(&module, engine, Limits::default());
            assert_eq!(get(&mut next), want, "{engine}");
        }
    }
}
