//! Attacks on the host-call result path that moves values field by field
//! (`exec::write_host_results`, `Value::take_into`): a ref argument
//! returned unchanged (borrowed and moved), the same ref returned twice,
//! results of every kind, a host function returning the wrong count or
//! kind while holding refs, and host functions that panic after writing
//! results. Each case runs through a closure returning a vector and one
//! appending to the VM's (the `hal`'s way). Every object made must be
//! dropped exactly once, and each error must be clean.

use irvm::{
    Context, HostFunctionDecl, HostModule, HostRef, HostState, HostStatus, Module, NativeModule,
    Ref, StatusCode, Trap, TypeRegistry, Value,
};

use crate::tracked::{live, Tracked};

const PROGRAM: &str = r#"vm.module @app version 0
vm.type !env.obj
vm.import @env.make cconv "0i_r"
vm.import @ret.echo cconv "0r_r"
vm.import @ret.twice cconv "0r_rr"
vm.import @ret.kinds cconv "0r_iIfFrr"
vm.import @ret.short cconv "0r_rr"
vm.import @ret.long cconv "0r_r"
vm.import @ret.wrong_kind cconv "0r_rri"
vm.import @ret.boom cconv "0r_r"

vm.export @echo_borrowed
vm.func @echo_borrowed() -> (!env.obj, !env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @ret.echo(%r0)
  vm.return %r0, %r1
}

vm.export @echo_moved_onto_itself
vm.func @echo_moved_onto_itself() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r0 = vm.call @ret.echo(%R0)
  vm.return %r0
}

vm.export @echo_borrowed_onto_itself
vm.func @echo_borrowed_onto_itself() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r0 = vm.call @ret.echo(%r0)
  vm.return %r0
}

vm.export @twice_over_the_argument
vm.func @twice_over_the_argument() -> (!env.obj, !env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r0, %r1 = vm.call @ret.twice(%R0)
  vm.return %r0, %r1
}

vm.export @kinds
vm.func @kinds() -> (i32, i64, f32, f64, !env.obj, !env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %i1, %i2:3, %i4, %i6:7, %r1, %r2 = vm.call @ret.kinds(%R0)
  vm.return %i1, %i2:3, %i4, %i6:7, %r1, %r2
}

vm.export @short
vm.func @short() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1, %r2 = vm.call @ret.short(%r0)
  vm.return %i0
}

vm.export @long
vm.func @long() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @ret.long(%R0)
  vm.return %i0
}

vm.export @wrong_kind
vm.func @wrong_kind() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1, %r2, %i1 = vm.call @ret.wrong_kind(%r0)
  vm.return %i1
}

vm.export @boom
vm.func @boom() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @ret.boom(%r0)
  vm.return %r1
}
"#;

/// What each `ret` function returns for its arguments.
fn results_of(name: &str, args: &[Value]) -> Vec<Value> {
    let a = || Value::Ref(args[0].as_ref().cloned().unwrap_or(Ref::Null));
    match name {
        "echo" | "short" => vec![a()],
        "twice" | "long" => vec![a(), a()],
        "kinds" => vec![
            Value::I32(-5),
            Value::I64(i64::MIN + 3),
            Value::F32(1.5),
            Value::F64(-2.25),
            a(),
            Value::Ref(Ref::Null),
        ],
        // A ref where an i32 is expected, after two good refs.
        "wrong_kind" => vec![a(), a(), a()],
        "boom" => panic!("ret.boom panics after making its results"),
        _ => unreachable!("{name}"),
    }
}

const RET: [(&str, &str); 7] = [
    ("echo", "0r_r"),
    ("twice", "0r_rr"),
    ("kinds", "0r_iIfFrr"),
    ("short", "0r_rr"),
    ("long", "0r_r"),
    ("wrong_kind", "0r_rri"),
    ("boom", "0r_r"),
];

/// `ret` as closures returning a vector (`appending` false) or appending
/// to the VM's by `Value::take_into` (true: the `hal`'s way; `boom`
/// appends its results before it panics).
fn ret_module(appending: bool) -> NativeModule<()> {
    let mut m = NativeModule::<()>::new("ret", 1);
    for (name, cc) in RET {
        m = if appending {
            m.func_with_state_into(name, cc, move |_, args, out| {
                if name == "boom" {
                    let mut made = results_of("echo", args);
                    made[0].take_into(out);
                }
                for mut v in results_of(name, args) {
                    v.take_into(out);
                }
                Ok(())
            })
        } else {
            m.func(name, cc, move |args| Ok(results_of(name, args)))
        }
        .unwrap();
    }
    m
}

