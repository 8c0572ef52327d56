//! The embedding API as a Rust program uses it: typed calls of every value
//! type, yields through typed calls, signature and lookup errors, and
//! contexts that move between threads.
//!
//! The module is `tests/data/embedding.vmasm`, assembled in memory.

use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::Arc;

use irvm::errors::LookupError;
use irvm::{
    CallState, Context, HostRef, Module, NativeModule, Ref, StatusCode, TypeRegistry, ValType,
    Value,
};

use crate::paths::data;

fn module() -> Module {
    Module::from_assembly_file(data("embedding.vmasm"))
        .expect("tests/data/embedding.vmasm assembles")
}

fn context(registry: &Arc<TypeRegistry>) -> Context {
    let mut ctx = Context::new(registry);
    ctx.register_module(module()).expect("module registers");
    ctx
}

/// A host object for `HostRef` round trips.
struct Tally(AtomicI32);

fn host() -> NativeModule {
    NativeModule::new("host", 1)
        .ref_type("host.tally")
        .wrap("tally_new", |v: i32| {
            HostRef::new("host.tally", Tally(AtomicI32::new(v)))
        })
        .wrap("tally_add", |t: HostRef<Tally>, n: i32| {
            t.0.fetch_add(n, Relaxed) + n
        })
}

#[test]
fn typed_calls_take_and_return_rust_values() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    let add = ctx.typed_func::<(i32, i32), i32>("add").unwrap();
    assert_eq!(add.call(&mut ctx, (40, 2)).unwrap(), 42);
    // Several results come back as a tuple, in order; i64, f32, f64.
    let mix = ctx
        .typed_func::<(i64, f64, f32), (f32, f64, i64)>("embedding.mix")
        .unwrap();
    assert_eq!(
        mix.call(&mut ctx, (1 << 40, 2.25, 1.5)).unwrap(),
        (1.5, 2.25, 1 << 40)
    );
    let divmod = ctx.typed_func::<(i32, i32), (i32, i32)>("divmod").unwrap();
    assert_eq!(divmod.call(&mut ctx, (7, 2)).unwrap(), (3, 1));
    // Refs both ways.
    let make = ctx.typed_func::<i64, Ref>("make_buffer").unwrap();
    let length = ctx.typed_func::<Ref, i64>("length").unwrap();
    let buffer = make.call(&mut ctx, 24).unwrap();
    assert!(matches!(buffer, Ref::Buffer(_)));
    assert_eq!(length.call(&mut ctx, buffer).unwrap(), 24);
    // A trap is the call's error, as with `invoke`.
    let e = divmod.call(&mut ctx, (1, 0)).unwrap_err();
    assert_eq!(e.code, StatusCode::InvalidArgument, "{e}");
}

#[test]
fn typed_calls_carry_host_objects() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&host()).unwrap();
    let new = ctx
        .typed_func::<i32, HostRef<Tally>>("host.tally_new")
        .unwrap();
    let add = ctx
        .typed_func::<(HostRef<Tally>, i32), i32>("host.tally_add")
        .unwrap();
    let tally = new.call(&mut ctx, 5).unwrap();
    assert_eq!(add.call(&mut ctx, (tally.clone(), 3)).unwrap(), 8);
    assert_eq!(tally.0.load(Relaxed), 8);
    // A result of another host type is an error of the call, not a panic.
    struct Other;
    let wrong = ctx
        .typed_func::<i32, HostRef<Other>>("host.tally_new")
        .unwrap();
    let e = wrong.call(&mut ctx, 1).unwrap_err();
    assert!(e.message.contains("result 0"), "{e}");
}

#[test]
fn typed_calls_yield_through_begin_and_resume() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    let count_up = ctx.typed_func::<i32, i32>("count_up").unwrap();
    let mut state = count_up.begin_call(&mut ctx, 10).unwrap();
    let mut yields = 0;
    while state == CallState::Yielded {
        yields += 1;
        state = count_up.resume(&mut ctx).unwrap();
    }
    assert_eq!((yields, state), (1, CallState::Done(12)));
    // `call` resumes by itself.
    assert_eq!(count_up.call(&mut ctx, 0).unwrap(), 2);
}

