//! The interpreter on arbitrary modules: load, link, then call every export
//! with zero arguments of its calling convention under a fuel budget and
//! small limits. Traps are fine; panics, crashes and hangs are bugs.
#![no_main]

use irvm::{Context, Limits, Module, Ref, TypeRegistry, ValType, Value};
use libfuzzer_sys::fuzz_target;

fn zero(t: &ValType) -> Value {
    match t {
        ValType::I32 => Value::I32(0),
        ValType::I64 => Value::I64(0),
        ValType::F32 => Value::F32(0.0),
        ValType::F64 => Value::F64(0.0),
        ValType::Ref => Value::Ref(Ref::Null),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(module) = Module::from_bytes(data.to_vec()) else {
        return;
    };
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.set_limits(Limits {
        max_stack_depth: 64,
        max_buffer_bytes: 1 << 20,
        max_list_elements: 1 << 16,
        ..Limits::default()
    });
    // Fuel also bounds each module's __init.
    ctx.set_fuel(Some(100_000));
    let name = module.name().to_string();
    if ctx.register_module(module).is_err() {
        return;
    }
    for export in ctx.exports(Some(&name)) {
        let Ok(f) = ctx.function(&format!("{name}.{export}")) else {
            continue;
        };
        let args: Vec<Value> = f.params().iter().map(zero).collect();
        ctx.set_fuel(Some(20_000));
        let _ = ctx.invoke(&f, &args);
    }
});
