//! Reference counting under error paths: host objects with a drop counter
//! pass through registers, lists, globals and host calls, and then a trap,
//! a host error, a host panic, fuel exhaustion, or the context's end
//! interrupts the program. Every object created must be dropped exactly
//! once: no leak, no double drop.

use irvm::{Context, HostRef, Module, NativeModule, Ref, StatusCode, Trap, TypeRegistry, Value};

use crate::tracked::{live, Tracked};

const PROGRAM: &str = r#"vm.module @rc version 0
vm.type !env.obj
vm.type i32
vm.import @env.make cconv "0i_r"
vm.import @env.fail_with cconv "0r_i"
vm.import @env.boom cconv "0r_v"

vm.export @keep_in_global
vm.func @keep_in_global() -> () {
^bb0:
  %i0 = vm.const.i32 1
  %r0 = vm.call @env.make(%i0)
  vm.global.store.ref %r0, .refs[0] : !env.obj
  vm.return
}

vm.export @trap_holding
vm.func @trap_holding() -> () {
^bb0:
  %i0 = vm.const.i32 2
  %r0 = vm.call @env.make(%i0)
  %r1 = vm.call @env.make(%i0)
  %r2 = vm.list.alloc %i0 : !vm.list<!env.obj>
  vm.list.resize %r2, %i0
  %i1 = vm.const.i32.zero
  vm.list.set.ref %r2, %i1, %r1
  vm.fail %i0, "trap while holding refs"
}

vm.export @host_error
vm.func @host_error() -> (i32) {
^bb0:
  %i0 = vm.const.i32 3
  %r0 = vm.call @env.make(%i0)
  %i1 = vm.call @env.fail_with(%r0)
  vm.return %i1
}

vm.export @make_one
vm.func @make_one() -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 7
  %r0 = vm.call @env.make(%i0)
  vm.return %r0
}

vm.export @host_panic
vm.func @host_panic() -> () {
^bb0:
  %i0 = vm.const.i32 4
  %r0 = vm.call @env.make(%i0)
  vm.call @env.boom(%R0)
  vm.return
}

vm.export @spin_holding
vm.func @spin_holding() -> () {
^bb0:
  %i0 = vm.const.i32 5
  %r0 = vm.call @env.make(%i0)
  vm.br ^bb1()
^bb1:
  vm.br ^bb1()
}

vm.export @through_list
vm.func @through_list(%r0: !env.obj) -> (!env.obj) {
^bb0:
  %i0 = vm.const.i32 1
  %i1 = vm.const.i32.zero
  %r1 = vm.list.alloc %i0 : !vm.list<!env.obj>
  vm.list.resize %r1, %i0
  vm.list.set.ref %r1, %i1, %r0
  %r2 = vm.list.get.ref %r1, %i1 : !env.obj
  vm.return %r2
}

vm.export @many_cycles
vm.func @many_cycles(%i0: i32) -> () {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32 1
  %i3 = vm.const.i32 2
  vm.br ^bb1(%i1->%i4)
^bb1:
  %r0 = vm.call @env.make(%i4)
  %r1 = vm.list.alloc %i3 : !vm.list<!vm.opaque>
  vm.list.resize %r1, %i3
  vm.list.set.ref %r1, %i1, %r1
  vm.list.set.ref %r1, %i2, %r0
  %i4 = vm.add.i32 %i4, %i2
  %i5 = vm.cmp.lt.i32.s %i4, %i0
  vm.cond_br %i5, ^bb1(), ^bb2()
^bb2:
  vm.return
}

vm.export @cycle_holding
vm.func @cycle_holding() -> (!vm.ref<?>) {
^bb0:
  %i0 = vm.const.i32 6
  %r0 = vm.call @env.make(%i0)
  %i1 = vm.const.i32 2
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  %r1 = vm.list.alloc %i1 : !vm.list<!vm.opaque>
  vm.list.resize %r1, %i1
  %r2 = vm.list.alloc %i1 : !vm.list<!vm.opaque>
  vm.list.resize %r2, %i1
  vm.list.set.ref %r1, %i2, %r2
  vm.list.set.ref %r2, %i2, %r1
  vm.list.set.ref %r2, %i3, %r0
  vm.return %r1
}
"#;

fn env() -> NativeModule<()> {
    NativeModule::new("env", 1)
        .ref_type("env.obj")
        .wrap("make", |_: i32| HostRef::new("env.obj", Tracked::new()))
        .wrap("fail_with", |_: HostRef<Tracked>| -> Result<i32, Trap> {
            Err(Trap::new(StatusCode::InvalidArgument, "host refused"))
        })
        .wrap("boom", |_: HostRef<Tracked>| -> () {
            panic!("host function panicked");
        })
}

