//! Regressions from an outside attack on the embedding API (issue 21): a
//! guest could make a call panic through a buffer held elsewhere, a view
//! dropped during a run kept its root's lease for good, the cycle collector
//! emptied reachable lists that another thread was moving, concurrent
//! pushes lost elements, a panicking panic payload escaped a host call, a
//! host object could claim a built-in type, and a long chain of views
//! overflowed the stack when dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use irvm::{
    Buffer, Context, ElementType, HostRef, List, Module, NativeModule, Ref, StatusCode, TypeDef,
    TypeRegistry, Value,
};

use crate::paths;

fn data(name: &str) -> Module {
    let path = paths::data(name);
    Module::from_assembly_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A context running tests/data/shared_buffers.vmasm whose `host.pause`
/// runs `pause`.
fn shared_buffers(pause: impl Fn() + Send + Sync + 'static) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&NativeModule::new("host", 1).wrap("pause", pause))
        .unwrap();
    ctx.register_module(data("shared_buffers.vmasm")).unwrap();
    ctx
}

#[test]
fn bulk_reads_of_a_buffer_held_by_another_run_trap() {
    let buffer = Arc::new(Buffer::new(16).unwrap());
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (held_tx, go_rx) = (Mutex::new(held_tx), Mutex::new(go_rx));
    let mut holder = shared_buffers(move || {
        held_tx.lock().unwrap().send(()).unwrap();
        go_rx.lock().unwrap().recv().unwrap();
    });
    let store_pause = holder.typed_func::<(Ref, i32), ()>("store_pause").unwrap();
    let arg = Ref::Buffer(buffer.clone());
    let runner = std::thread::spawn(move || store_pause.call(&mut holder, (arg, 7)));
    held_rx.recv().unwrap();

    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(data("bulk_reads.vmasm")).unwrap();
    let hash = ctx.typed_func::<Ref, i64>("hash").unwrap();
    let clone = ctx.typed_func::<Ref, Ref>("clone").unwrap();
    let e = hash
        .call(&mut ctx, Ref::Buffer(buffer.clone()))
        .unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    assert!(e.message.contains("another thread"), "{e}");
    let e = clone
        .call(&mut ctx, Ref::Buffer(buffer.clone()))
        .unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    go_tx.send(()).unwrap();
    runner.join().unwrap().unwrap();
    // Once the holder's call returned, the same reads work.
    assert!(hash.call(&mut ctx, Ref::Buffer(buffer)).is_ok());
}

#[test]
fn bulk_reads_inside_a_mutable_borrow_trap() {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(data("bulk_reads.vmasm")).unwrap();
    let hash = ctx.typed_func::<Ref, i64>("hash").unwrap();
    let buffer = Arc::new(Buffer::new(16).unwrap());
    let e = buffer
        .with_bytes_mut(|_| hash.call(&mut ctx, Ref::Buffer(buffer.clone())))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
}

#[test]
fn a_view_dropped_during_a_run_gives_its_roots_lease_back() {
    let root = Arc::new(Buffer::new(16).unwrap());
    let r = root.clone();
    // A host function writes through a short-lived view of `root`.
    let mut ctx = shared_buffers(move || {
        let view = Arc::new(Buffer::view(&r, 0, 8).unwrap());
        view.store::<4>(0, [9, 0, 0, 0]).unwrap();
    });
    let store_pause = ctx.typed_func::<(Ref, i32), ()>("store_pause").unwrap();
    let other = Ref::Buffer(Arc::new(Buffer::new(16).unwrap()));
    store_pause.call(&mut ctx, (other, 1)).unwrap();
    // Another thread reads the root, and another context's run stores to
    // it: neither waits nor fails.
    let (tx, rx) = mpsc::channel();
    let r = root.clone();
    std::thread::spawn(move || tx.send(r.with_bytes(|b| b[0])).unwrap());
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(9));
    let r = root.clone();
    let bumped = std::thread::spawn(move || {
        let mut ctx = shared_buffers(|| {});
        let bump = ctx.typed_func::<(Ref, i32), i32>("bump").unwrap();
        bump.call(&mut ctx, (Ref::Buffer(r), 1))
            .map_err(|e| e.to_string())
    })
    .join()
    .unwrap();
    assert!(bumped.is_ok(), "{bumped:?}");
}

