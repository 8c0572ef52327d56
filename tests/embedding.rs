//! The embedding API as a Rust program uses it: contexts that move between
//! threads, typed calls and their signature errors, function lookup errors.
//!
//! The module is `tests/data/embedding.vmasm`, assembled in memory.

use std::sync::Arc;

use irvm::{Context, Instance, Module, Ref, Value};

fn module() -> Module {
    Module::from_assembly_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/embedding.vmasm"
    ))
    .expect("tests/data/embedding.vmasm assembles")
}

fn context(instance: &Arc<Instance>) -> Context {
    let mut ctx = Context::new(instance);
    ctx.register_module(module()).expect("module registers");
    ctx
}

#[test]
fn a_context_moves_to_another_thread_and_runs_there() {
    let instance = Instance::new();
    let mut ctx = context(&instance);
    let add = ctx.function("add").unwrap();
    let make = ctx.function("make_buffer").unwrap();
    // A buffer made on this thread, kept here while the context moves.
    let kept = ctx.invoke(&make, &[Value::I64(8)]).unwrap();
    let worker = std::thread::spawn(move || {
        let sum = ctx.invoke(&add, &[Value::I32(40), Value::I32(2)]).unwrap();
        // A ref made on the worker travels back with the context.
        let made = ctx.invoke(&make, &[Value::I64(24)]).unwrap();
        (ctx, sum, made)
    });
    let (mut ctx, sum, made) = worker.join().unwrap();
    assert_eq!(sum[0].as_i32(), Some(42));
    let length = ctx.function("length").unwrap();
    for (values, bytes) in [(made, 24), (kept, 8)] {
        let Value::Ref(r @ Ref::Buffer(_)) = &values[0] else {
            panic!("expected a buffer, got {values:?}");
        };
        let n = ctx.invoke(&length, &[Value::Ref(r.clone())]).unwrap();
        assert_eq!(n[0].as_i64(), Some(bytes));
    }
}
