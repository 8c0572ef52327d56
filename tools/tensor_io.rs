//! Tensor I/O for the commands that run code, as iree-run-module does it:
//! the `hal` module registered automatically for programs that import it,
//! `--input=2x3xf32=1,2,3,4,5,6` for `!hal.buffer_view` arguments, and
//! buffer-view results printed as `result[i]: hal.buffer_view` and the
//! tensor on the next line.

use std::sync::OnceLock;

use irvm::{Context, Value};

use irvm_hal as hal;

/// The `hal` device of the commands that run code, as iree-run-module's
/// flags choose it.
#[derive(clap::Args, Clone, Debug)]
pub struct DeviceArgs {
    /// The device that runs dispatches: `local-task` (workgroups of native
    /// executables spread over a worker pool) or `local-sync` (all on the
    /// calling thread). On `local-task` vmvx executables share the workers
    /// too, but under `--fuel` (one budget, spent in program order), which
    /// keeps them on the calling thread. Other drivers (cuda, vulkan, ...)
    /// are not available.
    #[arg(long = "device", default_value = "local-task")]
    pub device: String,
    /// The most workers of `local-task`: one per core up to this many (as
    /// in IREE: 64 by default, at most 256; 0 leaves no worker and is an
    /// error; a negative count, which IREE reads as the largest size,
    /// caps nothing).
    #[arg(
        long = "task_topology_max_group_count",
        default_value_t = 64,
        allow_negative_numbers = true
    )]
    pub max_group_count: i64,
    /// Load only vmvx bytecode executables: native (llvm-cpu) executables
    /// are machine code from the module and run with this process's
    /// rights, so refuse them for modules you do not trust. The device then
    /// reports no support for their formats, and a module built only for
    /// them fails at initialization.
    #[arg(long = "vmvx_only")]
    pub vmvx_only: bool,
}

impl DeviceArgs {
    /// The device options these flags ask for.
    pub fn options(&self) -> Result<hal::DeviceOptions, String> {
        let cap = usize::try_from(self.max_group_count).unwrap_or(usize::MAX);
        let count = hal::default_workers().min(cap);
        let mut options = hal::DeviceOptions::from_uri(&self.device, Some(count)).map_err(|e| {
            match e.starts_with("device paths") {
                true => format!("NOT_FOUND; {e}"),
                false => format!("NOT_FOUND; --device={}: {e}", self.device),
            }
        })?;
        if count == 0 && matches!(options.kind, hal::DeviceKind::Task { .. }) {
            // iree-run-module's words when its topology has no worker.
            return Err(
                "NOT_FOUND; --task_topology_nodes=current selected 1 node(s) but none \
                 contain any usable cores; no executors created; creating driver for device \
                 'local-task'"
                    .into(),
            );
        }
        options.native_executables = !self.vmvx_only;
        Ok(options)
    }
}

/// The device [`ensure_hal`] makes (set once by the command's flags), or
/// why the flags name none: as with iree-run-module, that is an error only
/// for a program that needs the `hal` module.
static DEVICE: OnceLock<Result<hal::DeviceOptions, String>> = OnceLock::new();

/// Dispatches run since the program started (counted when
/// [`set_device`] is asked to).
static DISPATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether [`DISPATCHES`] counts (`--print_statistics`).
static COUNT_DISPATCHES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The workers of the device [`set_device`] set: 0 for `local-sync`.
pub fn device_workers() -> usize {
    match DEVICE.get() {
        Some(Ok(o)) => match o.kind {
            hal::DeviceKind::Sync => 0,
            hal::DeviceKind::Task { .. } => o.concurrency(),
        },
        _ => 0,
    }
}

/// The device [`set_device`] set, as the profile names it.
pub fn device_label() -> String {
    match DEVICE.get() {
        Some(Ok(o)) => match o.kind {
            hal::DeviceKind::Sync => "local-sync".into(),
            hal::DeviceKind::Task { .. } => {
                let n = o.concurrency();
                format!("local-task, {n} worker{}", if n == 1 { "" } else { "s" })
            }
        },
        _ => "no device".into(),
    }
}