fn context() -> Context {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&env()).unwrap();
    ctx.register_module(Module::from_assembly(PROGRAM, "rc.vmasm").unwrap())
        .unwrap();
    ctx
}

fn call(ctx: &mut Context, name: &str, args: &[Value]) -> Result<Vec<Value>, Trap> {
    let f = ctx.function(&format!("rc.{name}")).unwrap();
    ctx.invoke(&f, args)
}

#[test]
fn every_host_object_is_dropped_once_on_every_path() {
    let base = live();
    {
        let mut ctx = context();

        // A ref kept in a global lives as long as the context.
        call(&mut ctx, "keep_in_global", &[]).unwrap();
        assert_eq!(live(), base + 1);

        // A trap with refs in registers and in a list releases them all.
        let err = call(&mut ctx, "trap_holding", &[]).unwrap_err();
        assert!(err.to_string().contains("trap while holding refs"), "{err}");
        assert_eq!(live(), base + 1, "trap leaked or over-released");

        // A host error: the argument and the caller's registers released.
        let err = call(&mut ctx, "host_error", &[]).unwrap_err();
        assert!(err.to_string().contains("host refused"), "{err}");
        assert_eq!(live(), base + 1, "host error leaked");

        // The next host call reads only its own argument: the failed
        // call's were dropped from the argument vector the stack keeps.
        let out = call(&mut ctx, "make_one", &[]).unwrap();
        assert_eq!(live(), base + 2);
        drop(out);
        assert_eq!(live(), base + 1, "a host call's result leaked");

        // A host panic becomes a trap; the moved argument is released.
        let err = call(&mut ctx, "host_panic", &[]).unwrap_err();
        assert_eq!(err.code, StatusCode::Internal, "{err}");
        assert_eq!(live(), base + 1, "host panic leaked");
        let out = call(&mut ctx, "make_one", &[]).unwrap();
        drop(out);
        assert_eq!(live(), base + 1, "a host call after a panic leaked");

        // Fuel exhaustion in a loop holding a ref.
        ctx.set_fuel(Some(1_000));
        let err = call(&mut ctx, "spin_holding", &[]).unwrap_err();
        assert_eq!(err.code, StatusCode::ResourceExhausted, "{err}");
        ctx.set_fuel(None);
        assert_eq!(live(), base + 1, "fuel exhaustion leaked");

        // A ref from the embedder through a list and back.
        let mine = Ref::host("env.obj", Tracked::new());
        assert_eq!(live(), base + 2);
        let out = call(&mut ctx, "through_list", &[Value::Ref(mine.clone())]).unwrap();
        match &out[0] {
            Value::Ref(r) => assert!(r.ptr_eq(&mine), "the same object comes back"),
            other => panic!("expected a ref, got {other:?}"),
        }
        drop(out);
        drop(mine);
        assert_eq!(live(), base + 1, "round trip leaked");

        // Wrong arguments are rejected without touching counts.
        assert!(call(&mut ctx, "through_list", &[Value::I32(1)]).is_err());
        assert_eq!(live(), base + 1);
    }
    // The context's end releases the global.
    assert_eq!(live(), base, "context drop leaked the global");
}

/// Two lists holding each other (and a host object) would leak under plain
/// reference counting, as they do in IREE; the context reclaims them once
/// nothing outside the cycle holds them.
#[test]
fn list_cycles_are_reclaimed() {
    let base = live();
    {
        let mut ctx = context();
        let out = call(&mut ctx, "cycle_holding", &[]).unwrap();
        assert_eq!(live(), base + 1);
        // Held by the embedder: the collector must leave it alone.
        assert_eq!(ctx.collect_cycles(), 0);
        assert_eq!(live(), base + 1);
        match &out[0] {
            Value::Ref(r) => assert_eq!(r.list().unwrap().len(), 2, "contents intact"),
            other => panic!("expected a list, got {other:?}"),
        }
        drop(out);
        assert_eq!(live(), base + 1, "the cycle keeps the object alive");
        assert_eq!(ctx.collect_cycles(), 2);
        assert_eq!(live(), base, "collecting the cycle released the object");

        // A cycle left behind is reclaimed when the context drops.
        call(&mut ctx, "cycle_holding", &[]).unwrap();
        assert_eq!(live(), base + 1);
    }
    assert_eq!(live(), base, "context drop leaked a list cycle");
}

/// A program that keeps making cycles runs in bounded memory: the context
/// reclaims them as it allocates, not only when it is dropped.
#[test]
fn cycles_are_reclaimed_while_the_program_runs() {
    let base = live();
    let mut ctx = context();
    call(&mut ctx, "many_cycles", &[Value::I32(10_000)]).unwrap();
    let left = live() - base;
    assert!(
        left <= 128,
        "{left} of 10000 cycles still alive after the run"
    );
    drop(ctx);
    assert_eq!(live(), base, "context drop leaked a list cycle");
}
