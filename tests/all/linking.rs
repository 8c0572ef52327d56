//! Linking as users do it: two bytecode modules (one imports the other's
//! exports) through the API and `irvm run`, link errors, module
//! dependencies, typed Rust host functions with per-context state and
//! host-defined ref types, and driving a yielding call step by step.
//!
//! Fixtures in `tests/data`, each assembled or compiled from the source
//! beside it with the reference tools:
//! - `lib_b.vmfb`, `lib_b_mismatch.vmfb`, `app_a.vmfb`, `yields.vmfb`:
//!   `iree-as-module --output=X.vmfb X.vmasm`;
//! - `tensor.vmfb`: `iree-compile --iree-hal-target-device=local
//!   --iree-hal-local-target-device-backends=vmvx tensor.mlir -o tensor.vmfb`
//!   (a real module with a `hal >= 7` dependency).
//!
//! `examples/counter.vmfb` (used here too) is `iree-as-module` of
//! `examples/counter.vmasm`.

use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use irvm::errors::LinkError;
use irvm::{
    CallState, Context, HostRef, Module, NativeModule, Ref, StatusCode, Trap, TypeRegistry, Value,
};

use crate::common::cli::irvm;
use crate::common::paths::data;

fn load(name: &str) -> Module {
    Module::from_file(data(name)).expect("fixture loads")
}

fn module_flag(name: &str) -> String {
    format!("--module={}", data(name).display())
}

#[test]
fn a_imports_b_through_irvm_run() {
    let (out, err, code) = irvm(&[
        "run".into(),
        module_flag("lib_b.vmfb"),
        module_flag("app_a.vmfb"),
        "--function=main".into(),
        "--input=21".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "EXEC @main\nresult[0]: i64=42\n");
}

#[test]
fn a_imports_b_through_the_api() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(load("lib_b.vmfb")).unwrap();
    ctx.register_module(load("app_a.vmfb")).unwrap();
    let main = ctx.function("app_a.main").unwrap();
    let r = ctx.invoke(&main, &[Value::I32(-7)]).unwrap();
    assert_eq!(r[0].as_i64(), Some(-14));
    // B's exports stay callable directly.
    let add = ctx.function("lib_b.add").unwrap();
    assert_eq!(
        ctx.invoke(&add, &[Value::I32(2), Value::I32(3)]).unwrap()[0].as_i32(),
        Some(5)
    );
}

#[test]
fn a_without_b_names_the_missing_module() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let e = ctx.register_module(load("app_a.vmfb")).unwrap_err();
    assert!(matches!(e, LinkError::MissingImport { .. }));
    assert_eq!(
        e.to_string(),
        "NOT_FOUND; module 'lib_b' required for import 'lib_b.add' is not registered with \
         the context; resolving module 'app_a' imports"
    );
    let (_, err, code) = irvm(&[
        "run".into(),
        module_flag("app_a.vmfb"),
        "--function=main".into(),
        "--input=1".into(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("module 'lib_b' required for import 'lib_b.add'"),
        "{err}"
    );
    // A registered module that lacks the function is named as such.
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&NativeModule::new("lib_b", 3).wrap("widen", |x: i32| x as i64))
        .unwrap();
    let e = ctx.register_module(load("app_a.vmfb")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("NOT_FOUND; module 'lib_b' does not export 'lib_b.add'"),
        "{e}"
    );
}

