//! Attacks on the host-call argument vector that borrows its refs from the
//! caller's registers (`vm/exec/host_args.rs`): the same register passed
//! borrowed and moved in both orders, variadic spans of refs, a host
//! function keeping clones past the call, failing, and a custom
//! `HostState` (not under `catch_unwind`) panicking out of the interpreter
//! with borrowed arguments in the vector, the context then reused and
//! dropped. Every object made must be dropped exactly once, and the host
//! function must see what the registers held.

use std::sync::{Arc, Mutex};

use irvm::{
    Context, HostFunctionDecl, HostModule, HostOutcome, HostRef, HostState, Module, NativeModule,
    Ref, StatusCode, Trap, TypeRegistry, Value,
};

use crate::tracked::{live, Tracked};

const PROGRAM: &str = r#"vm.module @app version 0
vm.type !env.obj
vm.import @env.make cconv "0i_r"
vm.import @spy.two cconv "0rr_i"
vm.import @spy.many cconv "0CrD_i"
vm.import @spy.boom cconv "0rr_i"

vm.export @borrowed_then_moved
vm.func @borrowed_then_moved() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %i1 = vm.call @spy.two(%r0, %R0)
  vm.return %i1
}

vm.export @moved_then_borrowed
vm.func @moved_then_borrowed() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %i1 = vm.call @spy.two(%R0, %r0)
  vm.return %i1
}

vm.export @borrowed_twice_then_used
vm.func @borrowed_twice_then_used() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %i1 = vm.call @spy.two(%r0, %r0)
  %i2 = vm.call @spy.two(%r0, %R0)
  %i3 = vm.add.i32 %i1, %i2
  vm.return %i3
}

vm.export @variadic_refs
vm.func @variadic_refs() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @env.make(%i0)
  %i1 = vm.call.variadic @spy.many segments[4](%r0, %r1, %r0, %R1)
  vm.return %i1
}

vm.export @list_and_element
vm.func @list_and_element() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %i1 = vm.const.i32.zero
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.list.alloc %i0 : !vm.list<!vm.opaque>
  vm.list.resize %r1, %i0
  vm.list.set.ref %r1, %i1, %R0
  %r2 = vm.list.get.ref %r1, %i1 : !vm.opaque
  %i2 = vm.call @spy.two(%R1, %r2)
  vm.return %i2
}

vm.export @panics
vm.func @panics() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @env.make(%i0)
  %i1 = vm.call @spy.boom(%r0, %R1)
  vm.return %i1
}
"#;

/// What `spy` saw and kept: each call's argument refs, as clones (which
/// count), held past the call until the test drops them.
#[derive(Default)]
struct Seen {
    calls: Vec<Vec<Ref>>,
}

struct Spy {
    seen: Arc<Mutex<Seen>>,
    fail_on: Option<usize>,
}