#[test]
fn only_the_pending_function_resumes_its_call() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    let count_up = ctx.typed_func::<i32, i32>("count_up").unwrap();
    let count_pair = ctx.typed_func::<i32, (i32, i32)>("count_pair").unwrap();
    assert_eq!(
        count_up.begin_call(&mut ctx, 10).unwrap(),
        CallState::Yielded
    );
    // Another function's TypedFunc cannot resume it, and the call stays
    // pending.
    let e = count_pair.resume(&mut ctx).unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    assert!(
        e.message.contains("`embedding.count_up`") && e.message.contains("`embedding.count_pair`"),
        "{e}"
    );
    assert_eq!(count_up.resume(&mut ctx).unwrap(), CallState::Done(12));
    // And the other way round, with a same-typed function too.
    assert_eq!(
        count_pair.begin_call(&mut ctx, 4).unwrap(),
        CallState::Yielded
    );
    assert!(count_up.resume(&mut ctx).is_err());
    assert_eq!(
        count_pair.resume(&mut ctx).unwrap(),
        CallState::Done((4, 5))
    );
}

#[test]
fn wrong_signatures_are_errors_naming_both() {
    let registry = TypeRegistry::new();
    let ctx = context(&registry);
    let e = ctx.typed_func::<(i64, i32), i32>("add").unwrap_err();
    assert_eq!(
        e.to_string(),
        "INVALID_ARGUMENT; function `embedding.add` has signature (i32, i32) -> (i32) \
         (calling convention `0ii_i`), but was requested as (i64, i32) -> (i32)"
    );
    let e = ctx.typed_func::<(i32, i32), ()>("add").unwrap_err();
    assert!(
        e.to_string().ends_with("requested as (i32, i32) -> ()"),
        "{e}"
    );
    let e = ctx
        .typed_func::<i32, HostRef<Tally>>("make_buffer")
        .unwrap_err();
    assert!(
        e.to_string().contains(
            "has signature (i64) -> (ref) (calling convention `0I_r`), \
             but was requested as (i32) -> (ref)"
        ),
        "{e}"
    );
    assert!(matches!(e, LookupError::Signature { .. }));
    // Calling conventions do not name ref types: a `HostRef<T>` result is
    // checked on each call (see `typed_calls_carry_host_objects`).
    assert!(ctx.typed_func::<i64, HostRef<Tally>>("make_buffer").is_ok());
}

#[test]
fn missing_exports_are_errors_listing_the_exports() {
    let registry = TypeRegistry::new();
    let ctx = context(&registry);
    let e = ctx.function("embedding.sub").unwrap_err();
    assert_eq!(
        e.to_string(),
        "NOT_FOUND; no function `sub` exported by module `embedding`; exports: add, mix, \
         divmod, make_buffer, length, count_up, count_pair"
    );
    // Without a module name, every module's exports are listed.
    let mut ctx = context(&registry);
    ctx.register_host_module(&host()).unwrap();
    let e = ctx.typed_func::<(), ()>("sub").unwrap_err();
    match e {
        LookupError::NotFound {
            function,
            module,
            exports,
        } => {
            assert_eq!((function.as_str(), module), ("sub", None));
            assert!(
                exports.contains(&"embedding.add".to_string()),
                "{exports:?}"
            );
            assert!(
                exports.contains(&"host.tally_new".to_string()),
                "{exports:?}"
            );
        }
        other => panic!("expected NotFound, got {other}"),
    }
}

#[test]
fn funcs_report_their_types() {
    let registry = TypeRegistry::new();
    let ctx = context(&registry);
    let mix = ctx.function("mix").unwrap();
    assert_eq!(mix.name(), "embedding.mix");
    assert_eq!(mix.params(), [ValType::I64, ValType::F64, ValType::F32]);
    assert_eq!(mix.results(), [ValType::F32, ValType::F64, ValType::I64]);
    assert_eq!(mix.calling_convention(), "0IFf_fFI");
    assert_eq!(ctx.function("length").unwrap().params(), [ValType::Ref]);
}