/// A context with `env` (its `make` gives a new tracked `env.obj`), then
/// `hosts` in order, then the program `text` assembled as `file`.
fn context_with(hosts: &[&dyn HostModule], text: &str, file: &str) -> Context {
    let env = NativeModule::<()>::new("env", 1)
        .ref_type("env.obj")
        .wrap("make", |_: i32| HostRef::new("env.obj", Tracked::new()));
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&env).unwrap();
    for host in hosts {
        ctx.register_host_module(*host).unwrap();
    }
    ctx.register_module(Module::from_assembly(text, file).unwrap())
        .unwrap();
    ctx
}

/// [`PROGRAM`] over `env` and `ret`.
fn context(ret: &dyn HostModule) -> Context {
    context_with(&[ret], PROGRAM, "app.vmasm")
}

fn run(ctx: &mut Context, name: &str) -> Result<Vec<Value>, Trap> {
    let f = ctx.function(&format!("app.{name}")).unwrap();
    ctx.invoke(&f, &[])
}

fn refs(values: &[Value]) -> Vec<Ref> {
    values.iter().filter_map(|v| v.as_ref().cloned()).collect()
}

#[test]
fn refs_returned_unchanged_or_twice_are_counted_exactly() {
    for appending in [false, true] {
        let base = live();
        let ret = ret_module(appending);
        let mut ctx = context(&ret);

        let out = run(&mut ctx, "echo_borrowed").unwrap();
        let r = refs(&out);
        assert!(r[0].ptr_eq(&r[1]), "appending {appending}");
        // The two results, and the two clones `refs` made.
        assert_eq!(r[0].ref_count(), 4);
        drop(out);
        assert_eq!(r[0].ref_count(), 2);
        drop(r);
        assert_eq!(live(), base);

        for name in ["echo_moved_onto_itself", "echo_borrowed_onto_itself"] {
            let out = run(&mut ctx, name).unwrap();
            let r = out[0].as_ref().unwrap();
            assert_eq!(r.ref_count(), 1, "{name}, appending {appending}");
            assert_eq!(live(), base + 1);
            drop(out);
            assert_eq!(live(), base, "{name}, appending {appending}");
        }

        let out = run(&mut ctx, "twice_over_the_argument").unwrap();
        let r = refs(&out);
        assert!(r[0].ptr_eq(&r[1]));
        assert_eq!(r[0].ref_count(), 4, "appending {appending}");
        drop((out, r));
        assert_eq!(live(), base);
        drop(ctx);
        assert_eq!(live(), base);
    }
}

#[test]
fn results_of_every_kind_arrive_exactly() {
    for appending in [false, true] {
        let base = live();
        let ret = ret_module(appending);
        let mut ctx = context(&ret);
        let out = run(&mut ctx, "kinds").unwrap();
        assert_eq!(out[0].as_i32(), Some(-5));
        assert_eq!(out[1].as_i64(), Some(i64::MIN + 3));
        assert_eq!(out[2].as_f32(), Some(1.5));
        assert_eq!(out[3].as_f64(), Some(-2.25));
        assert_eq!(out[4].as_ref().unwrap().ref_count(), 1);
        assert!(out[5].as_ref().unwrap().is_null());
        assert_eq!(live(), base + 1);
        drop(out);
        assert_eq!(live(), base, "appending {appending}");
    }
}

#[test]
fn wrong_result_counts_and_kinds_are_clean_errors_that_leak_nothing() {
    for appending in [false, true] {
        let base = live();
        let ret = ret_module(appending);
        let mut ctx = context(&ret);
        for (name, says) in [
            ("short", "returned 1 values, expected 2"),
            ("long", "returned 2 values, expected 1"),
            ("wrong_kind", "returned r, expected i32"),
        ] {
            let e = run(&mut ctx, name).unwrap_err();
            assert_eq!(e.code, StatusCode::Internal, "{name}: {e}");
            assert!(e.message.contains(says), "{name}: {e}");
            assert_eq!(
                live(),
                base,
                "{name}, appending {appending}: a result leaked"
            );
            // The context is whole: a good call after the failed one.
            let out = run(&mut ctx, "kinds").unwrap();
            assert_eq!(out[0].as_i32(), Some(-5), "{name}, appending {appending}");
            drop(out);
            assert_eq!(live(), base);
        }
    }
}

