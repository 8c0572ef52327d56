//! Embedding irvm: load a module, link it with a host module written in
//! Rust, look up an export and call it with typed values.
//!
//! `cargo run --example embed -- ../shared/conformance/module_benchmark.vmfb`
//! (any module works; this one imports `native_import_module.add_1`, which
//! the host module below provides).

use irvm::{Context, Instance, Module, NativeModule, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/conformance/module_benchmark.vmfb".into());
    let module = Module::from_file(&path)?;

    let instance = Instance::new();
    let mut ctx = Context::new(&instance);
    // A host module from plain closures; imports resolve by `module.function`.
    let host = NativeModule::new("native_import_module", 1).wrap("add_1", |x: i32| x + 1);
    ctx.register_host_module(&host)?;
    ctx.register_module(module)?;

    for name in ctx.exports(None) {
        let func = ctx.function(&name).expect("exported");
        // Call the exports that take one i32, with 10.
        if func.arg_kinds() == ['i'] {
            match ctx.invoke(&func, &[Value::I32(10)]) {
                Ok(results) => {
                    let shown: Vec<String> = results.iter().map(|v| v.to_string()).collect();
                    println!("{}({}) -> {}", func.name, 10, shown.join(", "));
                }
                Err(trap) => println!("{} failed: {trap}", func.name),
            }
        }
    }
    Ok(())
}