#[test]
fn a_func_is_called_only_in_its_own_context() {
    let registry = TypeRegistry::new();
    let mut a = context(&registry);
    let mut b = context(&registry);
    let add = a.typed_func::<(i32, i32), i32>("add").unwrap();
    assert_eq!(add.call(&mut a, (1, 2)).unwrap(), 3);
    let e = add.call(&mut b, (1, 2)).unwrap_err();
    assert!(e.message.contains("belongs to another context"), "{e}");
}

#[test]
fn a_context_moves_to_another_thread_and_runs_there() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    ctx.register_host_module(&host()).unwrap();
    let add = ctx.typed_func::<(i32, i32), i32>("add").unwrap();
    let make = ctx.typed_func::<i64, Ref>("make_buffer").unwrap();
    let tally_new = ctx.typed_func::<i32, HostRef<Tally>>("tally_new").unwrap();
    // A buffer and a host object made on this thread, kept here while the
    // context moves.
    let kept = make.call(&mut ctx, 8).unwrap();
    let tally = tally_new.call(&mut ctx, 1).unwrap();
    let worker = std::thread::spawn(move || {
        let sum = add.call(&mut ctx, (40, 2)).unwrap();
        // A ref made on the worker travels back with the context.
        let made = make.call(&mut ctx, 24).unwrap();
        let tally_add = ctx
            .typed_func::<(HostRef<Tally>, i32), i32>("tally_add")
            .unwrap();
        let total = tally_add.call(&mut ctx, (tally, 10)).unwrap();
        (ctx, sum, made, total)
    });
    let (mut ctx, sum, made, total) = worker.join().unwrap();
    assert_eq!((sum, total), (42, 11));
    let length = ctx.typed_func::<Ref, i64>("length").unwrap();
    assert_eq!(length.call(&mut ctx, made).unwrap(), 24);
    assert_eq!(length.call(&mut ctx, kept.clone()).unwrap(), 8);
    // The untyped API crosses threads the same way.
    let f = ctx.function("length").unwrap();
    let r = std::thread::spawn(move || ctx.invoke(&f, &[Value::Ref(kept)]).unwrap())
        .join()
        .unwrap();
    assert_eq!(r[0].as_i64(), Some(8));
}

/// An observer that panics at its `n`th instruction.
struct PanicAt(usize);

impl irvm::Observer for PanicAt {
    fn before_instruction(&mut self, _view: &irvm::ExecView<'_>) -> irvm::Control {
        self.0 -= 1;
        if self.0 == 0 {
            panic!("observer gave up");
        }
        irvm::Control::Continue
    }
}

#[test]
fn a_panic_inside_a_resumed_call_leaves_the_context_usable() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    let count_up = ctx.typed_func::<i32, i32>("count_up").unwrap();
    let make = ctx.typed_func::<i64, Ref>("make_buffer").unwrap();
    let length = ctx.typed_func::<Ref, i64>("length").unwrap();
    let buffer = make.call(&mut ctx, 8).unwrap();
    assert_eq!(
        count_up.begin_call(&mut ctx, 1).unwrap(),
        CallState::Yielded
    );
    ctx.set_observer(Some(Box::new(PanicAt(2))));
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = count_up.resume(&mut ctx);
    }));
    assert!(unwound.is_err());
    ctx.set_observer(None);
    // The interrupted call is gone (its frames were released) ...
    let e = count_up.resume(&mut ctx).unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    // ... and everything else works, buffers included.
    assert_eq!(count_up.call(&mut ctx, 5).unwrap(), 7);
    assert_eq!(length.call(&mut ctx, buffer).unwrap(), 8);
}