impl HostState for Spy {
    fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap> {
        let refs: Vec<Ref> = args
            .iter()
            .filter_map(|v| match v {
                Value::Ref(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        // Every count seen is at least the clone just made and the holder
        // the argument was read from.
        for r in &refs {
            assert!(
                r.is_null() || r.ref_count() >= 2,
                "a ref argument with no holder"
            );
        }
        let non_null = refs.iter().filter(|r| !r.is_null()).count() as i32;
        self.seen.lock().unwrap().calls.push(refs);
        match index {
            2 => panic!("spy.boom panics out of the interpreter"),
            i if Some(i) == self.fail_on => Err(Trap::new(StatusCode::Aborted, "spy refused")),
            _ => Ok(HostOutcome::Done(vec![Value::I32(non_null)])),
        }
    }
}

struct SpyModule {
    seen: Arc<Mutex<Seen>>,
    fail_on: Option<usize>,
}

impl HostModule for SpyModule {
    fn name(&self) -> &str {
        "spy"
    }
    fn version(&self) -> u32 {
        1
    }
    fn functions(&self) -> Vec<HostFunctionDecl> {
        [("two", "0rr_i"), ("many", "0CrD_i"), ("boom", "0rr_i")]
            .into_iter()
            .map(|(name, cc)| HostFunctionDecl {
                name: name.into(),
                calling_convention: cc.into(),
            })
            .collect()
    }
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        Ok(Box::new(Spy {
            seen: self.seen.clone(),
            fail_on: self.fail_on,
        }))
    }
}

fn context(fail_on: Option<usize>) -> (Context, Arc<Mutex<Seen>>) {
    let env = NativeModule::<()>::new("env", 1)
        .ref_type("env.obj")
        .wrap("make", |_: i32| HostRef::new("env.obj", Tracked::new()));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&env).unwrap();
    ctx.register_host_module(&SpyModule {
        seen: seen.clone(),
        fail_on,
    })
    .unwrap();
    ctx.register_module(Module::from_assembly(PROGRAM, "app.vmasm").unwrap())
        .unwrap();
    (ctx, seen)
}

fn run(ctx: &mut Context, name: &str) -> Result<i32, Trap> {
    let f = ctx.function(&format!("app.{name}")).unwrap();
    ctx.invoke(&f, &[]).map(|v| v[0].as_i32().unwrap())
}

/// The refs the last call saw, and drops everything kept.
fn last_seen(seen: &Mutex<Seen>) -> Vec<Ref> {
    let mut seen = seen.lock().unwrap();
    let last = seen.calls.pop().unwrap();
    seen.calls.clear();
    last
}

#[test]
fn the_same_register_borrowed_and_moved_is_one_live_object_dropped_once() {
    let base = live();
    let (mut ctx, seen) = context(None);

    // Borrowed first, then moved: both arguments are the object.
    assert_eq!(run(&mut ctx, "borrowed_then_moved").unwrap(), 2);
    let refs = last_seen(&seen);
    assert!(refs[0].ptr_eq(&refs[1]));
    // The clones kept past the call are the only holders left, and work.
    assert_eq!(refs[0].ref_count(), 2);
    assert_eq!(live(), base + 1);
    drop(refs);
    assert_eq!(live(), base, "the object outlived its last holder");

    // Moved first, then borrowed: the move emptied the register before the
    // second read (as the reference's retain-or-move does in order).
    assert_eq!(run(&mut ctx, "moved_then_borrowed").unwrap(), 1);
    let refs = last_seen(&seen);
    assert!(!refs[0].is_null() && refs[1].is_null());
    drop(refs);
    assert_eq!(live(), base);

    // Borrowed twice, then the register is used again (borrowed, moved).
    assert_eq!(run(&mut ctx, "borrowed_twice_then_used").unwrap(), 4);
    assert_eq!(live(), base + 1, "held only by the spy's clones");
    seen.lock().unwrap().calls.clear();
    assert_eq!(live(), base);
    drop(ctx);
    assert_eq!(live(), base);
}

#[test]
fn variadic_spans_of_refs_and_a_list_with_its_element() {
    let base = live();
    let (mut ctx, seen) = context(None);
    assert_eq!(run(&mut ctx, "variadic_refs").unwrap(), 4);
    let refs = last_seen(&seen);
    assert!(refs[0].ptr_eq(&refs[2]) && refs[1].ptr_eq(&refs[3]));
    assert!(!refs[0].ptr_eq(&refs[1]));
    assert_eq!(live(), base + 2);
    drop(refs);
    assert_eq!(live(), base);

    // The list moved, its element borrowed: the element's register keeps
    // it while the list (dropped after the call) does too.
    assert_eq!(run(&mut ctx, "list_and_element").unwrap(), 2);
    assert_eq!(live(), base + 1);
    seen.lock().unwrap().calls.clear();
    assert_eq!(live(), base);
}

#[test]
fn a_failing_host_call_drops_only_what_it_owned() {
    let base = live();
    let (mut ctx, seen) = context(Some(0));
    for name in [
        "borrowed_then_moved",
        "moved_then_borrowed",
        "borrowed_twice_then_used",
    ] {
        let e = run(&mut ctx, name).unwrap_err();
        assert_eq!(e.code, StatusCode::Aborted, "{e}");
        assert_eq!(live(), base + 1, "{name}");
        seen.lock().unwrap().calls.clear();
        assert_eq!(live(), base, "{name}");
    }
}

#[test]
fn a_custom_host_state_panicking_out_with_borrowed_arguments_leaves_counts_exact() {
    let base = live();
    let (mut ctx, seen) = context(None);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = run(&mut ctx, "panics");
    }));
    assert!(unwound.is_err());
    // The spy keeps clones of both arguments.
    let refs = last_seen(&seen);
    assert_eq!(refs.len(), 2);
    // The context is used again: its next host calls see their own
    // arguments, and nothing is dropped twice.
    for _ in 0..3 {
        assert_eq!(run(&mut ctx, "borrowed_then_moved").unwrap(), 2);
        seen.lock().unwrap().calls.clear();
    }
    drop(ctx);
    // Only the spy's clones hold the panicked call's objects now.
    assert_eq!(refs[0].ref_count(), 1);
    assert_eq!(refs[1].ref_count(), 1);
    assert_eq!(live(), base + 2);
    drop(refs);
    assert_eq!(
        live(),
        base,
        "a panicked call's argument leaked or was freed early"
    );
}

