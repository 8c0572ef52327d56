//! Runs one program of `benchmarks/corpus` through irvm's embedding API, as
//! a crate depending on irvm would: load the module from its file, make a
//! context, register, look the export up, invoke it with one i32, print the
//! results. The time printed covers all of that (the in-process share of a
//! whole-process run).
//!
//! Usage: `irvm-embedder-bench MODULE FUNCTION INPUT [ENGINE]`, where
//! ENGINE is `auto` (the default), `interp` or `jit`.

use std::process::ExitCode;
use std::time::Instant;

use irvm::{Context, Module, Tier, TypeRegistry, Value};

fn run(args: &[String]) -> Result<(), String> {
    let [module, function, input, rest @ ..] = args else {
        return Err("usage: irvm-embedder-bench MODULE FUNCTION INPUT [auto|interp|jit]".into());
    };
    let input: i32 = input
        .parse()
        .map_err(|e| format!("INPUT `{input}` is not an i32: {e}"))?;
    let engine = match rest.first().map(String::as_str) {
        None | Some("auto") => Tier::Auto,
        Some("interp") => Tier::Interp,
        Some("jit") => Tier::Jit,
        Some(other) => return Err(format!("unknown engine `{other}` (auto, interp or jit)")),
    };
    let start = Instant::now();
    let module = Module::from_file(module).map_err(|e| format!("{module}: {e}"))?;
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(engine);
    ctx.register_module(module).map_err(|e| e.to_string())?;
    let func = ctx.function(function).map_err(|e| e.to_string())?;
    let results = ctx
        .invoke(&func, &[Value::I32(input)])
        .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let shown: Vec<String> = results.iter().map(|v| v.to_string()).collect();
    println!("result {}", shown.join(" "));
    println!("seconds {seconds:.6}");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("irvm-embedder-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
