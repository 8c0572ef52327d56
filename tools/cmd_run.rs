//! `irvm run`: invoke an exported function, with iree-run-module's flags and
//! output (`EXEC @fn`, then one `result[i]: <type>=<value>` line per result).

use std::process::ExitCode;

use irvm::dynamic::{DynamicModule, DynamicModuleSpec};
use irvm::{Context, Module, TypeRegistry, Value};

/// Arguments of `irvm run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// A module to load: a `.vmfb` file (`-`: read from stdin), or a
    /// dynamic host module `lib.so[@entry][?key=value&...]`. Repeat to load
    /// several, in order; the function is looked up in the last one.
    #[arg(long = "module")]
    modules: Vec<String>,
    /// The exported function to invoke; may be left out when the module
    /// exports one function (besides `__`-prefixed and `$` ones), as with
    /// iree-run-module.
    #[arg(long)]
    function: Option<String>,
    /// An argument value (`3`, `-1.5`); repeat once per argument.
    #[arg(long = "input", allow_hyphen_values = true)]
    inputs: Vec<String>,
    #[command(flatten)]
    device: crate::tensor_io::DeviceArgs,
    #[command(flatten)]
    queries: crate::hal_query::HalQueryArgs,
    #[command(flatten)]
    parameters: crate::parameters::ParameterArgs,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    results: crate::tensor_io::ResultArgs,
    /// Print every executed instruction with the values it reads (and its
    /// source position) to stderr.
    #[arg(long = "trace-execution")]
    trace_execution: bool,
    /// After the call, print to stderr what a user tuning a program wants:
    /// load and run time, instructions executed, calls, the deepest call
    /// stack, the most memory held, the functions compiled and those left
    /// to the interpreter with why, the ten dispatches that took the most
    /// time and the workers' busy fraction (counting runs the instruction-by-
    /// instruction loop, so the run is slower and compiles nothing; with
    /// `--engine=jit` or `--engine=auto` given, the run is not counted and
    /// compiles as it would without this flag).
    #[arg(long = "print_statistics")]
    print_statistics: bool,
    #[command(flatten)]
    profile: crate::profile::ProfileArgs,
}

/// What `--print_statistics` counts while the program runs.
#[derive(Default)]
pub struct Counts {
    instructions: u64,
    calls: u64,
    deepest: usize,
    depth: usize,
}

/// An observer that counts, then hands each instruction to `inner` (the
/// tracer, with `--trace-execution`).
struct Counter {
    counts: std::sync::Arc<std::sync::Mutex<Counts>>,
    inner: Option<Box<dyn irvm::Observer>>,
}

impl irvm::Observer for Counter {
    fn before_instruction(&mut self, view: &irvm::ExecView<'_>) -> irvm::Control {
        {
            let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            c.instructions += 1;
            if view.depth > c.depth {
                c.calls += (view.depth - c.depth) as u64;
            }
            c.depth = view.depth;
            c.deepest = c.deepest.max(view.depth);
        }
        match &mut self.inner {
            Some(inner) => inner.before_instruction(view),
            None => irvm::Control::Continue,
        }
    }
}