#[test]
fn registering_while_a_call_is_pending_fails_and_registers_nothing() {
    let registry = TypeRegistry::new();
    let mut ctx = context(&registry);
    let count_up = ctx.typed_func::<i32, i32>("count_up").unwrap();
    assert_eq!(
        count_up.begin_call(&mut ctx, 1).unwrap(),
        CallState::Yielded
    );
    let other = || {
        Module::from_assembly(
            "vm.module @other version 0\nvm.export @__init\nvm.func @__init() -> () {\n^bb0:\n  vm.yield ^bb1()\n^bb1:\n  vm.return\n}\n",
            "other.vmasm",
        )
        .unwrap()
    };
    let e = ctx.register_module(other()).unwrap_err().to_string();
    assert!(e.contains("pending"), "{e}");
    assert_eq!(ctx.module_names(), ["embedding"]);
    assert_eq!(count_up.resume(&mut ctx).unwrap(), CallState::Done(3));
    // Once nothing is pending, the same module registers (its yielding
    // `__init` runs to the end).
    ctx.register_module(other()).unwrap();
    assert_eq!(ctx.module_names(), ["embedding", "other"]);
}

#[test]
fn another_contexts_typed_func_does_not_resume_a_pending_call() {
    let registry = TypeRegistry::new();
    let (mut a, b) = (context(&registry), context(&registry));
    let count_a = a.typed_func::<i32, i32>("count_up").unwrap();
    let count_b = b.typed_func::<i32, i32>("count_up").unwrap();
    assert_eq!(count_a.begin_call(&mut a, 1).unwrap(), CallState::Yielded);
    let e = count_b.resume(&mut a).unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    assert!(e.message.contains("another context"), "{e}");
    assert_eq!(count_a.resume(&mut a).unwrap(), CallState::Done(3));
    drop(b);
}

/// One `Module` registered in several contexts (verified and lowered once,
/// then copied): each context runs it on its own state, with its own tier.
#[test]
fn one_module_registers_in_many_contexts() {
    let registry = TypeRegistry::new();
    let m = module();
    let mut contexts: Vec<Context> = (0..3).map(|_| Context::new(&registry)).collect();
    contexts[1].set_tier(irvm::Tier::Interp);
    for ctx in &mut contexts {
        ctx.register_module(m.clone()).expect("module registers");
    }
    for ctx in &mut contexts {
        let add = ctx.typed_func::<(i32, i32), i32>("add").unwrap();
        for k in 0..200 {
            assert_eq!(add.call(ctx, (k, 2)).unwrap(), k + 2);
        }
        let divmod = ctx.typed_func::<(i32, i32), (i32, i32)>("divmod").unwrap();
        assert_eq!(divmod.call(ctx, (7, 2)).unwrap(), (3, 1));
    }
    // A context dropped first leaves the others' functions intact.
    contexts.remove(0);
    let ctx = &mut contexts[1];
    let add = ctx.typed_func::<(i32, i32), i32>("add").unwrap();
    assert_eq!(add.call(ctx, (40, 2)).unwrap(), 42);
}

