//! `irvm run`: invoke an exported function, with iree-run-module's flags and
//! output (`EXEC @fn`, then one `result[i]: <type>=<value>` line per result).

use std::process::ExitCode;

use irvm::dynamic::{DynamicModule, DynamicModuleSpec};
use irvm::{Context, Instance, Module, Value};

/// Arguments of `irvm run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// A module to load: a `.vmfb` file, or a dynamic host module
    /// `lib.so[@entry][?key=value&...]`. Repeat to load several, in order;
    /// the function is looked up in the last one.
    #[arg(long = "module", required = true)]
    modules: Vec<String>,
    /// The exported function to invoke.
    #[arg(long)]
    function: String,
    /// An argument value (`3`, `-1.5`); repeat once per argument.
    #[arg(long = "input", allow_hyphen_values = true)]
    inputs: Vec<String>,
    /// Accepted for iree-run-module compatibility; irvm has no HAL devices.
    #[arg(long, hide = true)]
    device: Option<String>,
}

/// Loads every `--module` into a fresh context.
pub fn load_context(modules: &[String]) -> Result<Context, String> {
    let instance = Instance::new();
    let mut ctx = Context::new(&instance);
    for spec in modules {
        if DynamicModuleSpec::looks_dynamic(spec) {
            let m = DynamicModule::load_spec(spec).map_err(|e| e.to_string())?;
            ctx.register_host_module(&m).map_err(|e| e.to_string())?;
        } else {
            let m = Module::from_file(spec).map_err(|e| format!("loading module '{spec}': {e}"))?;
            ctx.register_module(m).map_err(|e| e.to_string())?;
        }
    }
    Ok(ctx)
}

/// Parses `text` as a value of calling-convention kind `kind`.
pub fn parse_input(text: &str, kind: char) -> Result<Value, String> {
    let t = text.trim();
    let bad = |ty: &str| format!("INVALID_ARGUMENT; parsing value `{text}` as {ty}");
    match kind {
        'i' => parse_int(t)
            .and_then(|v| {
                i32::try_from(v)
                    .ok()
                    .or_else(|| u32::try_from(v).ok().map(|u| u as i32))
            })
            .map(Value::I32)
            .ok_or_else(|| bad("i32")),
        'I' => parse_int(t)
            .and_then(|v| {
                i64::try_from(v)
                    .ok()
                    .or_else(|| u64::try_from(v).ok().map(|u| u as i64))
            })
            .map(Value::I64)
            .ok_or_else(|| bad("i64")),
        'f' => t.parse::<f32>().map(Value::F32).map_err(|_| bad("f32")),
        'F' => t.parse::<f64>().map(Value::F64).map_err(|_| bad("f64")),
        _ => Err(format!(
            "UNIMPLEMENTED; input `{text}`: reference arguments cannot be given on the command line"
        )),
    }
}

fn parse_int(t: &str) -> Option<i128> {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i128::from_str_radix(h, 16).ok()?
    } else {
        digits.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Runs `irvm run`.
pub fn main(args: RunArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("irvm run: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &RunArgs) -> Result<(), String> {
    let _ = &args.device;
    let mut ctx = load_context(&args.modules)?;
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let name = args.function.trim_start_matches('@');
    let func = ctx
        .function(&format!("{main_module}.{name}"))
        .ok_or_else(|| {
            format!("NOT_FOUND; no function `{name}` exported by module `{main_module}`")
        })?;
    let kinds = func.arg_kinds();
    let sig = format!("`{}` ({})", func.name, func.signature);
    if args.inputs.len() != kinds.len() {
        println!("EXEC @{name}");
        return Err(format!(
            "INVALID_ARGUMENT; expected {} arguments but passed {}; invoking function {sig}",
            kinds.len(),
            args.inputs.len()
        ));
    }
    let values = args
        .inputs
        .iter()
        .zip(&kinds)
        .map(|(t, &k)| parse_input(t, k))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{e}; parsing function inputs; {sig}"))?;
    println!("EXEC @{name}");
    let results = ctx.invoke(&func, &values).map_err(|e| format!("{e}"))?;
    for (i, v) in results.iter().enumerate() {
        println!("result[{i}]: {v}");
    }
    Ok(())
}