#[test]
fn signature_mismatch_names_both_modules_and_signatures() {
    let (_, err, code) = irvm(&[
        "run".into(),
        module_flag("lib_b_mismatch.vmfb"),
        module_flag("app_a.vmfb"),
        "--function=main".into(),
        "--input=1".into(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        "irvm run: INVALID_ARGUMENT; import function lib_b.add signature mismatch between app_a \
         and source lib_b; expected 0ii_i but got 0II_I; resolving module 'app_a' imports"
    );
    // A host module providing the import with the wrong types, too.
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let host = NativeModule::new("lib_b", 3)
        .wrap("add", |a: i32, b: i32| a as f32 + b as f32)
        .wrap("widen", |x: i32| x as i64);
    ctx.register_host_module(&host).unwrap();
    let e = ctx.register_module(load("app_a.vmfb")).unwrap_err();
    assert!(
        e.to_string().contains("expected 0ii_i but got 0ii_f"),
        "{e}"
    );
}

#[test]
fn host_module_can_provide_what_a_bytecode_module_imports() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let host = NativeModule::new("lib_b", 3)
        .wrap("add", |a: i32, b: i32| a.wrapping_mul(10) + b)
        .wrap("widen", |x: i32| x as i64 * 1000);
    ctx.register_host_module(&host).unwrap();
    ctx.register_module(load("app_a.vmfb")).unwrap();
    let main = ctx.function("app_a.main").unwrap();
    let r = ctx.invoke(&main, &[Value::I32(2)]).unwrap();
    assert_eq!(r[0].as_i64(), Some(22_000));
}

#[test]
fn dependencies_with_minimum_versions() {
    let registry = TypeRegistry::new();
    // Missing.
    let mut ctx = Context::new(&registry);
    let e = ctx.register_module(load("tensor.vmfb")).unwrap_err();
    assert!(matches!(e, LinkError::Dependency { .. }), "{e}");
    assert!(
        e.to_string().contains("depends on 'hal' version >= 7"),
        "{e}"
    );
    // Too old.
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&NativeModule::new("hal", 6))
        .unwrap();
    let e = ctx.register_module(load("tensor.vmfb")).unwrap_err();
    assert!(
        e.to_string().contains("version >= 7") && e.to_string().contains('6'),
        "{e}"
    );
    // New enough, defining its types, but without the imported functions.
    let tensor = load("tensor.vmfb");
    let hal = tensor
        .types()
        .into_iter()
        .filter_map(|t| t.strip_prefix("!hal."))
        .fold(NativeModule::new("hal", 7), |m, t| {
            m.ref_type(format!("hal.{t}"))
        });
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&hal).unwrap();
    let e = ctx.register_module(load("tensor.vmfb")).unwrap_err();
    assert!(
        e.to_string().contains("module 'hal' does not export 'hal."),
        "{e}"
    );
}

#[test]
fn calling_conventions_come_from_closure_types() {
    let m = NativeModule::new("m", 1)
        .wrap("nothing", || {})
        .wrap("mixed", |_: i32, _: i64, _: f32, _: f64| 0.5f64)
        .wrap("pair", |a: i64| (a as i32, a))
        .wrap("fallible", |r: Ref| -> Result<(), Trap> {
            if r.is_null() {
                Err(Trap::new(StatusCode::InvalidArgument, "null"))
            } else {
                Ok(())
            }
        })
        .wrap(
            "eight",
            |a: i32, b: i32, c: i32, d: i32, e: i32, f: i32, g: i32, h: i32| {
                a + b + c + d + e + f + g + h
            },
        );
    assert_eq!(m.signature("nothing"), Some("0v_v"));
    assert_eq!(m.signature("mixed"), Some("0iIfF_F"));
    assert_eq!(m.signature("pair"), Some("0I_iI"));
    assert_eq!(m.signature("fallible"), Some("0r_v"));
    assert_eq!(m.signature("eight"), Some("0iiiiiiii_i"));
    // Called through a context with typed values.
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&m).unwrap();
    let pair = ctx.function("m.pair").unwrap();
    let r = ctx.invoke(&pair, &[Value::I64(1 << 33 | 5)]).unwrap();
    assert_eq!((r[0].as_i32(), r[1].as_i64()), (Some(5), Some(1 << 33 | 5)));
    let fallible = ctx.function("m.fallible").unwrap();
    let e = ctx.invoke(&fallible, &[Value::Ref(Ref::Null)]).unwrap_err();
    assert_eq!(e.code, StatusCode::InvalidArgument);
}

