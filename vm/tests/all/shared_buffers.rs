//! One buffer shared by contexts on different threads: every access is
//! made under the buffer's thread lease (vm/values/buffer/lease.rs), so sharing is sound
//! from safe code. A run that meets a buffer another thread's run holds
//! fails cleanly; closures wait for it; views share their root's lease.
//!
//! The module is `tests/data/shared_buffers.vmasm`, assembled in memory.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use irvm::{Buffer, Context, Module, NativeModule, Ref, StatusCode, TypeRegistry};

use crate::paths::data;

fn module() -> Module {
    Module::from_assembly_file(data("shared_buffers.vmasm"))
        .expect("tests/data/shared_buffers.vmasm assembles")
}

/// A context whose `host.pause` runs `pause`.
fn context(registry: &Arc<TypeRegistry>, pause: impl Fn() + Send + Sync + 'static) -> Context {
    let host = NativeModule::new("host", 1).wrap("pause", pause);
    let mut ctx = Context::new(registry);
    ctx.register_host_module(&host).expect("host registers");
    ctx.register_module(module()).expect("module registers");
    ctx
}

fn shared_buffer() -> Arc<Buffer> {
    Arc::new(Buffer::new(16).expect("16 bytes"))
}

fn element(buffer: &Buffer, i: usize) -> i32 {
    buffer.with_bytes(|b| i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()))
}

#[test]
fn a_run_holds_its_buffers_until_it_returns() {
    let registry = TypeRegistry::new();
    let buffer = shared_buffer();
    // The first context stops inside `host.pause`, after its first store,
    // until the test lets it go.
    let (holding_tx, holding_rx) = mpsc::channel::<()>();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let holding_tx = Mutex::new(holding_tx);
    let go_rx = Mutex::new(go_rx);
    let mut first = context(&registry, move || {
        holding_tx.lock().unwrap().send(()).unwrap();
        go_rx.lock().unwrap().recv().unwrap();
    });
    let store_pause = first
        .typed_func::<(Ref, i32), ()>("store_pause")
        .expect("store_pause");
    let arg = Ref::Buffer(buffer.clone());
    let runner = std::thread::spawn(move || store_pause.call(&mut first, (arg, 7)));
    holding_rx.recv().unwrap();

    // A second context on this thread cannot touch the buffer meanwhile.
    let mut second = context(&registry, || {});
    let bump = second.typed_func::<(Ref, i32), i32>("bump").unwrap();
    let e = bump
        .call(&mut second, (Ref::Buffer(buffer.clone()), 1))
        .expect_err("the buffer is held by the other thread's run");
    assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
    assert!(e.message.contains("in use by another thread"), "{e}");

    // A closure on a third thread waits until the run returns.
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (buffer, done) = (buffer.clone(), done.clone());
        std::thread::spawn(move || {
            let seen = (element(&buffer, 0), element(&buffer, 1));
            done.store(true, Ordering::SeqCst);
            seen
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !done.load(Ordering::SeqCst),
        "a closure read the buffer while another thread's run held it"
    );
    go_tx.send(()).unwrap();
    runner.join().unwrap().expect("store_pause finishes");
    // The reader saw both stores: it ran only after the run returned.
    assert_eq!(reader.join().unwrap(), (7, 8));

    // Afterwards the second context runs over the same buffer.
    assert_eq!(
        bump.call(&mut second, (Ref::Buffer(buffer.clone()), 5))
            .unwrap(),
        12
    );
}

#[test]
fn contexts_on_two_threads_share_a_buffer_soundly() {
    let registry = TypeRegistry::new();
    let buffer = shared_buffer();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let mut ctx = context(&registry, || {});
            let buffer = buffer.clone();
            std::thread::spawn(move || {
                let bump = ctx.typed_func::<(Ref, i32), i32>("bump").unwrap();
                let (mut done, mut refused) = (0u32, 0u32);
                for _ in 0..2000 {
                    match bump.call(&mut ctx, (Ref::Buffer(buffer.clone()), 100)) {
                        Ok(_) => done += 1,
                        Err(e) => {
                            assert_eq!(e.code, StatusCode::FailedPrecondition, "{e}");
                            refused += 1;
                        }
                    }
                }
                (done, refused)
            })
        })
        .collect();
    let done: u32 = workers.into_iter().map(|w| w.join().unwrap().0).sum();
    // Each completed call added exactly 100: no update was lost or torn.
    assert_eq!(element(&buffer, 0), done as i32 * 100);
}

#[test]
fn views_share_their_roots_lease() {
    let parent = shared_buffer();
    let view = Arc::new(Buffer::view(&parent, 4, 8).unwrap());
    parent
        .with_bytes_mut(|bytes| {
            bytes[4] = 1;
            // The view's bytes are the parent's: both are busy now.
            assert!(view.with_bytes_mut(|_| ()).is_err());
            assert_eq!(
                view.load::<4>(0).unwrap_err().code,
                StatusCode::FailedPrecondition
            );
        })
        .unwrap();
    assert_eq!(view.load::<4>(0).unwrap(), [1, 0, 0, 0]);
    view.store::<4>(1, [2, 0, 0, 0]).unwrap();
    assert_eq!(element(&parent, 2), 2);
}

/// A buffer a region of native work holds (`Buffer::lease_for_native_region`, the
/// hal's workgroups ending in the background) makes everyone wait: a run
/// on another thread (which would trap on another thread's run), a closure
/// borrow, and another region, whose wait can be given up.
#[test]
fn a_region_lease_makes_runs_and_borrows_wait() {
    let registry = TypeRegistry::new();
    let buffer = shared_buffer();
    let view = Arc::new(Buffer::view(&buffer, 4, 8).unwrap());
    let lease = view
        .lease_for_native_region(&mut || Ok(()))
        .expect("free")
        .expect("mutable");
    assert!(lease.covers(&buffer));
    // Another region waits, and gives up when told.
    let mut asked = 0;
    let e = buffer
        .lease_for_native_region(&mut || {
            asked += 1;
            match asked {
                3 => Err(irvm::Trap::new(StatusCode::Cancelled, "stopped")),
                _ => Ok(()),
            }
        })
        .unwrap_err();
    assert_eq!(e.code, StatusCode::Cancelled);
    // A run on another thread waits for the region rather than failing.
    let done = Arc::new(AtomicBool::new(false));
    let runner = {
        let (buffer, done) = (buffer.clone(), done.clone());
        std::thread::spawn(move || {
            let mut ctx = context(&registry, || {});
            let bump = ctx.typed_func::<(Ref, i32), i32>("bump").expect("bump");
            let r = bump.call(&mut ctx, (Ref::Buffer(buffer), 5));
            done.store(true, Ordering::SeqCst);
            r
        })
    };
    let reader = {
        let buffer = buffer.clone();
        std::thread::spawn(move || element(&buffer, 0))
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!done.load(Ordering::SeqCst), "the run did not wait");
    drop(lease);
    assert_eq!(runner.join().unwrap().expect("waited, then ran"), 5);
    // The closure borrow waited too: it read before or after the run.
    assert!([0, 5].contains(&reader.join().unwrap()));
    // Read-only buffers need no lease.
    let bytes: Arc<Vec<u8>> = Arc::new(vec![1, 2, 3]);
    let rodata = Arc::new(Buffer::borrowed(bytes, 0..3).unwrap());
    assert!(rodata
        .lease_for_native_region(&mut || Ok(()))
        .unwrap()
        .is_none());
}
