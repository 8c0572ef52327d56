//! Contexts on one shared `local-task` device (`hal_module_sharing`), run
//! from several threads at once while other threads interrupt them and
//! their deadlines come: the lock-free fences, finalized command buffers
//! and deadline/interrupt flags of session 12 under contention. Every
//! call either gives the exact result or stops cleanly (CANCELLED or
//! DEADLINE_EXCEEDED), and the context's next call is whole.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use irvm::{Context, Module, StatusCode, TypeRegistry};
use irvm_hal::{hal_module_sharing, BufferView, DeviceConfig, DeviceOptions};

fn model(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/models")
        .join(path)
}

fn predict(ctx: &mut Context) -> Result<Vec<f32>, irvm::Trap> {
    let f = ctx.function("module.predict").unwrap();
    let input = BufferView::from_slice(&[4, 8], &[1f32; 32])
        .unwrap()
        .into_value();
    let out = ctx.invoke(&f, &[input])?;
    Ok(BufferView::from_value(&out[0])
        .unwrap()
        .to_vec::<f32>()
        .unwrap())
}

#[test]
fn calls_on_a_shared_task_device_from_threads_stop_cleanly_or_finish_exactly() {
    for file in ["embedded/mlp.vmfb", "mlp.vmfb"] {
        if !model(file).exists() {
            eprintln!("skipped: {} is missing", model(file).display());
            return;
        }
        let config = DeviceConfig::new(DeviceOptions::from_uri("local-task", Some(2)).unwrap());
        let hal = hal_module_sharing(config).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        std::thread::scope(|s| {
            let mut runners = Vec::new();
            for t in 0..4 {
                let hal = &hal;
                let done = done.clone();
                runners.push(s.spawn(move || {
                    let registry = TypeRegistry::new();
                    let mut ctx = Context::new(&registry);
                    ctx.register_host_module(hal).unwrap();
                    ctx.register_module(Module::from_file(model(file)).unwrap())
                        .unwrap();
                    let expected = predict(&mut ctx).unwrap();
                    let handle = ctx.interrupt_handle();
                    let interrupter = {
                        let handle = handle.clone();
                        let done = done.clone();
                        std::thread::spawn(move || {
                            while !done.load(Ordering::Relaxed) {
                                std::thread::sleep(Duration::from_micros(300 + 97 * t));
                                handle.interrupt();
                            }
                        })
                    };
                    let (mut finished, mut stopped) = (0, 0);
                    for i in 0..60u64 {
                        if i % 3 == t % 3 {
                            ctx.set_deadline(Some(Instant::now() + Duration::from_micros(50 * i)));
                        }
                        match predict(&mut ctx) {
                            Ok(v) => {
                                assert_eq!(v, expected, "{file}, thread {t}, call {i}");
                                finished += 1;
                            }
                            Err(e) => {
                                assert!(
                                    matches!(
                                        e.code,
                                        StatusCode::Cancelled | StatusCode::DeadlineExceeded
                                    ),
                                    "{file}, thread {t}, call {i}: {e}"
                                );
                                stopped += 1;
                            }
                        }
                        ctx.set_deadline(None);
                        handle.clear();
                    }
                    done.store(true, Ordering::Relaxed);
                    interrupter.join().unwrap();
                    handle.clear();
                    // The context is whole after all that.
                    assert_eq!(predict(&mut ctx).unwrap(), expected, "{file}, thread {t}");
                    (finished, stopped)
                }));
            }
            for r in runners {
                let (finished, stopped) = r.join().unwrap();
                eprintln!("{file}: {finished} finished, {stopped} stopped");
            }
        });
    }
}
