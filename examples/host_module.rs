//! Links a bytecode module against a host module written in Rust: the host
//! provides `env.print_i32` and a custom ref type, `!env.counter`, whose
//! objects the bytecode creates, keeps in a `!vm.list<!env.counter>`,
//! compares with `vm.cmp.eq.ref` and hands back to the host.
//!
//! Run with `cargo run --example host_module [-- START]`.
//!
//! `examples/counter.vmfb` is assembled from `examples/counter.vmasm` with
//! `iree-as-module --output=examples/counter.vmfb examples/counter.vmasm`.

use std::sync::atomic::{AtomicI32, Ordering};

use irvm::{Context, HostRef, Module, NativeModule, Trap, TypeRegistry};

/// The host object behind `!env.counter`. Host objects are shared by every
/// holder of a ref, possibly on several threads, so their mutable state is
/// atomic (or behind a `Mutex`).
struct Counter {
    total: AtomicI32,
}

/// Per-context state of the `env` module: what the program printed.
#[derive(Default)]
struct Console {
    lines: Vec<String>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let start: i32 = std::env::args().nth(1).map_or(Ok(5), |a| a.parse())?;

    let env = NativeModule::with_state("env", 1, Console::default)
        .ref_type("env.counter")
        // Calling conventions come from the closures' types: `0i_v`...
        .wrap("print_i32", |console: &mut Console, value: i32| {
            console.lines.push(value.to_string());
            println!("env.print_i32: {value}");
        })
        // ... `0i_r` ...
        .wrap("counter_new", |start: i32| {
            HostRef::new(
                "env.counter",
                Counter {
                    total: AtomicI32::new(start),
                },
            )
        })
        // ... and `0ri_i`; a wrong ref type or null is an error of the call.
        .wrap(
            "counter_add",
            |c: HostRef<Counter>, n: i32| -> Result<i32, Trap> {
                let old = c.total.load(Ordering::Relaxed);
                let total = old
                    .checked_add(n)
                    .ok_or_else(|| Trap::new(irvm::StatusCode::OutOfRange, "counter overflow"))?;
                c.total.store(total, Ordering::Relaxed);
                Ok(total)
            },
        );

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/counter.vmfb");
    let module = Module::from_file(path)?;
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.register_host_module(&env)?;
    ctx.register_module(module)?;

    // Checked once against the function's signature, then called with Rust values.
    let main = ctx.typed_func::<i32, i32>("counter_demo.main")?;
    let total = main.call(&mut ctx, start)?;
    println!("counter_demo.main({start}) = {total}");
    Ok(())
}