/// Counts live states, to see them created and dropped with contexts.
struct Tally {
    live: Arc<AtomicI32>,
    calls: i32,
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Relaxed);
    }
}

#[test]
fn per_context_state_lives_and_dies_with_its_context() {
    let live = Arc::new(AtomicI32::new(0));
    let l = live.clone();
    let module = NativeModule::with_state("tally", 1, move || {
        l.fetch_add(1, Relaxed);
        Tally {
            live: l.clone(),
            calls: 0,
        }
    })
    .wrap("bump", |t: &mut Tally, by: i32| {
        t.calls += by;
        t.calls
    });
    let registry = TypeRegistry::new();
    let mut a = Context::new(&registry);
    let mut b = Context::new(&registry);
    a.register_host_module(&module).unwrap();
    b.register_host_module(&module).unwrap();
    assert_eq!(live.load(Relaxed), 2);
    let bump_a = a.function("tally.bump").unwrap();
    let bump_b = b.function("tally.bump").unwrap();
    a.invoke(&bump_a, &[Value::I32(5)]).unwrap();
    let ra = a.invoke(&bump_a, &[Value::I32(5)]).unwrap();
    let rb = b.invoke(&bump_b, &[Value::I32(1)]).unwrap();
    assert_eq!((ra[0].as_i32(), rb[0].as_i32()), (Some(10), Some(1)));
    drop(a);
    assert_eq!(live.load(Relaxed), 1);
    drop(b);
    assert_eq!(live.load(Relaxed), 0);
}

struct Counter {
    total: AtomicI32,
}

fn counter_env(printed: Arc<Mutex<Vec<i32>>>) -> NativeModule {
    NativeModule::new("env", 1)
        .ref_type("env.counter")
        .wrap("print_i32", move |v: i32| printed.lock().unwrap().push(v))
        .wrap("counter_new", |start: i32| {
            HostRef::new(
                "env.counter",
                Counter {
                    total: AtomicI32::new(start),
                },
            )
        })
        .wrap("counter_add", |c: HostRef<Counter>, n: i32| {
            c.total.fetch_add(n, Relaxed) + n
        })
}

fn counter_module() -> Module {
    Module::from_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/counter.vmfb"
    ))
    .expect("examples/counter.vmfb loads")
}

#[test]
fn host_ref_types_travel_through_registers_and_lists() {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&counter_env(printed.clone()))
        .unwrap();
    ctx.register_module(counter_module()).unwrap();
    let main = ctx.function("counter_demo.main").unwrap();
    let r = ctx.invoke(&main, &[Value::I32(7)]).unwrap();
    // counter = 7; +7 = 14 (through the list's copy); +14 = 28 (the same
    // object); the list got back the same object (cmp.eq.ref = 1).
    assert_eq!(r[0].as_i32(), Some(28));
    assert_eq!(*printed.lock().unwrap(), vec![1, 28]);
}

#[test]
fn host_ref_arguments_are_type_checked() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&counter_env(Default::default()))
        .unwrap();
    let add = ctx.function("env.counter_add").unwrap();
    let other = Ref::host("env.other", 5u8);
    for (arg, why) in [(Ref::Null, "got null"), (other, "another type")] {
        let e = ctx
            .invoke(&add, &[Value::Ref(arg), Value::I32(1)])
            .unwrap_err();
        assert_eq!(e.code, StatusCode::InvalidArgument);
        assert!(
            e.message.contains("env.counter_add") && e.message.contains(why),
            "{e}"
        );
    }
    let new = ctx.function("env.counter_new").unwrap();
    let c = ctx.invoke(&new, &[Value::I32(3)]).unwrap();
    let Value::Ref(r) = &c[0] else {
        panic!("a ref result")
    };
    assert_eq!(
        r.downcast::<Counter>().map(|c| c.total.load(Relaxed)),
        Some(3)
    );
    assert_eq!(r.to_string(), "!env.counter");
}