/// Figures measured around a run for `--print_statistics`.
pub struct RunFigures {
    /// Loading the modules and running their `__init`.
    pub load: std::time::Duration,
    /// What the run timed, and how long it took.
    pub run: (&'static str, std::time::Duration),
    /// Calls from bytecode to host functions (imports of the hal and of
    /// dynamic modules) during the run.
    pub imports: u64,
    /// hal dispatches during the run.
    pub dispatches: u64,
}

/// Prints `--print_statistics` to stderr: the figures, the counts (when the
/// run was observed), the most memory the context held, how many functions
/// were compiled, and each function the compiling tier left to the
/// interpreter with the reason (`Context::functions_left_to_interpreter`).
pub fn print_statistics(counts: Option<&Counts>, ctx: &Context, f: &RunFigures) {
    let ms = |d: std::time::Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
    let line = |label: &str, value: String| eprintln!("  {:<29}{value}", format!("{label}:"));
    eprintln!("[[ irvm statistics ]]");
    line("load time (modules, __init)", ms(f.load));
    line(&format!("run time ({})", f.run.0), ms(f.run.1));
    if let Some(c) = counts {
        line(
            "instructions executed",
            format!(
                "{} (the program's; vmvx kernels run in their executables' own contexts)",
                c.instructions
            ),
        );
        line(
            "calls into bytecode",
            format!("{} (the entry call included)", c.calls),
        );
    }
    line(
        "imports called",
        format!(
            "{} (host functions: the hal's, dynamic modules')",
            f.imports
        ),
    );
    line("dispatches", f.dispatches.to_string());
    if let Some(fuel) = ctx.fuel() {
        line("fuel left", fuel.to_string());
    }
    if let Some(c) = counts {
        line("deepest call stack", format!("{} frames", c.deepest));
    }
    line(
        "most memory held",
        format!(
            "{} bytes (buffers, lists, register stacks, globals; now {})",
            ctx.memory_peak(),
            ctx.memory_in_use()
        ),
    );
    let (compiled, bytes) = ctx.compiled_functions();
    line(
        "compiled functions",
        format!("{compiled} ({bytes} bytes of machine code; vmvx kernels compile in their executables' own contexts)"),
    );
    for left in ctx.functions_left_to_interpreter() {
        line(
            "left to the interpreter",
            format!("{}.{}: {}", left.module, left.function, left.reason),
        );
    }
}

/// Resource limits shared by the commands that run code.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Stop after this many instructions (RESOURCE_EXHAUSTED).
    #[arg(long)]
    fuel: Option<u64>,
    /// Stop when the command has run this many seconds: loading, `__init`,
    /// reading the inputs, the call, and reading the expected outputs or
    /// writing the output files (DEADLINE_EXCEEDED; given on the
    /// command line, it bounds reading flagfiles too). A decimal number of
    /// seconds, 0 or more; one past what the clock can represent (`inf`
    /// included) sets no deadline.
    #[arg(long, value_parser = crate::deadline::parse_timeout)]
    timeout: Option<std::time::Duration>,
    /// Deepest call stack, in frames (RESOURCE_EXHAUSTED beyond).
    #[arg(long = "max-stack-depth")]
    max_stack_depth: Option<usize>,
    /// Largest call stack in bytes, frames sized as the reference sizes
    /// them (default 1,036,288, the reference's; RESOURCE_EXHAUSTED beyond).
    #[arg(long = "max-stack-bytes")]
    max_stack_bytes: Option<u64>,
    /// Largest buffer a program may allocate, in bytes.
    #[arg(long = "max-buffer-bytes")]
    max_buffer_bytes: Option<u64>,
    /// Largest list a program may allocate, in elements.
    #[arg(long = "max-list-elements")]
    max_list_elements: Option<u32>,
    /// Most memory the programs may hold at once (buffers, lists, register
    /// stacks, module globals, and a compile while it runs), in bytes;
    /// default 8 GiB.
    #[arg(long = "max-memory-bytes")]
    pub max_memory_bytes: Option<u64>,
    /// How bytecode runs: `interp` (interpret every instruction), `jit`
    /// (compile every function to machine code when it first runs) or
    /// `auto` (compile functions whose loops are hot). Default: the
    /// IRVM_ENGINE environment variable, else auto. Results are the same.
    #[arg(long, value_parser = parse_engine)]
    pub engine: Option<irvm::Tier>,
}

fn parse_engine(s: &str) -> Result<irvm::Tier, String> {
    s.parse()
}