#[test]
fn a_closure_panicking_after_appending_results_fails_its_call_only() {
    for appending in [false, true] {
        let base = live();
        let ret = ret_module(appending);
        let mut ctx = context(&ret);
        let e = run(&mut ctx, "boom").unwrap_err();
        assert_eq!(e.code, StatusCode::Internal, "{e}");
        assert!(e.message.contains("panicked"), "{e}");
        assert_eq!(live(), base, "appending {appending}");
        let out = run(&mut ctx, "echo_borrowed").unwrap();
        assert_eq!(out.len(), 2, "appending {appending}");
        drop(out);
        assert_eq!(live(), base);
    }
}

/// A custom host state (its calls are not under `catch_unwind`) that
/// appends a result, then panics out of the interpreter.
struct PanicsAfterAppending;

impl HostState for PanicsAfterAppending {
    fn call(&mut self, _: usize, _: &[Value]) -> Result<irvm::HostOutcome, Trap> {
        unreachable!("call_into is overridden")
    }
    fn call_into(
        &mut self,
        _: usize,
        args: &[Value],
        results: &mut Vec<Value>,
    ) -> Result<HostStatus, Trap> {
        results.push(Value::Ref(args[0].as_ref().cloned().unwrap()));
        panic!("custom state panics after appending a result");
    }
}

struct PanickyModule;

impl HostModule for PanickyModule {
    fn name(&self) -> &str {
        "panicky"
    }
    fn version(&self) -> u32 {
        1
    }
    fn functions(&self) -> Vec<HostFunctionDecl> {
        vec![HostFunctionDecl {
            name: "boom".into(),
            calling_convention: "0r_r".into(),
        }]
    }
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        Ok(Box::new(PanicsAfterAppending))
    }
}

#[test]
fn a_custom_state_panicking_out_after_appending_a_result_leaves_the_context_whole() {
    const PANICKY: &str = r#"vm.module @p version 0
vm.type !env.obj
vm.import @env.make cconv "0i_r"
vm.import @panicky.boom cconv "0r_r"
vm.import @ret.echo cconv "0r_r"

vm.export @boom
vm.func @boom() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @panicky.boom(%r0)
  vm.return %r1
}

vm.export @echo
vm.func @echo() -> (!env.obj) {
^bb0:
  %r0 = vm.const.ref.zero
  %r1 = vm.call @ret.echo(%R0)
  vm.return %r1
}
"#;
    let base = live();
    // The `hal`'s way: results appended to the VM's vector.
    let ret = ret_module(true);
    let mut ctx = context_with(&[&ret, &PanickyModule], PANICKY, "p.vmasm");
    let boom = ctx.function("p.boom").unwrap();
    let echo = ctx.function("p.echo").unwrap();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = ctx.invoke(&boom, &[]);
    }));
    assert!(unwound.is_err());
    // The context is used again: its next host call (one that appends to
    // the VM's result vector, as the `hal`'s do) gets an empty vector.
    let out = ctx.invoke(&echo, &[]).expect("the call after the panic");
    assert_eq!(out.len(), 1);
    assert!(out[0].as_ref().unwrap().is_null());
    drop(out);
    assert_eq!(
        live(),
        base,
        "the panicked call's result is still held by the context"
    );
    drop(ctx);
    assert_eq!(live(), base);
}

/// A host state that yields once, then on resume returns its argument (a
/// ref) once (`good`) or twice for one result (`bad`).
struct YieldsThenReturns {
    kept: Option<Ref>,
}

impl HostState for YieldsThenReturns {
    fn call(&mut self, _: usize, args: &[Value]) -> Result<irvm::HostOutcome, Trap> {
        self.kept = args[0].as_ref().cloned();
        Ok(irvm::HostOutcome::Deferred)
    }
    fn resume(&mut self, index: usize) -> Result<irvm::HostOutcome, Trap> {
        let r = self.kept.take().unwrap_or(Ref::Null);
        Ok(irvm::HostOutcome::Done(match index {
            0 => vec![Value::Ref(r)],
            _ => vec![Value::Ref(r.clone()), Value::Ref(r)],
        }))
    }
}