#[test]
fn a_panicking_host_function_fails_its_call() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let m = NativeModule::new("lib_b", 3)
        .wrap("add", |a: i32, b: i32| -> i32 {
            if b == 0 {
                panic!("b must not be zero");
            }
            a + b
        })
        .wrap("widen", |x: i32| x as i64);
    ctx.register_host_module(&m).unwrap();
    ctx.register_module(load("app_a.vmfb")).unwrap();
    let add = ctx.function("lib_b.add").unwrap();
    let e = ctx
        .invoke(&add, &[Value::I32(1), Value::I32(0)])
        .unwrap_err();
    assert_eq!(e.code, StatusCode::Internal);
    assert!(
        e.message
            .contains("`lib_b.add` panicked: b must not be zero"),
        "{e}"
    );
    // Through bytecode: the trap carries the calling frame.
    let main = ctx.function("app_a.main").unwrap();
    // The host function's panic message goes to this test's captured
    // output (the panic hook is process-wide; the tests beside this one in
    // the binary need theirs).
    let e = ctx.invoke(&main, &[Value::I32(0)]).unwrap_err();
    assert_eq!(e.backtrace[0].function, "main");
    // The context stays usable.
    assert_eq!(
        ctx.invoke(&main, &[Value::I32(2)]).unwrap()[0].as_i64(),
        Some(4)
    );
}

#[test]
fn a_yielding_call_driven_step_by_step() {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(load("yields.vmfb")).unwrap();
    let f = ctx.function("yields.count_up").unwrap();
    let mut state = ctx.begin_call(&f, &[Value::I32(10)]).unwrap();
    let mut seen = Vec::new();
    while let CallState::Yielded = state {
        // The suspended frame shows the progress so far.
        let frames = ctx.frames();
        assert_eq!(frames.len(), 1);
        seen.push(frames[0].i32s[0]);
        // Another call cannot start while this one is suspended.
        let err = ctx.begin_call(&f, &[Value::I32(0)]).unwrap_err();
        assert_eq!(err.code, StatusCode::FailedPrecondition);
        state = ctx.resume().unwrap();
    }
    assert_eq!(seen, [11, 12, 13]);
    match state {
        CallState::Done(v) => assert_eq!(v[0].as_i32(), Some(13)),
        _ => panic!("expected completion"),
    }
    // Nothing left to resume; abandoning a call mid-way frees it.
    assert_eq!(
        ctx.resume().unwrap_err().code,
        StatusCode::FailedPrecondition
    );
    assert!(matches!(
        ctx.begin_call(&f, &[Value::I32(0)]).unwrap(),
        CallState::Yielded
    ));
    ctx.abandon();
    assert!(ctx.frames().is_empty());
    assert_eq!(
        ctx.invoke(&f, &[Value::I32(0)]).unwrap()[0].as_i32(),
        Some(3)
    );
}

/// A function whose calling convention is the empty string takes and
/// returns nothing, as IREE reads it (`iree_vm_function_call_get_cconv_fragments`:
/// "no cconv string, which is valid for void functions"; iree-run-module
/// runs this module). `irvm as` writes it, and registering it failed with
/// "empty calling convention".
#[test]
fn an_empty_calling_convention_is_a_function_without_values() {
    let source = "vm.module @m version 0\n\nvm.export @g\n\
                  vm.func @g() -> () cconv \"\" {\n^bb0:\n  vm.return\n}\n";
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_module(Module::from_assembly(source, "empty_cconv.vmasm").expect("assembles"))
        .expect("registers");
    let g = ctx.function("m.g").expect("exported");
    assert_eq!(g.calling_convention(), "0v_v");
    assert!(ctx.invoke(&g, &[]).expect("runs").is_empty());
}