impl LimitArgs {
    /// Applies the limits to `ctx` (the timeout counts from now: it bounds
    /// loading, `__init` and the call together).
    pub fn apply(&self, ctx: &mut Context) -> Result<(), String> {
        if let Some(engine) = self.engine {
            ctx.set_tier(engine);
        }
        ctx.set_fuel(self.fuel);
        if let Some(d) = self.timeout {
            // A timeout beyond what the clock can represent is no deadline.
            ctx.set_deadline(std::time::Instant::now().checked_add(d));
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
        if let Some(n) = self.max_stack_bytes {
            limits.max_stack_bytes = n;
        }
        if let Some(n) = self.max_buffer_bytes {
            limits.max_buffer_bytes = n;
        }
        if let Some(n) = self.max_list_elements {
            limits.max_list_elements = n;
        }
        if let Some(n) = self.max_memory_bytes {
            limits.max_memory_bytes = n;
        }
        // Input tensors are made outside the context: bound them the same.
        crate::tensor_io::set_input_limit(limits.max_memory_bytes);
        ctx.set_limits(limits);
        Ok(())
    }
}

/// Loads every `--module` into a fresh context whose limits are set first,
/// so they bound each module's `__init` as well as what runs later.
/// The one function `main_module` exports that a user may run (exports
/// starting with `__` or holding `$` are internal), as iree-run-module
/// picks it when `--function` is left out.
fn only_export(ctx: &Context, main_module: &str) -> Result<String, String> {
    let runnable: Vec<String> = ctx
        .exports(Some(main_module))
        .into_iter()
        .filter(|n| !n.starts_with("__") && !n.contains('$'))
        .collect();
    match runnable.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("INVALID_ARGUMENT; no exported functions found in module; at least one must be present".into()),
        many => Err(format!(
            "INVALID_ARGUMENT; more than one exported function present; --function= must be specified explicitly (exports: {})",
            many.join(", ")
        )),
    }
}

/// Whether export `name` of bytecode module `module` uses the
/// async-external calling model: its reflection attribute `iree.abi.model`
/// is `coarse-fences` (IREE's `iree_tooling_append_async_fences` asks the
/// same), so its last two parameters are a wait and a signal fence.
pub fn uses_coarse_fences(ctx: &Context, module: &str, name: &str) -> bool {
    ctx.bytecode_modules()
        .into_iter()
        .rev()
        .find(|(_, n, _)| *n == module)
        .is_some_and(|(_, _, m)| irvm_hal::uses_coarse_fences(m, name))
}

/// After an async-external call returned: its signal fence must be
/// signalled (irvm's device finishes work before the call returns, so a
/// fence still pending will never be; iree-run-module would wait forever),
/// and a failed fence is the call's failure.
fn wait_for_finish(fence: &irvm_hal::Fence) -> Result<(), Failure> {
    finish_fence_outcome(fence).map_err(Failure::Setup)
}

/// What a signal fence says after the call that was to signal it
/// returned: signalled, failed (its status), or still pending (an error:
/// irvm's device has finished all work by then, so nothing will signal it).
pub fn finish_fence_outcome(fence: &irvm_hal::Fence) -> Result<(), String> {
    fence
        .outcome_after_call()
        .map_err(|(code, message)| format!("{code}; {message}"))
}

/// The loader's error for `path`, or a plainer one when the file is MLIR
/// source rather than a module.
pub fn explain_load_error(path: &str, e: irvm::errors::LoadError) -> String {
    use std::io::Read;
    let mut head = Vec::new();
    // Only a regular file is opened again (opening a FIFO would wait for a
    // writer).
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let looks_like_mlir = regular
        && std::fs::File::open(path)
            .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
            .is_ok()
        && std::str::from_utf8(&head).is_ok_and(|text| {
            let code = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("//"));
            code.is_some_and(|l| {
                [
                    "func.func",
                    "module",
                    "builtin.module",
                    "util.",
                    "#",
                    "!",
                    "%",
                    "stream.",
                    "hal.",
                    "flow.",
                ]
                .iter()
                .any(|p| l.starts_with(p))
            })
        });
    if looks_like_mlir {
        format!("loading module '{path}': this is MLIR source, not a module; compile it with iree-compile first")
    } else {
        format!("loading module '{path}': {e}")
    }
}