struct YieldingModule;

impl HostModule for YieldingModule {
    fn name(&self) -> &str {
        "yielding"
    }
    fn version(&self) -> u32 {
        1
    }
    fn functions(&self) -> Vec<HostFunctionDecl> {
        ["good", "bad"]
            .into_iter()
            .map(|name| HostFunctionDecl {
                name: name.into(),
                calling_convention: "0r_r".into(),
            })
            .collect()
    }
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        Ok(Box::new(YieldsThenReturns { kept: None }))
    }
}

#[test]
fn refs_returned_by_a_resumed_host_call_are_counted_exactly() {
    const YIELDING: &str = r#"vm.module @y version 0
vm.type !env.obj
vm.import @env.make cconv "0i_r"
vm.import @yielding.good cconv "0r_r"
vm.import @yielding.bad cconv "0r_r"

vm.export @good
vm.func @good() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  vm.call.yieldable @yielding.good(%R0) -> ^bb1(%r0)
^bb1:
  vm.return %r0
}

vm.export @bad
vm.func @bad() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  vm.call.yieldable @yielding.bad(%r0) -> ^bb1(%r1)
^bb1:
  vm.return %r1
}
"#;
    let base = live();
    let mut ctx = context_with(&[&YieldingModule], YIELDING, "y.vmasm");
    let good = ctx.function("y.good").unwrap();
    let bad = ctx.function("y.bad").unwrap();
    for _ in 0..2 {
        let out = ctx.invoke(&good, &[]).unwrap();
        assert_eq!(out[0].as_ref().unwrap().ref_count(), 1);
        assert_eq!(live(), base + 1);
        drop(out);
        assert_eq!(live(), base);
        let e = ctx.invoke(&bad, &[]).unwrap_err();
        assert!(e.message.contains("returned 2 values, expected 1"), "{e}");
        assert_eq!(live(), base, "a resumed call's extra result leaked");
    }
    drop(ctx);
    assert_eq!(live(), base);
}

/// Bytecode calls (`marshal_args`/`marshal_results`, `Ref::copy_within`):
/// a callee returning one register twice (borrowed, then moved last), its
/// argument unchanged, and one argument passed twice (borrowed and moved).
#[test]
fn a_bytecode_callee_returning_one_register_twice_or_its_argument_counts_exactly() {
    const CALLS: &str = r#"vm.module @c version 0
vm.type !env.obj
vm.import @env.make cconv "0i_r"

vm.func @twice(%r0: !env.obj) -> (!env.obj, !env.obj) {
^bb0:
  vm.return %r0, %R0
}

vm.func @same(%r0: !env.obj, %r1: !env.obj) -> (!env.obj) {
^bb0:
  vm.return %R1
}

vm.export @twice_into_two
vm.func @twice_into_two() -> (!env.obj, !env.obj, !env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1, %r2 = vm.call @twice(%r0)
  vm.return %r0, %r1, %r2
}

vm.export @twice_over_the_argument
vm.func @twice_over_the_argument() -> (!env.obj, !env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r0, %r1 = vm.call @twice(%R0)
  vm.return %r0, %r1
}

vm.export @argument_twice_borrowed_then_moved
vm.func @argument_twice_borrowed_then_moved() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @same(%r0, %R0)
  vm.return %r1
}
"#;
    let base = live();
    let mut ctx = context_with(&[], CALLS, "c.vmasm");
    for (name, n) in [
        ("twice_into_two", 3),
        ("twice_over_the_argument", 2),
        ("argument_twice_borrowed_then_moved", 1),
    ] {
        let out = run_in(&mut ctx, "c", name);
        let r = refs(&out);
        assert_eq!(r.len(), n, "{name}");
        assert!(r.iter().all(|x| x.ptr_eq(&r[0])), "{name}");
        // The results and `refs`'s clones.
        assert_eq!(r[0].ref_count(), 2 * n, "{name}");
        assert_eq!(live(), base + 1);
        drop((out, r));
        assert_eq!(live(), base, "{name}");
    }
    drop(ctx);
    assert_eq!(live(), base);
}

fn run_in(ctx: &mut Context, module: &str, name: &str) -> Vec<Value> {
    let f = ctx.function(&format!("{module}.{name}")).unwrap();
    ctx.invoke(&f, &[]).unwrap()
}