/// Dispatches counted so far (`--print_statistics`).
pub fn dispatch_count() -> u64 {
    DISPATCHES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets the device the `hal` module is made with; with `trace_dispatches`
/// each dispatch is printed to stderr (`--trace-execution`) as
/// `[hal.dispatch] EXECUTABLE::ENTRY (FORMAT) workgroups XxYxZ`; with
/// `count_dispatches` each is counted ([`dispatch_count`]); `engine`
/// (`--engine`) also runs vmvx executables.
pub fn set_device(
    args: &DeviceArgs,
    trace_dispatches: bool,
    count_dispatches: bool,
    engine: Option<irvm::Tier>,
) -> Result<(), String> {
    let options = args.options().map(|mut o| {
        o.tier = engine;
        o
    });
    COUNT_DISPATCHES.store(count_dispatches, std::sync::atomic::Ordering::Relaxed);
    let _ = DEVICE.set(options);
    if trace_dispatches {
        print_dispatches(DispatchLines::Stderr);
    }
    Ok(())
}

/// Where the `hal` module's dispatches are printed, one line each:
/// `[hal.dispatch] EXECUTABLE::ENTRY (FORMAT) workgroups XxYxZ`.
#[derive(Clone, Copy, Debug)]
pub enum DispatchLines {
    /// `irvm run --trace-execution`, next to the instruction trace.
    Stderr,
    /// `irvm dbg`, in the session's transcript.
    Stdout,
}

static DISPATCH_LINES: OnceLock<DispatchLines> = OnceLock::new();

/// Prints every dispatch of the `hal` modules made from now on.
pub fn print_dispatches(lines: DispatchLines) {
    let _ = DISPATCH_LINES.set(lines);
}

fn dispatch_hook(lines: Option<DispatchLines>, count: bool) -> hal::DispatchHook {
    hal::DispatchHook(std::sync::Arc::new(move |e: &hal::DispatchEvent<'_>| {
        if count {
            DISPATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let Some(lines) = lines else { return };
        let [x, y, z] = e.workgroups;
        let line = format!(
            "[hal.dispatch] {}::{} ({}) workgroups {x}x{y}x{z}",
            e.executable, e.entry, e.format
        );
        match lines {
            DispatchLines::Stderr => eprintln!("{line}"),
            DispatchLines::Stdout => {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
    }))
}

/// The device options `--device` and `--vmvx_only` chose, with the hook
/// that traces (`--trace_execution`) and counts (`--print_statistics`)
/// dispatches: the same for the hal and the inline HAL.
fn device_options() -> Result<hal::DeviceOptions, String> {
    let mut options = match DEVICE.get() {
        Some(Ok(options)) => options.clone(),
        Some(Err(e)) => return Err(e.clone()),
        None => hal::DeviceOptions::default(),
    };
    let lines = DISPATCH_LINES.get().copied();
    let count = COUNT_DISPATCHES.load(std::sync::atomic::Ordering::Relaxed);
    if lines.is_some() || count {
        options.on_dispatch = Some(dispatch_hook(lines, count));
    }
    Ok(options)
}

/// Registers the `hal` module in `ctx` unless a module named `hal` is
/// already there.
pub fn ensure_hal(ctx: &mut Context) -> Result<(), String> {
    if ctx.module_names().contains(&"hal") {
        return Ok(());
    }
    let module = hal::hal_module_with(device_options()?)
        .map_err(|e| format!("INTERNAL; building the hal module: {e}"))?;
    ctx.register_host_module(&module).map_err(|e| e.to_string())
}

/// Registers `hal_inline` and `hal_loader` in `ctx` unless they are there,
/// with the device options `--device` and `--vmvx_only` chose (the inline
/// HAL has no queue: its dispatches run on the calling thread).
pub fn ensure_inline_hal(ctx: &mut Context) -> Result<(), String> {
    if ctx.module_names().contains(&"hal_inline") {
        return Ok(());
    }
    let modules = hal::inline_modules_with(device_options()?)
        .map_err(|e| format!("INTERNAL; building the inline hal modules: {e}"))?;
    for module in &modules {
        ctx.register_host_module(module)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Parses a reference-typed `--input` as a buffer view: a tensor literal
/// (`4x8xf32=1`, `2x2xi32=[1 2][3 4]`, `f32=0.5`), raw bytes from a file
/// (`4xf32=@raw.bin` reads its first bytes, `4xf32=+raw.bin` the bytes
/// after those the last `@`/`+` of that file read), or an array from a
/// NumPy file (`@x.npy` reads its first array, `+x.npy` the next one of
/// the file last opened that way).
pub fn parse_buffer_view_input(text: &str) -> Result<Value, String> {
    // The caller adds which input this was.
    let fail = |m: String| m;
    if let Some(path) = text.strip_prefix('@') {
        return npy_input(path, true).map_err(fail);
    }
    if let Some(path) = text.strip_prefix('+') {
        return npy_input(path, false).map_err(fail);
    }
    // As iree-run-module: a value that starts with `@` or `+` names a file
    // (`f32=+1` too), never elements.
    let raw_file = text.split_once('=').and_then(|(meta, value)| {
        match (value.strip_prefix('@'), value.strip_prefix('+')) {
            (Some(path), _) => Some((meta, path, true)),
            (None, Some(path)) => Some((meta, path, false)),
            (None, None) => None,
        }
    });
    if let Some((meta, path, reopen)) = raw_file {
        let trap = |t: irvm::Trap| fail(format!("{}; {}", t.code, t.message));
        let spec = hal::TensorType::parse(meta).map_err(trap)?;
        let want = spec.byte_length().map_err(trap)?;
        check_input_size(want).map_err(fail)?;
        // As iree-run-module: the bytes the tensor needs, from the start
        // (`@`) or from where the file's stream stopped (`+`, which opens
        // the file when no input read it yet); a longer file, or an endless
        // stream, is read only that far, a shorter one is an error. The
        // streams are those of the NumPy inputs (one per path).
        let mut streams = open_stream(path, reopen).map_err(fail)?;
        let Some(reader) = streams.get_mut(path) else {
            return Err(format!("INTERNAL; `{path}` not open"));
        };
        // Read straight into the view's buffer (no second copy).
        return hal::BufferView::written_by(&spec.shape, spec.element_type, |b| {
            read_exactly_into(reader, b)
        })
        .map(hal::BufferView::into_value)
        .map_err(trap);
    }
    let limit = INPUT_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
    hal::parse_buffer_view_within(text, limit)
        .map(hal::BufferView::into_value)
        .map_err(|t| format!("{}; {}", t.code, t.message))
}

/// The most bytes one input tensor may take (`--max-memory-bytes`).
static INPUT_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Bounds every input tensor by `bytes` (the run's memory limit): inputs
/// are made before the call, outside the context's own accounting.
pub fn set_input_limit(bytes: u64) {
    INPUT_LIMIT.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

fn check_input_size(bytes: u64) -> Result<(), String> {
    let limit = INPUT_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
    if bytes > limit {
        return Err(format!(
            "RESOURCE_EXHAUSTED; an input tensor of {bytes} bytes is over the memory limit of \
             {limit} bytes (--max-memory-bytes)"
        ));
    }
    Ok(())
}

/// Fills `into` with the first bytes of `reader`; an early end is
/// iree-run-module's OUT_OF_RANGE.
pub(crate) fn read_exactly_into(
    mut reader: impl std::io::Read,
    into: &mut [u8],
) -> Result<(), irvm::Trap> {
    reader.read_exact(into).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => irvm::Trap::new(
            irvm::StatusCode::OutOfRange,
            "end-of-file encountered during read",
        ),
        _ => irvm::Trap::new(irvm::StatusCode::Unknown, format!("reading input: {e}")),
    })
}

/// An input file open at its read position.
type StreamReader = std::io::BufReader<std::fs::File>;

type Streams = std::sync::Mutex<std::collections::HashMap<String, StreamReader>>;

/// Files being read by `--input=@f`/`+f` (NumPy) and `--input=4xf32=@f`/`+f`
/// (raw bytes), open at their read position.
fn npy_streams() -> &'static Streams {
    static STREAMS: OnceLock<Streams> = OnceLock::new();
    STREAMS.get_or_init(Default::default)
}

/// The input streams, with `path`'s open: opened afresh when `reopen` or
/// when no input opened it yet, else where the last read left it.
fn open_stream(
    path: &str,
    reopen: bool,
) -> Result<std::sync::MutexGuard<'static, std::collections::HashMap<String, StreamReader>>, String>
{
    let mut streams = npy_streams().lock().unwrap_or_else(|e| e.into_inner());
    if reopen || !streams.contains_key(path) {
        let file = std::fs::File::open(path)
            .map_err(|e| format!("UNKNOWN; unable to open file `{path}`: {e}"))?;
        streams.insert(path.to_string(), std::io::BufReader::new(file));
    }
    Ok(streams)
}

fn npy_input(path: &str, reopen: bool) -> Result<Value, String> {
    if !path.ends_with(".npy") {
        // As iree-run-module: the extension decides, before any reading.
        return Err(
            "UNIMPLEMENTED; only numpy (.npy) files are supported for metadata-less variant I/O"
                .into(),
        );
    }
    let mut streams = open_stream(path, reopen)?;
    let Some(reader) = streams.get_mut(path) else {
        return Err(format!("INTERNAL; `{path}` not open"));
    };
    let view =
        crate::npy::read(reader, check_input_size).map_err(|e| format!("{e}; reading `{path}`"))?;
    Ok(view.into_value())
}

/// iree-run-module's result flags: where results go and what they are
/// compared against.
#[derive(clap::Args, Clone, Debug)]
pub struct ResultArgs {
    /// Where each result goes, in order: `-` (stdout), `@file.npy` or
    /// `+file.npy` (write or append NumPy), `@file.bin`/`+file.bin` (raw
    /// bytes), or empty to skip it.
    #[arg(long = "output", allow_hyphen_values = true)]
    outputs: Vec<String>,
    /// Most elements of each printed tensor (`...` marks the cut); a
    /// negative count (`-1`) sets no limit, as in iree-run-module.
    #[arg(
        long = "output_max_element_count",
        default_value_t = hal::DEFAULT_MAX_ELEMENTS,
        allow_hyphen_values = true,
        value_parser = element_count
    )]
    max_elements: usize,
    /// The expected value of each result (`3xf32=1,2,3`); compared instead
    /// of printing; a mismatch exits with status 1.
    #[arg(long = "expected_output", allow_hyphen_values = true)]
    expected: Vec<String>,
    /// Absolute tolerance for f16 in approximate mode.
    #[arg(long = "expected_f16_threshold", default_value_t = 0.001)]
    f16_threshold: f64,
    /// Absolute tolerance for bf16 in approximate mode.
    #[arg(long = "expected_bf16_threshold", default_value_t = 0.01)]
    bf16_threshold: f64,
    /// Absolute tolerance for f32 in approximate mode.
    #[arg(long = "expected_f32_threshold", default_value_t = 0.0001)]
    f32_threshold: f64,
    /// Absolute tolerance for f64 in approximate mode.
    #[arg(long = "expected_f64_threshold", default_value_t = 0.0001)]
    f64_threshold: f64,
    /// Relative tolerance in approximate mode.
    #[arg(long = "expected_rtol", default_value_t = 1e-5)]
    rtol: f64,
    /// `approximate` (equal values, or |actual - expected| <= atol + rtol *
    /// |expected| for finite ones; NaN equals NaN, an infinity only itself)
    /// or `exact` (byte equality).
    #[arg(long = "equality_mode", default_value = "approximate")]
    equality_mode: String,
}

/// `--output_max_element_count`'s value: a whole number; negative ones
/// mean no limit (iree-run-module keeps the count as a signed integer and
/// compares it as an unsigned size).
fn element_count(text: &str) -> Result<usize, String> {
    let count: i64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of elements"))?;
    Ok(usize::try_from(count).unwrap_or(usize::MAX))
}

/// What became of the results.
pub enum Outcome {
    /// Printed, written or matched.
    Done,
    /// `--expected_output` did not match (exit status 1).
    Mismatch,
}

/// One parsed `--expected_output`.
enum Expected {
    /// `(ignored)`, or `(null)` for a ref result: not compared.
    Skipped,
    /// The value result `i` must match.
    Value(Value),
}

impl ResultArgs {
    /// Prints, writes or checks `results` as the flags say; `plain`
    /// formats a result that is not a buffer view (`i32=5`, printed as
    /// `result[i]: i32=5`).
    /// `--expected_output` values are read by `deadline` (a file named
    /// there may be a FIFO nobody writes), or DEADLINE_EXCEEDED names the
    /// one being read.
    pub fn emit(
        &self,
        results: &[Value],
        deadline: Option<std::time::Instant>,
        plain: impl Fn(&Value, usize) -> Result<String, String>,
    ) -> Result<Outcome, String> {
        if !self.expected.is_empty() {
            return self.compare(results, deadline);
        }
        if self.outputs.is_empty() {
            for (i, v) in results.iter().enumerate() {
                let text = match hal::BufferView::from_value(v) {
                    Some(view) => {
                        format!("result[{i}]: hal.buffer_view\n{}\n", self.format(view, i)?)
                    }
                    None => format!("result[{i}]: {}\n", plain(v, self.max_elements)?),
                };
                crate::stdout::write_within(
                    deadline,
                    &format!("writing result {i} to stdout"),
                    text,
                )?;
            }
            return Ok(Outcome::Done);
        }
        if self.outputs.len() != results.len() {
            return Err(format!(
                "OUT_OF_RANGE; {} outputs specified but the provided variant list only has {} \
                 elements; outputting results",
                self.outputs.len(),
                results.len()
            ));
        }
        for (i, (target, v)) in self.outputs.iter().zip(results).enumerate() {
            self.output(i, target, v, deadline, &plain)?;
        }
        Ok(Outcome::Done)
    }

    fn format(&self, view: &hal::BufferView, i: usize) -> Result<String, String> {
        hal::format_buffer_view(view, self.max_elements)
            .map_err(|t| format!("{}; formatting result {i}: {}", t.code, t.message))
    }

    /// Prints result `i` (`-`) or writes it to a file (`@FILE`, `+FILE`);
    /// opening and writing the file are given up on at `deadline` (it may
    /// be a FIFO nobody reads).
    fn output(
        &self,
        i: usize,
        target: &str,
        v: &Value,
        deadline: Option<std::time::Instant>,
        plain: &dyn Fn(&Value, usize) -> Result<String, String>,
    ) -> Result<(), String> {
        if target.is_empty() {
            return Ok(());
        }
        let view = hal::BufferView::from_value(v);
        if target == "-" {
            let text = match view {
                Some(view) => format!("hal.buffer_view\n{}\n", self.format(view, i)?),
                None => format!("{}\n", plain(v, self.max_elements)?),
            };
            // stdout may be a pipe nobody reads: bounded as a file is.
            return crate::stdout::write_within(
                deadline,
                &format!("writing result {i} to stdout"),
                text,
            );
        }
        let (append, path) = match (target.strip_prefix('@'), target.strip_prefix('+')) {
            (Some(p), _) => (false, p),
            (_, Some(p)) => (true, p),
            _ => {
                return Err(format!(
                    "INVALID_ARGUMENT; output `{target}`: expected `-`, `@file` or `+file`"
                ))
            }
        };
        // The file is opened (created, or truncated for `@`) before the
        // result is looked at, as iree-run-module opens it: a result it
        // cannot write leaves the file there, empty for `@`.
        use std::io::Write;
        let owned = path.to_string();
        let mut file = crate::deadline::within(
            deadline,
            &format!("opening `{path}` for result {i}"),
            move || {
                std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(append)
                    .truncate(!append)
                    .open(&owned)
                    .map_err(|e| format!("UNAVAILABLE; opening `{owned}` for result {i}: {e}"))
            },
        )?;
        let (dims, ty, mut data) = file_contents(i, path, view, v)?;
        if ty.is_sub_byte() && path.ends_with(".npy") {
            // IREE writes the packed bytes under a header that promises one
            // byte per element (`|i1`, shape (4,) over 2 bytes of `4xi4`), a
            // file NumPy cannot load; irvm writes the elements the header
            // describes (docs/COMPATIBILITY.md).
            let count = dims
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
                .unwrap_or(u64::MAX);
            data = hal::subbyte::unpack(ty, count, &data).ok_or_else(|| {
                format!(
                    "UNIMPLEMENTED; result {i} ({}) cannot be written to `{path}` element by \
                     element",
                    hal::shape_text(&dims, ty)
                )
            })?;
        }
        let bytes = if path.ends_with(".npy") {
            crate::npy::write(&dims, ty, &data).map_err(|e| format!("{e}; writing `{path}`"))?
        } else {
            data
        };
        let owned = path.to_string();
        crate::deadline::within(
            deadline,
            &format!("writing result {i} to `{path}`"),
            move || {
                file.write_all(&bytes)
                    .map_err(|e| format!("UNAVAILABLE; writing result {i} to `{owned}`: {e}"))
            },
        )
    }

    /// Compares `results` with the `--expected_output`s as iree-run-module
    /// does: every expected value is parsed first (its files read, each by
    /// `deadline`), so a value that cannot be read fails the run before
    /// any comparison is printed; then a count that differs, or each
    /// result that differs, is a `[FAILED]` line.
    fn compare(
        &self,
        results: &[Value],
        deadline: Option<std::time::Instant>,
    ) -> Result<Outcome, String> {
        let exact = match self.equality_mode.as_str() {
            "exact" => true,
            "approximate" => false,
            other => {
                return Err(format!(
                    "INVALID_ARGUMENT; --equality_mode `{other}`: expected `approximate` or `exact`"
                ))
            }
        };
        let wanted = self.parse_expected(results, deadline)?;
        if wanted.len() != results.len() {
            outln!(
                "[FAILED] expected {} list elements but {} provided",
                wanted.len(),
                results.len()
            );
            return Ok(Outcome::Mismatch);
        }
        let mut all = true;
        for (i, (want, v)) in wanted.iter().zip(results).enumerate() {
            let want = match want {
                Expected::Skipped => continue,
                Expected::Value(want) => want,
            };
            if scalar_kind(v).is_some() {
                // Compared by value. (iree-run-module reports "variant
                // types mismatch; expected i32 but got i32" for every
                // scalar: docs/COMPATIBILITY.md.)
                if !self.scalars_match(want, v, exact) {
                    all = false;
                    let show = |x: &Value| {
                        crate::result_format::format_value(x, self.max_elements).unwrap_or_default()
                    };
                    outln!(
                        "[FAILED] result[{i}]: expected {} but got {}",
                        show(want),
                        show(v)
                    );
                }
                continue;
            }
            let Some(want) = hal::BufferView::from_value(want) else {
                return Err(format!(
                    "INVALID_ARGUMENT; expected output `{}` is not a buffer view",
                    self.expected[i].trim()
                ));
            };
            let Some(have) = hal::BufferView::from_value(v) else {
                outln!("[FAILED] result[{i}]: expected a buffer view, got {v}");
                all = false;
                continue;
            };
            if let Some(why) = self.mismatch(want, have, exact)? {
                all = false;
                // As iree-run-module: both views cut at its default count,
                // whatever --output_max_element_count says.
                let format = |view: &hal::BufferView| {
                    hal::format_buffer_view(view, hal::DEFAULT_MAX_ELEMENTS)
                        .map_err(|t| format!("{}; formatting result {i}: {}", t.code, t.message))
                };
                outln!(
                    "[FAILED] result[{i}]: {why}; expected that the view is equal to contents of \
                     a view of {}\n  expected:\n{}\n  actual:\n{}",
                    hal::shape_text(&want.shape, want.element_type),
                    format(want)?,
                    format(have)?
                );
            }
        }
        if all {
            outln!("[SUCCESS] all function outputs matched their expected values.");
            Ok(Outcome::Done)
        } else {
            Ok(Outcome::Mismatch)
        }
    }

    /// Parses every `--expected_output`, in order, as the value result `i`
    /// is compared with: a scalar result's as `--input` values of its type
    /// are, a ref result's as a buffer-view `--input` is (a literal, raw
    /// bytes `4xf32=@raw.bin`, NumPy arrays `@f.npy`, `+f.npy`). Each is
    /// given up on at `deadline` (DEADLINE_EXCEEDED naming it). More
    /// expected values than results fail here, as in iree-run-module,
    /// which parses them against the results' calling convention.
    fn parse_expected(
        &self,
        results: &[Value],
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<Expected>, String> {
        // As iree-run-module, the expected values read their NumPy files
        // afresh: `+f.npy` continues a file opened by an earlier expected
        // value, not one the inputs read.
        npy_streams()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let context = "parsing expected function outputs";
        let mut wanted = Vec::with_capacity(self.expected.len());
        for (i, text) in self.expected.iter().enumerate() {
            let text = text.trim().to_string();
            let Some(result) = results.get(i) else {
                return Err(format!(
                    "INVALID_ARGUMENT; function expected fewer input values: {} results, {} \
                     --expected_output given; parsing input `{text}`; {context}",
                    results.len(),
                    self.expected.len()
                ));
            };
            let kind = scalar_kind(result);
            // `(ignored)` skips a result; for a ref result `(null)` does too
            // (the reference parses both into the null ref it skips on).
            // For a scalar the reference reads `(ignored)` as 0 and then
            // fails every scalar; irvm skips it, as the flag's help says.
            if text == "(ignored)" || (text == "(null)" && kind.is_none()) {
                wanted.push(Expected::Skipped);
                continue;
            }
            let doing = format!("{context}, expected output `{text}`");
            let value = crate::deadline::within(deadline, &doing, move || {
                let parsed = match kind {
                    Some(kind) => crate::cmd_run::parse_input(&text, kind),
                    None => parse_buffer_view_input(&text),
                };
                parsed.map_err(|e| format!("{e}; parsing input `{text}`; {context}"))
            })?;
            wanted.push(Expected::Value(value));
        }
        Ok(wanted)
    }

    /// Whether scalar `have` equals `want`: integers exactly, floats within
    /// `--expected_f32_threshold`/`--expected_f64_threshold` (or exactly
    /// with `--equality_mode=exact`), NaN matching NaN.
    fn scalars_match(&self, want: &Value, have: &Value, exact: bool) -> bool {
        let close = |a: f64, b: f64, threshold: f64| {
            (a.is_nan() && b.is_nan()) || a == b || (!exact && (a - b).abs() <= threshold)
        };
        match (want, have) {
            (Value::I32(a), Value::I32(b)) => a == b,
            (Value::I64(a), Value::I64(b)) => a == b,
            (Value::F32(a), Value::F32(b)) => close(*a as f64, *b as f64, self.f32_threshold),
            (Value::F64(a), Value::F64(b)) => close(*a, *b, self.f64_threshold),
            _ => false,
        }
    }

    /// Why `have` does not match `want`, or `None`.
    fn mismatch(
        &self,
        want: &hal::BufferView,
        have: &hal::BufferView,
        exact: bool,
    ) -> Result<Option<String>, String> {
        if want.shape != have.shape || want.element_type != have.element_type {
            return Ok(Some(format!(
                "metadata is {}; expected that the view matches {}",
                hal::shape_text(&have.shape, have.element_type),
                hal::shape_text(&want.shape, want.element_type)
            )));
        }
        let read = |v: &hal::BufferView| {
            v.buffer
                .to_vec()
                .map_err(|t| format!("{}; {}", t.code, t.message))
        };
        let (a, b) = (read(have)?, read(want)?);
        let ty = have.element_type;
        if ty.is_sub_byte() {
            return Ok(sub_byte_mismatch(ty, have.element_count(), &a, &b));
        }
        let size = ty.byte_size().max(1);
        let atol = match ty.name().as_str() {
            "f16" => Some(self.f16_threshold),
            "bf16" => Some(self.bf16_threshold),
            "f32" => Some(self.f32_threshold),
            "f64" => Some(self.f64_threshold),
            _ => None,
        };
        for (k, (x, y)) in a.chunks_exact(size).zip(b.chunks_exact(size)).enumerate() {
            let equal = match (exact, atol) {
                (false, Some(atol)) => {
                    let (x, y) = (ty.element_as_f64(x), ty.element_as_f64(y));
                    // As in iree-run-module: equal values match whatever
                    // the tolerances (INF and INF, whose difference is NaN;
                    // any value under a negative or NaN tolerance), and an
                    // infinity matches only itself (the tolerance of an
                    // expected INF, rtol * INF, would take any value).
                    x == y
                        || (x.is_nan() && y.is_nan())
                        || (x.is_finite()
                            && y.is_finite()
                            && (x - y).abs() <= atol + self.rtol * y.abs())
                }
                _ => x == y,
            };
            if !equal {
                return Ok(Some(format!(
                    "element at index {k} ({}) does not match the expected ({})",
                    ty.format_element(x),
                    ty.format_element(y)
                )));
            }
        }
        Ok(None)
    }
}

/// Where two packed sub-byte tensors of `count` elements differ, element by
/// element (the padding bits after the last element are not compared).
fn sub_byte_mismatch(
    ty: hal::ElementType,
    count: Result<u64, irvm::Trap>,
    have: &[u8],
    want: &[u8],
) -> Option<String> {
    let count = match count {
        Ok(count) => count,
        Err(t) => return Some(t.message),
    };
    (0..count).find_map(|k| {
        let x = hal::subbyte::get(have, ty.bits(), k);
        let y = hal::subbyte::get(want, ty.bits(), k);
        let text = |v: Option<u64>| v.map_or("?".to_string(), |v| hal::subbyte::format(ty, v));
        (x != y || x.is_none()).then(|| {
            format!(
                "element at index {k} ({}) does not match the expected ({})",
                text(x),
                text(y)
            )
        })
    })
}

/// The `--input` kind letter of a scalar result, or `None` for refs.
fn scalar_kind(v: &Value) -> Option<char> {
    irvm::ValType::of(v)
        .map(crate::cmd_run::kind_of)
        .filter(|&k| k != 'r')
}

/// The shape, element type and bytes `--output=@FILE` writes for result
/// `i`, as iree-run-module's `iree_tooling_create_buffer_view_from_variant`
/// makes them: a buffer view as it is; a `!hal.buffer` as a 1-D `i8` array
/// of its bytes; a null ref as an empty `i8` array; a number as a 0-d array
/// of its type. A `!vm.buffer` is written as a `!hal.buffer` is, a 1-D
/// `i8` array of its bytes: the reference means to do the same (it wraps
/// the buffer's memory in a HAL buffer) but fails on its own alignment
/// rule (`OUT_OF_RANGE; imported heap buffer data must be aligned to 64`;
/// docs/COMPATIBILITY.md). Lists and other objects have no bytes to write.
fn file_contents(
    i: usize,
    path: &str,
    view: Option<&hal::BufferView>,
    v: &Value,
) -> Result<(Vec<i64>, hal::ElementType, Vec<u8>), String> {
    let read = |t: irvm::Trap| format!("{}; reading result {i}: {}", t.code, t.message);
    if let Some(view) = view {
        let data = view.buffer.to_vec().map_err(read)?;
        return Ok((view.shape.clone(), view.element_type, data));
    }
    let bytes_of = |data: Vec<u8>| {
        let len = i64::try_from(data.len()).unwrap_or(i64::MAX);
        (vec![len], hal::ElementType::I8, data)
    };
    Ok(match v {
        Value::I32(x) => (vec![], hal::ElementType::I32, x.to_le_bytes().to_vec()),
        Value::I64(x) => (vec![], hal::ElementType::I64, x.to_le_bytes().to_vec()),
        Value::F32(x) => (vec![], hal::ElementType::F32, x.to_le_bytes().to_vec()),
        Value::F64(x) => (vec![], hal::ElementType::F64, x.to_le_bytes().to_vec()),
        Value::None | Value::Ref(irvm::Ref::Null) => bytes_of(Vec::new()),
        Value::Ref(irvm::Ref::Buffer(buffer)) => bytes_of(buffer.to_vec()),
        Value::Ref(r) => match r.downcast::<hal::HalBuffer>() {
            Some(buffer) => bytes_of(buffer.to_vec().map_err(read)?),
            None => {
                return Err(format!(
                    "INVALID_ARGUMENT; output {i} is not a !hal.buffer_view, !hal.buffer or \
                     number and cannot be written to `{path}`"
                ))
            }
        },
    })
}