/// Most bytes `--module=-` reads from stdin.
const MAX_STDIN_MODULE_BYTES: u64 = 4 << 30;

/// All of stdin, at most `most` bytes (one more byte tells the caller it
/// held more).
fn read_stdin_module_bytes(most: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(most.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("loading module '-': cannot read stdin: {e}"))?;
    Ok(bytes)
}

/// A module read from stdin (`--module=-`): bytecode, or VM assembly text;
/// given up on at `deadline` (DEADLINE_EXCEEDED) when stdin has not ended
/// by then. The module is held in memory, so it counts against the
/// context's memory budget: stdin is read only up to `max_memory_bytes`,
/// and a longer one is refused as not fitting it (`u64::MAX`: no budget).
pub fn module_from_stdin(
    deadline: Option<std::time::Instant>,
    max_memory_bytes: u64,
) -> Result<Module, String> {
    let most = MAX_STDIN_MODULE_BYTES.min(max_memory_bytes);
    // A writer that keeps stdin open must not hold the command past
    // --timeout (loading counts).
    let bytes = crate::deadline::within(
        deadline,
        "loading module '-': reading stdin to its end",
        move || read_stdin_module_bytes(most),
    )?;
    if bytes.is_empty() {
        return Err("loading module '-': stdin is empty (no module was piped in)".to_string());
    }
    if bytes.len() as u64 > MAX_STDIN_MODULE_BYTES {
        return Err(format!(
            "loading module '-': stdin holds more than {MAX_STDIN_MODULE_BYTES} bytes"
        ));
    }
    if bytes.len() as u64 > most {
        return Err(format!(
            "RESOURCE_EXHAUSTED; loading module '-': the module read from stdin is over \
             {most} bytes, more than --max-memory-bytes allows (a module read into memory \
             counts against it)"
        ));
    }
    let loaded = if irvm::Module::looks_like_assembly(&bytes) {
        let text = String::from_utf8(bytes)
            .map_err(|_| "loading module '-': VM assembly is not UTF-8".to_string())?;
        Module::from_assembly(&text, "<stdin>")
    } else {
        Module::from_bytes(bytes)
    };
    loaded.map_err(|e| format!("loading module '-': {e}"))
}

pub fn load_context(modules: &[String], limits: &LimitArgs) -> Result<Context, String> {
    load_modules(modules, limits, false).map(|(ctx, _)| ctx)
}

/// [`load_context`], leaving the bytecode modules' `__init`s to the caller
/// (a debugger runs them under its control): returned in the order they
/// must run, before anything else.
pub fn load_context_deferring_inits(
    modules: &[String],
    limits: &LimitArgs,
) -> Result<(Context, Vec<irvm::Func>), String> {
    load_modules(modules, limits, true)
}

/// Loads `modules` into a new context; with `defer_inits`, their `__init`s
/// are returned instead of run.
fn load_modules(
    modules: &[String],
    limits: &LimitArgs,
    defer_inits: bool,
) -> Result<(Context, Vec<irvm::Func>), String> {
    let mut inits = Vec::new();
    if modules.is_empty() {
        return Err(
            "INVALID_ARGUMENT; no user module specified; use --module=file.vmfb to load \
                    from a file or --module=- to load from stdin"
                .into(),
        );
    }
    let from_stdin = modules.iter().filter(|m| *m == "-").count();
    if from_stdin > 1 {
        return Err(format!(
            "INVALID_ARGUMENT; --module=- is given {from_stdin} times: stdin holds one module"
        ));
    }
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    limits.apply(&mut ctx)?;
    // Profiled from the start: `__init` creates the executables.
    if let Some(p) = crate::profile::current() {
        ctx.set_profile(Some(p));
    }
    for spec in modules {
        if DynamicModuleSpec::looks_dynamic(spec) {
            let m = DynamicModule::load_spec(spec).map_err(|e| e.to_string())?;
            ctx.register_host_module(&m).map_err(|e| e.to_string())?;
        } else {
            let m = if spec == "-" {
                module_from_stdin(ctx.resources().deadline(), ctx.limits().max_memory_bytes)?
            } else {
                Module::from_file(spec).map_err(|e| explain_load_error(spec, e))?
            };
            if irvm_hal::module_needs_hal(&m) {
                crate::tensor_io::ensure_hal(&mut ctx)?;
            }
            if irvm_hal::module_needs_inline_hal(&m) {
                crate::tensor_io::ensure_inline_hal(&mut ctx)?;
            }
            if crate::parameters::needs_io_parameters(&m) {
                crate::parameters::ensure_io_parameters(&mut ctx)?;
            }
            let loading = |e: irvm::errors::LinkError| match e {
                irvm::errors::LinkError::ModuleMemory { .. } => {
                    format!("loading module '{spec}': {e}")
                }
                e => e.to_string(),
            };
            if defer_inits {
                inits.extend(ctx.register_module_deferring_init(m).map_err(loading)?);
            } else {
                ctx.register_module(m).map_err(loading)?;
            }
        }
    }
    Ok((ctx, inits))
}