/// Host functions that write their results into the VM's vector
/// (`func_with_state_into`), with a variadic span of tuples read by the
/// call site's argument plan, and a `HostState` written by hand that only
/// implements `call` (the default `call_into` moves its vector in).
#[test]
fn variadic_host_calls_and_both_result_forms() {
    use irvm::{HostFunctionDecl, HostModule, HostOutcome, HostState, Trap};

    // sum(k, [(a, b)...]) = k * Σ a·b, and the pair count.
    let sums = NativeModule::with_state("sums", 1, || 0i32)
        .func_with_state_into("dot", "0iCiID_ii", |calls, args, results| {
            *calls += 1;
            let Value::I32(k) = args[0] else {
                panic!("k: {:?}", args[0])
            };
            let Value::I32(n) = args[1] else {
                panic!("count: {:?}", args[1])
            };
            let mut total = 0i64;
            for pair in args[2..].chunks(2) {
                match pair {
                    [Value::I32(a), Value::I64(b)] => total += i64::from(*a) * b,
                    other => panic!("pair {other:?}"),
                }
            }
            assert_eq!(args.len(), 2 + 2 * n as usize);
            results.push(Value::I32((total * i64::from(k)) as i32));
            results.push(Value::I32(n + *calls - 1));
            Ok(())
        })
        .unwrap();

    struct Doubler;
    impl HostState for Doubler {
        fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap> {
            assert_eq!(index, 0);
            match args {
                [Value::I32(n), rest @ ..] => {
                    assert_eq!(rest.len(), *n as usize);
                    let s: i32 = rest
                        .iter()
                        .map(|v| match v {
                            Value::I32(x) => *x,
                            other => panic!("{other:?}"),
                        })
                        .sum();
                    Ok(HostOutcome::Done(vec![Value::I32(2 * s)]))
                }
                other => panic!("{other:?}"),
            }
        }
    }
    struct DoublerModule;
    impl HostModule for DoublerModule {
        fn name(&self) -> &str {
            "twice"
        }
        fn version(&self) -> u32 {
            1
        }
        fn functions(&self) -> Vec<HostFunctionDecl> {
            vec![HostFunctionDecl {
                name: "sum".into(),
                calling_convention: "0CiD_i".into(),
            }]
        }
        fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
            Ok(Box::new(Doubler))
        }
    }

    let app = Module::from_assembly(
        "vm.module @app version 0\n\
         vm.import @sums.dot cconv \"0iCiID_ii\"\n\
         vm.import @twice.sum cconv \"0CiD_i\"\n\n\
         vm.export @main\n\
         vm.func @main(%i0: i32) -> (i32, i32, i32) {\n^bb0:\n  \
         %i1 = vm.const.i32 3\n  %i2:3 = vm.const.i64 10\n  %i4:5 = vm.const.i64 -4\n  \
         %i6, %i7 = vm.call.variadic @sums.dot segments[65535, 2](%i0, %i1, %i2:3, %i0, %i4:5)\n  \
         %i8 = vm.call.variadic @twice.sum segments[3](%i0, %i1, %i6)\n  \
         vm.return %i6, %i7, %i8\n}\n",
        "app.vmasm",
    )
    .unwrap();
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&sums).unwrap();
    ctx.register_host_module(&DoublerModule).unwrap();
    ctx.register_module(app).unwrap();
    let main = ctx.typed_func::<i32, (i32, i32, i32)>("main").unwrap();
    // x = 5: dot = 5 * (3*10 + 5*(-4)) = 50; twice.sum = 2 * (5 + 3 + 50).
    assert_eq!(main.call(&mut ctx, 5).unwrap(), (50, 2, 116));
    // The state counts calls; the VM's result vector is reused between them.
    assert_eq!(
        main.call(&mut ctx, 1).unwrap(),
        (30 - 4, 3, 2 * (1 + 3 + 26))
    );
}

/// `register_module_deferring_init` links a module and hands its `__init`
/// back instead of running it: the globals keep their initial values until
/// the caller runs it (as a debugger does, under its control).
#[test]
fn a_deferred_init_runs_when_the_caller_calls_it() {
    let text = "vm.module @g version 0\nvm.module_state global_bytes 4, global_refs 0\n\
                vm.export @__init\nvm.func @__init() -> () {\n^bb0:\n  \
                %i0 = vm.const.i32 7\n  vm.global.store.i32 %i0, .rwdata[0]\n  vm.return\n}\n\
                vm.export @get\nvm.func @get() -> (i32) {\n^bb0:\n  \
                %i0 = vm.global.load.i32 .rwdata[0]\n  vm.return %i0\n}\n";
    let mut ctx = Context::new(&TypeRegistry::new());
    let init = ctx
        .register_module_deferring_init(Module::from_assembly(text, "g.vmasm").unwrap())
        .unwrap()
        .expect("the module has an __init");
    assert_eq!(init.name(), "g.__init");
    let get = ctx.typed_func::<(), i32>("get").unwrap();
    assert_eq!(get.call(&mut ctx, ()).unwrap(), 0);
    assert!(ctx.invoke(&init, &[]).unwrap().is_empty());
    assert_eq!(get.call(&mut ctx, ()).unwrap(), 7);
    // A module without one gives none; register_module runs it at once.
    let plain =
        "vm.module @p version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.return\n}\n";
    let none = ctx
        .register_module_deferring_init(Module::from_assembly(plain, "p.vmasm").unwrap())
        .unwrap();
    assert!(none.is_none());
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(Module::from_assembly(text, "g.vmasm").unwrap())
        .unwrap();
    let get = ctx.typed_func::<(), i32>("get").unwrap();
    assert_eq!(get.call(&mut ctx, ()).unwrap(), 7);
}