/// A host function that re-enters another context with its borrowed
/// argument slice as that call's arguments: the inner program keeps the
/// object in a global and moves it back through a host call of its own;
/// counts stay exact when both contexts end.
#[test]
fn a_host_function_re_entering_another_context_with_its_borrowed_arguments() {
    const INNER: &str = r#"vm.module @inner version 0
vm.import @spy.two cconv "0rr_i"

vm.export @keep
vm.func @keep(%r0: !vm.opaque, %r1: !vm.opaque) -> (i32) {
^bb0:
  vm.global.store.ref %r0, .refs[0] : !vm.opaque
  %i0 = vm.call @spy.two(%r1, %R0)
  vm.return %i0
}
"#;
    let base = live();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let registry = TypeRegistry::new();
    let mut inner = Context::new(&registry);
    inner
        .register_host_module(&SpyModule {
            seen: seen.clone(),
            fail_on: None,
        })
        .unwrap();
    inner
        .register_module(Module::from_assembly(INNER, "inner.vmasm").unwrap())
        .unwrap();
    let keep = inner.function("inner.keep").unwrap();
    let inner = Arc::new(Mutex::new(inner));

    let outer_program = r#"vm.module @outer version 0
vm.import @env.make cconv "0i_r"
vm.import @host.reenter cconv "0rr_i"

vm.export @main
vm.func @main() -> (i32) {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @env.make(%i0)
  %i1 = vm.call @host.reenter(%r0, %R1)
  %i2 = vm.call @host.reenter(%r0, %r0)
  %i3 = vm.add.i32 %i1, %i2
  vm.return %i3
}
"#;
    let env = NativeModule::<()>::new("env", 1)
        .ref_type("env.obj")
        .wrap("make", |_: i32| HostRef::new("env.obj", Tracked::new()));
    let i = inner.clone();
    let host = NativeModule::<()>::new("host", 0)
        .func("reenter", "0rr_i", move |args| {
            let mut inner = i.lock().unwrap();
            inner.invoke(&keep, args)
        })
        .unwrap();
    let mut outer = Context::new(&registry);
    outer.register_host_module(&env).unwrap();
    outer.register_host_module(&host).unwrap();
    outer
        .register_module(Module::from_assembly(outer_program, "outer.vmasm").unwrap())
        .unwrap();
    let main = outer.function("outer.main").unwrap();
    assert_eq!(outer.invoke(&main, &[]).unwrap()[0].as_i32(), Some(4));
    // r1 went to the spy (kept), r0 to the inner global (kept).
    assert_eq!(live(), base + 2);
    drop(outer);
    assert_eq!(live(), base + 2);
    seen.lock().unwrap().calls.clear();
    assert_eq!(live(), base + 1, "the inner global holds the first object");
    // (The host module's closure holds the inner context too.)
    drop(host);
    drop(inner);
    assert_eq!(live(), base, "the inner context's global leaked");
}
