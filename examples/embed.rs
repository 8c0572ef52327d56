//! Embedding irvm: load a module, link it with a host module written in
//! Rust, call its exports through typed signatures, and hand the context to
//! a worker thread.
//!
//! `cargo run --example embed -- ../shared/conformance/module_benchmark.vmfb`
//! (the default path; the module imports `native_import_module.add_1`,
//! which the host module below provides).

use irvm::{Context, Module, NativeModule, Trap, TypeRegistry};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/conformance/module_benchmark.vmfb".into());
    let module = Module::from_file(&path)?;

    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    // A host module from plain closures; the calling convention (`0i_i`)
    // comes from the closure's types, and imports resolve by name.
    let host = NativeModule::new("native_import_module", 1).wrap("add_1", |x: i32| x + 1);
    ctx.register_host_module(&host)?;
    ctx.register_module(module)?; // links the imports, runs `__init`

    // Checked once against the function's signature; calls then take and
    // return Rust values.
    let sum = ctx.typed_func::<i32, i32>("loop_sum")?;
    let imported = ctx.typed_func::<i32, i32>("call_imported_func")?;
    println!("loop_sum(100) = {}", sum.call(&mut ctx, 100)?);
    println!("call_imported_func(10) = {}", imported.call(&mut ctx, 10)?);

    // What the errors say: a wrong signature names both, a missing export
    // lists the module's exports.
    if let Err(e) = ctx.typed_func::<(i64, i64), i32>("loop_sum") {
        println!("{e}");
    }
    if let Err(e) = ctx.function("no_such_function") {
        println!("{e}");
    }

    // The context (with its modules and their state) moves to another
    // thread; it is used from one thread at a time.
    let worker = std::thread::spawn(move || -> Result<(Context, i32), Trap> {
        let r = imported.call(&mut ctx, 20)?;
        Ok((ctx, r))
    });
    let (_ctx, r) = worker.join().expect("the worker does not panic")?;
    println!("call_imported_func(20) on a worker thread = {r}");
    Ok(())
}
