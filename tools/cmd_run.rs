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
    #[command(flatten)]
    limits: LimitArgs,
    /// Print every executed instruction with the values it reads (and its
    /// source position) to stderr.
    #[arg(long = "trace-execution")]
    trace_execution: bool,
}

/// Resource limits shared by the commands that run code.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Stop after this many instructions (RESOURCE_EXHAUSTED).
    #[arg(long)]
    fuel: Option<u64>,
    /// Stop when the call has run this many seconds (DEADLINE_EXCEEDED).
    #[arg(long)]
    timeout: Option<f64>,
    /// Deepest call stack, in frames (RESOURCE_EXHAUSTED beyond).
    #[arg(long = "max-stack-depth")]
    max_stack_depth: Option<usize>,
    /// Largest buffer a program may allocate, in bytes.
    #[arg(long = "max-buffer-bytes")]
    max_buffer_bytes: Option<u64>,
    /// Largest list a program may allocate, in elements.
    #[arg(long = "max-list-elements")]
    max_list_elements: Option<u32>,
}

impl LimitArgs {
    /// Applies the limits to `ctx` (the timeout counts from now).
    pub fn apply(&self, ctx: &mut Context) -> Result<(), String> {
        ctx.set_fuel(self.fuel);
        if let Some(t) = self.timeout {
            let d = std::time::Duration::try_from_secs_f64(t).map_err(|_| {
                format!("INVALID_ARGUMENT; --timeout `{t}` is not a number of seconds")
            })?;
            ctx.set_deadline(Some(std::time::Instant::now() + d));
        }
        if let Some(n) = self.max_stack_depth {
            if n == 0 {
                return Err("INVALID_ARGUMENT; --max-stack-depth must be at least 1".into());
            }
            let mut limits = ctx.limits();
            limits.max_stack_depth = n;
            ctx.set_limits(limits);
        }
        let mut limits = ctx.limits();
        if let Some(n) = self.max_buffer_bytes {
            limits.max_buffer_bytes = n;
        }
        if let Some(n) = self.max_list_elements {
            limits.max_list_elements = n;
        }
        ctx.set_limits(limits);
        Ok(())
    }
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

/// Why `irvm run` failed.
enum Failure {
    /// Bad flags, modules or inputs: printed as `irvm run: <message>`.
    Setup(String),
    /// The invocation trapped.
    Trap(irvm::Trap),
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Setup(message)
    }
}

/// A trap as a compiler-style diagnostic when its failing instruction has a
/// source position (`a.mlir:2:8: error: INVALID_ARGUMENT: ...`), followed by
/// the VM backtrace; otherwise `irvm <tool>: CODE; message` and the
/// backtrace.
pub fn describe_trap(tool: &str, trap: &irvm::Trap) -> String {
    let text = trap.to_string();
    match trap.backtrace.first().and_then(|f| f.source.first()) {
        Some(pos) => {
            let frames = text.split_once('\n').map(|(_, rest)| rest).unwrap_or("");
            format!("{pos}: error: {}: {}\n{frames}", trap.code, trap.message)
        }
        None => format!("irvm {tool}: {text}"),
    }
}

/// Runs `irvm run`.
pub fn main(args: RunArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Setup(message)) => {
            eprintln!("irvm run: {message}");
            ExitCode::FAILURE
        }
        Err(Failure::Trap(trap)) => {
            eprintln!("{}", describe_trap("run", &trap));
            ExitCode::FAILURE
        }
    }
}

fn run(args: &RunArgs) -> Result<(), Failure> {
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
        return Err(Failure::Setup(format!(
            "INVALID_ARGUMENT; expected {} arguments but passed {}; invoking function {sig}",
            kinds.len(),
            args.inputs.len()
        )));
    }
    let values = args
        .inputs
        .iter()
        .zip(&kinds)
        .map(|(t, &k)| parse_input(t, k))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{e}; parsing function inputs; {sig}"))?;
    args.limits.apply(&mut ctx)?;
    if args.trace_execution {
        ctx.set_observer(Some(Box::new(irvm::ExecutionTracer::new(Box::new(
            std::io::stderr(),
        )))));
    }
    println!("EXEC @{name}");
    let results = ctx.invoke(&func, &values).map_err(Failure::Trap)?;
    for (i, v) in results.iter().enumerate() {
        println!("result[{i}]: {v}");
    }
    Ok(())
}