/// The calling-convention letter of a value type, as [`parse_input`]
/// takes it.
pub fn kind_of(t: irvm::ValType) -> char {
    match t {
        irvm::ValType::I32 => 'i',
        irvm::ValType::I64 => 'I',
        irvm::ValType::F32 => 'f',
        irvm::ValType::F64 => 'F',
        irvm::ValType::Ref => 'r',
    }
}

/// The calling-convention letter of each parameter of `func`, as
/// [`parse_input`] takes them.
pub fn input_kinds(func: &irvm::Func) -> Vec<char> {
    func.params().iter().map(|&t| kind_of(t)).collect()
}

/// Parses each of `inputs` as a value of the calling-convention kind
/// beside it in `kinds` (the caller has checked the counts), given up on
/// at `deadline` (an input file may be a FIFO nobody writes) or when
/// `give_up` is; an error names the input.
pub fn parse_inputs_within(
    deadline: Option<std::time::Instant>,
    give_up: Option<&crate::deadline::GiveUp>,
    inputs: &[String],
    kinds: &[char],
) -> Result<Vec<Value>, String> {
    // Each input on its own, so that a deadline names the one being read.
    inputs
        .iter()
        .zip(kinds)
        .map(|(t, &k)| parse_input_within(deadline, give_up, t, k, String::new()))
        .collect()
}

/// [`parse_input`] given up on at `deadline` (DEADLINE_EXCEEDED naming the
/// input) or when `give_up` is (CANCELLED); a parse error names the input,
/// then `context`.
fn parse_input_within(
    deadline: Option<std::time::Instant>,
    give_up: Option<&crate::deadline::GiveUp>,
    text: &str,
    kind: char,
    context: String,
) -> Result<Value, String> {
    let doing = format!("parsing function inputs, input `{}`", text.trim());
    let text = text.to_string();
    crate::deadline::within_unless(deadline, give_up, &doing, move || {
        parse_input(&text, kind)
            .map_err(|e| format!("{e}; parsing input `{}`{context}", text.trim()))
    })
}

/// Parses `text` as a value of calling-convention kind `kind`, as
/// `iree-run-module` does (see [`crate::scalar_input`]).
pub fn parse_input(text: &str, kind: char) -> Result<Value, String> {
    let t = text.trim();
    if kind == 'r' {
        // As the reference: `(null)` and `(ignored)` are a null ref.
        if t == "(null)" || t == "(ignored)" {
            return Ok(Value::Ref(irvm::Ref::Null));
        }
        return crate::tensor_io::parse_buffer_view_input(text);
    }
    if t.is_empty() {
        return Err("INVALID_ARGUMENT; no value specified for input".into());
    }
    // Files and storage hold tensors, not scalars; the reference's
    // messages.
    if t.starts_with(['@', '+', '*']) && !t.ends_with(".npy") {
        return Err(
            "UNIMPLEMENTED; only numpy (.npy) files are supported for metadata-less \
                    variant I/O"
                .into(),
        );
    }
    if t.starts_with(['@', '+', '*', '&']) {
        return Err(format!(
            "INVALID_ARGUMENT; function signature mismatch: expected cconv type `r` but \
             provided type `{kind}`"
        ));
    }
    let ty = match kind {
        'i' => "i32",
        'I' => "i64",
        'f' => "f32",
        'F' => "f64",
        _ => {
            return Err(format!(
            "UNIMPLEMENTED; input `{text}`: arguments of kind `{kind}` cannot be given on the command line"
        ))
        }
    };
    crate::scalar_input::parse_scalar(t, kind)
        .ok_or_else(|| format!("INVALID_ARGUMENT; parsing value `{t}` as {ty}"))
}