#[test]
fn the_collector_keeps_lists_another_thread_is_moving() {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(data("moved_lists.vmasm")).unwrap();
    let pair = ctx.typed_func::<(), (Ref, Ref)>("pair").unwrap();
    for _round in 0..3 {
        // Each pair: W holds D (D[1] = 7), R is empty. The mover moves D
        // from W to R and drops W while the collector runs.
        let mut ws = Vec::new();
        let mut rs = Vec::new();
        for _ in 0..20_000 {
            let (Ref::List(w), Ref::List(r)) = pair.call(&mut ctx, ()).unwrap() else {
                panic!("pair returns two lists")
            };
            ws.push(w);
            rs.push(r);
        }
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            let (rs, done) = (&rs, &done);
            s.spawn(move || {
                // Moves spread over many collections, so that some fall
                // between a collection's reading of edges and of counts.
                for (n, (w, r)) in ws.into_iter().zip(rs).enumerate() {
                    let d = w.get_ref(0, true).unwrap();
                    r.set_ref(0, d).unwrap();
                    if n % 50 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
                done.store(true, Ordering::SeqCst);
            });
            while !done.load(Ordering::SeqCst) {
                ctx.collect_cycles();
            }
        });
        ctx.collect_cycles();
        for r in &rs {
            let Value::Ref(Ref::List(d)) = r.get(0).unwrap() else {
                panic!("R[0] is not a list")
            };
            assert_eq!(d.len(), 2, "a reachable list was emptied");
            assert_eq!(d.get_i32(1).unwrap(), 7);
        }
    }
}

#[test]
fn pushes_from_several_threads_all_land() {
    let list = Arc::new(List::new(TypeDef::Value(ElementType::I32), 0).unwrap());
    std::thread::scope(|s| {
        for t in 0..4 {
            let list = list.clone();
            s.spawn(move || {
                for i in 0..5000 {
                    list.push(Value::I32(t * 100_000 + i + 1)).unwrap();
                }
            });
        }
    });
    assert_eq!(list.len(), 20_000);
    let mut seen: Vec<i32> = (0..20_000).map(|i| list.get_i32(i).unwrap()).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 20_000, "every push has its own element");
}

/// A panic payload whose own drop panics.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload's drop panics too");
    }
}

#[test]
fn a_panic_whose_payload_panics_on_drop_is_still_a_trap() {
    let host = NativeModule::new("host", 1).wrap("boom", |x: i32| -> i32 {
        if x > 0 {
            std::panic::panic_any(Bomb)
        }
        x
    });
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&host).unwrap();
    let boom = ctx.typed_func::<i32, i32>("host.boom").unwrap();
    let e = boom.call(&mut ctx, 1).unwrap_err();
    assert_eq!(e.code, StatusCode::Internal, "{e}");
    assert_eq!(boom.call(&mut ctx, 0).unwrap(), 0);
}

#[test]
fn host_objects_cannot_take_built_in_type_names() {
    for name in ["vm.buffer", "vm.list", "vm.list<i32>"] {
        let made = std::panic::catch_unwind(|| HostRef::new(name, 42u64));
        assert!(made.is_err(), "a host object named {name}");
    }
    // Other names are fine.
    let tally = HostRef::new("host.tally", 1u32);
    assert!(tally.to_ref().ref_type().is_some());
}

#[test]
fn a_long_chain_of_views_drops_without_recursion() {
    let root = Arc::new(Buffer::new(64).unwrap());
    let mut view = root.clone();
    for _ in 0..1_000_000 {
        view = Arc::new(Buffer::view(&view, 0, 64).unwrap());
    }
    view.store::<4>(0, [1, 2, 3, 4]).unwrap();
    drop(view);
    assert_eq!(root.to_vec()[..4], [1, 2, 3, 4]);
}