/// Why `irvm run` failed.
enum Failure {
    /// Bad flags, modules or inputs: printed as `irvm run: <message>`.
    Setup(String),
    /// The invocation trapped.
    Trap(irvm::Trap),
    /// `--expected_output` did not match (already reported on stdout).
    Mismatch,
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
    if let Some(code) = args.queries.answer("run") {
        return code;
    }
    let outcome = run(&args);
    if outcome.is_err() {
        crate::profile::write_after_failure(&args.profile, "irvm run", &args.modules);
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Setup(message)) => {
            eprintln!("irvm run: {message}");
            ExitCode::FAILURE
        }
        Err(Failure::Mismatch) => ExitCode::FAILURE,
        Err(Failure::Trap(trap)) => {
            eprintln!("{}", describe_trap("run", &trap));
            ExitCode::FAILURE
        }
    }
}

fn run(args: &RunArgs) -> Result<(), Failure> {
    crate::profile::start(&args.profile, args.print_statistics)?;
    crate::parameters::set(&args.parameters);
    crate::tensor_io::set_device(
        &args.device,
        args.trace_execution,
        args.print_statistics,
        args.limits.engine,
    )?;
    let loading = std::time::Instant::now();
    let mut ctx = load_context(&args.modules, &args.limits)?;
    let load_time = loading.elapsed();
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    // An empty --function (a flagfile's `--function=""` default) is none.
    let only = match args.function.as_deref().filter(|f| !f.is_empty()) {
        Some(f) => crate::flags::function_name(f).to_string(),
        None => only_export(&ctx, &main_module)?,
    };
    let name = only.as_str();
    let func = ctx
        .function(&format!("{main_module}.{name}"))
        .map_err(|e| e.to_string())?;
    let kinds = crate::cmd_run::input_kinds(&func);
    let sig = format!("`{}` ({})", func.name(), func.calling_convention());
    // As iree-run-module: each input takes the next parameter, so one too
    // many fails while parsing (before EXEC), one too few when invoking.
    // Parsing is bounded by --timeout: an input file may be a FIFO nobody
    // writes, a literal may splat gigabytes.
    // Each input on its own, so that a deadline names the one being read.
    let deadline = ctx.resources().deadline();
    let mut values = Vec::with_capacity(kinds.len());
    for (k, text) in args.inputs.iter().enumerate() {
        let Some(&kind) = kinds.get(k) else {
            return Err(Failure::Setup(format!(
                "INVALID_ARGUMENT; function expected fewer input values; parsing input \
                 `{}`; parsing function inputs; {sig}",
                text.trim()
            )));
        };
        let context = format!("; parsing function inputs; {sig}");
        values.push(parse_input_within(deadline, None, text, kind, context)?);
    }
    // A function of the async-external model (`iree.abi.model` is
    // `coarse-fences`) takes a wait fence and a signal fence after its
    // inputs: as iree-run-module does, pass no wait fence (null) and a
    // fresh signal fence, which is waited on after the call.
    let finish_fence = uses_coarse_fences(&ctx, &main_module, name).then(|| {
        let fence = irvm_hal::Fence::new(false);
        values.push(Value::Ref(irvm::Ref::Null));
        values.push(Value::Ref(fence.clone().into_ref()));
        fence
    });
    if values.len() < kinds.len() {
        outln!("EXEC @{name}");
        return Err(Failure::Setup(format!(
            "INVALID_ARGUMENT; input list and function mismatch; expected {} arguments but \
             passed {}; invoking function '{name}'; {sig}",
            kinds.len(),
            values.len()
        )));
    }
    let tracer: Option<Box<dyn irvm::Observer>> = args.trace_execution.then(|| {
        Box::new(irvm::ExecutionTracer::new(Box::new(std::io::stderr()))) as Box<dyn irvm::Observer>
    });
    let counts = std::sync::Arc::new(std::sync::Mutex::new(Counts::default()));
    // Counting observes every instruction, so the interpreter runs them
    // all; an engine asked for by name (`--engine=jit|auto`) runs as it
    // would without the flag, and the counts are left out.
    let counted = args.print_statistics
        && !matches!(args.limits.engine, Some(irvm::Tier::Jit | irvm::Tier::Auto));
    if counted {
        ctx.set_observer(Some(Box::new(Counter {
            counts: counts.clone(),
            inner: tracer,
        })));
    } else if tracer.is_some() {
        ctx.set_observer(tracer);
    }
    let profile = crate::profile::current();
    if profile.is_some() {
        // Ctrl-C ends the call, not the process: the profile is written.
        // Installed before `EXEC` is printed, so that a Ctrl-C sent once
        // the line is seen always finds it.
        crate::profile::sigint::interrupt_on_sigint(ctx.interrupt_handle());
    }
    outln!("EXEC @{name}");
    let (imports, dispatches) = (ctx.host_calls(), crate::tensor_io::dispatch_count());
    crate::profile::measure_from_here();
    let running = std::time::Instant::now();
    let started = profile.as_ref().map(|p| p.now_ns());
    let invoked = ctx.invoke(&func, &values);
    let run_time = running.elapsed();
    if let (Some(p), Some(start)) = (&profile, started) {
        p.span(
            irvm::profile::SpanKind::Invocation,
            &format!("@{name}"),
            start,
            p.now_ns(),
        );
    }
    let profiled = crate::profile::finish();
    if args.print_statistics {
        let counts = counts.lock().unwrap_or_else(|e| e.into_inner());
        let figures = RunFigures {
            load: load_time,
            run: ("the call", run_time),
            imports: ctx.host_calls() - imports,
            dispatches: crate::tensor_io::dispatch_count() - dispatches,
        };
        print_statistics(counted.then_some(&*counts), &ctx, &figures);
        if let Some(data) = &profiled {
            crate::profile::summary::print(
                data,
                crate::tensor_io::device_workers(),
                run_time,
                counted || args.trace_execution,
            );
        }
    }
    // A profile that cannot be written is reported, and the results or
    // the trap still are; the exit status says it failed.
    let mut unwritten = false;
    if let Some(data) = &profiled {
        if let Err(e) = crate::profile::write_files(
            &args.profile,
            data,
            &crate::profile::RunInfo {
                tool: "irvm run",
                modules: &args.modules,
                functions: &[format!("@{name}")],
                device: crate::tensor_io::device_label(),
            },
        ) {
            eprintln!("irvm run: {e}");
            unwritten = true;
        }
    }
    let results = invoked.map_err(Failure::Trap)?;
    if let Some(fence) = &finish_fence {
        wait_for_finish(fence)?;
    }
    // Results computed from an archive that shrank meanwhile are not
    // printed (and a result that is a view of the archive is checked
    // again once printed).
    crate::parameters::check_intact()?;
    let outcome = args
        .results
        .emit(&results, deadline, crate::result_format::format_value)?;
    crate::parameters::check_intact()?;
    match outcome {
        crate::tensor_io::Outcome::Done if !unwritten => Ok(()),
        // Already reported: fail without another message.
        _ => Err(Failure::Mismatch),
    }
}
