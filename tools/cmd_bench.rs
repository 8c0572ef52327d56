//! `irvm bench`: time exported functions in-process, in the manner of
//! `iree-benchmark-module` (same `--module`/`--function`/`--input` flags,
//! Google-Benchmark-style table). Each benchmark calls the function
//! repeatedly on one context until `--benchmark_min_time` has passed, then
//! reports wall time and process CPU time per call.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use irvm::{Context, Func, Value};

use crate::cmd_run::{load_context, parse_inputs_within, LimitArgs};

/// Arguments of `irvm bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// A module to load (`.vmfb`, or a dynamic host module
    /// `lib.so[@entry][?key=value&...]`); repeat to load several, in order.
    #[arg(long = "module")]
    modules: Vec<String>,
    /// An exported function of the last module to time; repeat for several.
    /// Without it, every export of the last module that takes no inputs
    /// (an async-external one takes only its wait and signal fences) and
    /// every benchmark wrapper (`iree.benchmark` = `entry` or `dispatch`),
    /// as iree-benchmark-module picks them.
    #[arg(long = "function")]
    functions: Vec<String>,
    /// An argument value; repeat once per argument (same for every function).
    #[arg(long = "input", allow_hyphen_values = true)]
    inputs: Vec<String>,
    /// Minimum wall time per benchmark, in seconds (`0.5`) or with an `s`
    /// suffix (`0.5s`), or an exact iteration count with an `x` suffix
    /// (`1000x`, for instruction counting), as Google Benchmark accepts it.
    #[arg(long = "benchmark_min_time", default_value = "0.5")]
    min_time: String,
    /// How many times to repeat each benchmark (each row is one
    /// repetition; with more than one, `_mean`, `_median`, `_stddev` and
    /// `_cv` rows follow, as Google Benchmark adds them).
    #[arg(long = "benchmark_repetitions", default_value_t = 1)]
    repetitions: u32,
    /// Only benchmarks whose name (`BM_<fn>/process_time/real_time`)
    /// matches this regular expression; a leading `-` excludes matches
    /// instead.
    #[arg(long = "benchmark_filter", allow_hyphen_values = true)]
    filter: Option<String>,
    /// Time unit of the results: `ns`, `us`, `ms` (iree-benchmark-module's)
    /// or `s`; by default `us` for a dispatch benchmark
    /// (`iree.benchmark = "dispatch"`) and `ms` for any other function, as
    /// iree-benchmark-module chooses.
    #[arg(long = "benchmark_time_unit")]
    time_unit: Option<String>,
    /// Format of the results on stdout: `console`, `json` or `csv`.
    #[arg(long = "benchmark_format", default_value = "console")]
    format: String,
    /// Also write the results to this file ...
    #[arg(long = "benchmark_out")]
    out: Option<std::path::PathBuf>,
    /// ... in this format (`json`, `console` or `csv`).
    #[arg(long = "benchmark_out_format", default_value = "json")]
    out_format: String,
    /// Print the benchmarks' names (after `--benchmark_filter`) and exit.
    #[arg(long = "benchmark_list_tests")]
    list_tests: bool,
    /// Seconds each benchmark runs untimed before its first repetition.
    #[arg(long = "benchmark_min_warmup_time", default_value_t = 0.0)]
    min_warmup_time: f64,
    /// One batch (`--batch_size` calls) and one repetition per benchmark,
    /// whatever the other flags say: checks that everything runs.
    #[arg(long = "benchmark_dry_run")]
    dry_run: bool,
    /// With repetitions, report only the `_mean`/`_median`/`_stddev`/`_cv`
    /// rows (on stdout and in `--benchmark_out`).
    #[arg(long = "benchmark_report_aggregates_only")]
    report_aggregates_only: bool,
    /// With repetitions, show only the aggregate rows on stdout
    /// (`--benchmark_out` still gets every row).
    #[arg(long = "benchmark_display_aggregates_only")]
    display_aggregates_only: bool,
    /// `key=value,...` pairs added to the report's context (the console
    /// header lines and the JSON `context` object).
    #[arg(long = "benchmark_context")]
    context: Option<String>,
    /// Iterations per timed step (the iteration count is a multiple of
    /// it), as iree-benchmark-module counts them: one call of an ordinary
    /// function (any repetition is compiled into it), one call of a
    /// dispatch benchmark with it as the repeat count, or that many calls
    /// of an async-external function.
    #[arg(long = "batch_size", default_value_t = 1)]
    batch_size: u32,
    /// Fence timelines an async-external function's calls within a batch
    /// are spread over (each call waits for the one before it on its
    /// timeline); the batch size is rounded up to a multiple of it. Other
    /// functions run on one timeline, as in iree-benchmark-module.
    #[arg(long = "batch_concurrency", default_value_t = 1)]
    batch_concurrency: u32,
    /// Keep the results of the last call and print, write or check them
    /// after the table as `irvm run` does (`--output`, `--expected_output`;
    /// one `--function`).
    #[arg(long = "enable_output_processing")]
    enable_output_processing: bool,
    #[command(flatten)]
    results: crate::tensor_io::ResultArgs,
    /// Print every executed instruction to stderr (every timed call too).
    #[arg(long = "trace-execution")]
    trace_execution: bool,
    /// After the benchmarks, print to stderr the load time, the time spent
    /// benchmarking, the calls to host functions, the most memory held, the
    /// functions compiled and those left to the interpreter with why, the
    /// ten dispatches that took the most time and the workers' busy
    /// fraction.
    #[arg(long = "print_statistics")]
    print_statistics: bool,
    #[command(flatten)]
    profile: crate::profile::ProfileArgs,
    #[command(flatten)]
    device: crate::tensor_io::DeviceArgs,
    #[command(flatten)]
    queries: crate::hal_query::HalQueryArgs,
    #[command(flatten)]
    parameters: crate::parameters::ParameterArgs,
    /// Limits for the whole run (loading, `__init` and every timed call
    /// together); none by default, so timings use the plain loop.
    #[command(flatten)]
    limits: LimitArgs,
}

/// Runs `irvm bench`.
pub fn main(args: BenchArgs) -> ExitCode {
    if let Some(code) = args.queries.answer("bench") {
        return code;
    }
    match bench(&args) {
        Ok(code) => code,
        Err(message) => {
            crate::profile::write_after_failure(&args.profile, "irvm bench", &args.modules);
            eprintln!("irvm bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// One measured repetition.
struct Sample {
    iterations: u64,
    wall: Duration,
    cpu: Duration,
}

/// How long each benchmark runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MinTime {
    /// At least this much wall time (batches doubling).
    Wall(Duration),
    /// Exactly this many timed iterations (`Nx`).
    Iterations(u64),
}

fn parse_min_time(text: &str) -> Result<MinTime, String> {
    let t = text.trim();
    if let Some(n) = t.strip_suffix('x') {
        return n
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .map(MinTime::Iterations)
            .ok_or_else(|| {
                format!("INVALID_ARGUMENT; --benchmark_min_time `{text}` is not an iteration count")
            });
    }
    t.trim_end_matches('s')
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e6)
        .map(|s| MinTime::Wall(Duration::from_secs_f64(s)))
        .ok_or_else(|| {
            format!("INVALID_ARGUMENT; --benchmark_min_time `{text}` is not a number of seconds")
        })
}

/// CPU time consumed by this process so far.
fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux provides. On failure `ts` stays zero.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// How one repetition runs.
#[derive(Clone, Copy, Debug)]
struct Plan {
    min_time: MinTime,
    /// Untimed calls before timing (`--benchmark_min_warmup_time`).
    warmup: Duration,
}

/// `n` rounded up to a multiple of `step` (at least one step).
fn round_up(n: u64, step: u64) -> u64 {
    n.max(1).div_ceil(step).saturating_mul(step)
}

/// How a benchmarked function is called, as iree-benchmark-module 3.13
/// decides it (its `InvocationKind`): what one batch of `--batch_size`
/// iterations runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Invocation {
    /// An ordinary function: one call per batch (a repetition is compiled
    /// into the function: `--iree-hal-benchmark-dispatch-repeat-count`).
    Sync,
    /// An async-external function (`iree.abi.model` = `coarse-fences`):
    /// `--batch_size` calls per batch, spread over `--batch_concurrency`
    /// fence timelines.
    Async,
    /// A dispatch benchmark (`iree.benchmark` = `dispatch`, from
    /// `--iree-hal-dump-executable-benchmarks-to`): one call per batch,
    /// passing the batch size as its repeat count.
    Dispatch,
}

/// The arguments of one benchmarked function and how a batch calls it.
struct CallArgs {
    /// The parsed `--input`s; a dispatch benchmark's repeat count.
    inputs: Vec<Value>,
    kind: Invocation,
    /// Iterations per batch: `--batch_size`, rounded up to a multiple of
    /// `concurrency`.
    batch_size: u64,
    /// Fence timelines of an async-external function (1 otherwise).
    concurrency: u64,
    /// Time unit of its rows.
    unit: Unit,
}

/// Runs one batch of `args.batch_size` iterations of `func` (see
/// [`Invocation`]); the results of its last call. An async-external call
/// gets a wait fence (null, or the signal fence of the call before it on
/// its timeline) and a fresh signal fence after its inputs, which must be
/// signalled when it returns.
fn run_batch(ctx: &mut Context, func: &Func, args: &CallArgs) -> Result<Vec<Value>, String> {
    if args.kind != Invocation::Async {
        return ctx.invoke(func, &args.inputs).map_err(|e| e.to_string());
    }
    let mut previous: Vec<Option<irvm::HostRef<irvm_hal::Fence>>> =
        vec![None; args.concurrency as usize];
    let mut results = Vec::new();
    for i in 0..args.batch_size {
        let track = (i % args.concurrency) as usize;
        let signal = irvm_hal::Fence::new(false);
        let wait = match previous[track].take() {
            Some(fence) => Value::Ref(fence.into_ref()),
            None => Value::Ref(irvm::Ref::Null),
        };
        let mut all = Vec::with_capacity(args.inputs.len() + 2);
        all.extend_from_slice(&args.inputs);
        all.push(wait);
        all.push(Value::Ref(signal.clone().into_ref()));
        results = ctx.invoke(func, &all).map_err(|e| e.to_string())?;
        crate::cmd_run::finish_fence_outcome(&signal)?;
        previous[track] = Some(signal);
    }
    Ok(results)
}

/// Times `func`; returns the sample and the results of the last call.
fn measure(
    ctx: &mut Context,
    func: &Func,
    args: &CallArgs,
    plan: Plan,
) -> Result<(Sample, Vec<Value>), String> {
    // Warm up once (and surface a failing function before timing it), then
    // for as long as asked.
    let mut last = run_batch(ctx, func, args)?;
    let warming = Instant::now();
    while warming.elapsed() < plan.warmup {
        last = run_batch(ctx, func, args)?;
    }
    let step = args.batch_size.max(1);
    let (min_time, mut batch) = match plan.min_time {
        MinTime::Wall(d) => (d, step),
        MinTime::Iterations(n) => (Duration::ZERO, round_up(n, step)),
    };
    let mut iterations = 0u64;
    let profile = crate::profile::current();
    let (wall0, cpu0) = (Instant::now(), process_cpu_time());
    loop {
        let started = profile.as_ref().map(|p| p.now_ns());
        for _ in 0..batch / step {
            last = run_batch(ctx, func, args)?;
        }
        if let (Some(p), Some(start)) = (&profile, started) {
            let calls = match args.kind {
                Invocation::Async => batch,
                Invocation::Sync | Invocation::Dispatch => batch / step,
            };
            let word = if calls == 1 { "call" } else { "calls" };
            let what = format!("{} ({calls} timed {word})", func.name());
            p.span(
                irvm::profile::SpanKind::Invocation,
                &what,
                start,
                p.now_ns(),
            );
        }
        iterations += batch;
        let wall = wall0.elapsed();
        crate::parameters::check_intact()?;
        if wall >= min_time || iterations >= 1_000_000_000 {
            let sample = Sample {
                iterations,
                wall,
                cpu: process_cpu_time().saturating_sub(cpu0),
            };
            return Ok((sample, last));
        }
        // Grow batches so that clock reads stay negligible.
        batch = round_up((batch * 2).min(1 << 20), step);
    }
}

/// Google Benchmark's time units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Ns,
    Us,
    Ms,
    S,
}

impl Unit {
    fn parse(text: &str) -> Result<Unit, String> {
        match text {
            "ns" => Ok(Unit::Ns),
            "us" => Ok(Unit::Us),
            "ms" => Ok(Unit::Ms),
            "s" => Ok(Unit::S),
            _ => Err(format!(
                "INVALID_ARGUMENT; --benchmark_time_unit `{text}` is not one of ns, us, ms, s"
            )),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::S => "s",
        }
    }
    /// Units per second.
    fn per_second(self) -> f64 {
        match self {
            Unit::Ns => 1e9,
            Unit::Us => 1e6,
            Unit::Ms => 1e3,
            Unit::S => 1.0,
        }
    }
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Console,
    Json,
    Csv,
}

impl Format {
    fn parse(flag: &str, text: &str) -> Result<Format, String> {
        match text {
            "console" => Ok(Format::Console),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            _ => Err(format!(
                "INVALID_ARGUMENT; --{flag} `{text}` is not one of console, json, csv"
            )),
        }
    }
}

/// One row of results: a repetition, or an aggregate over repetitions.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    run_name: String,
    family: usize,
    repetitions: u32,
    /// `None` for aggregates.
    repetition_index: Option<u32>,
    /// `mean`, `median`, `stddev`, `cv`.
    aggregate: Option<&'static str>,
    iterations: u64,
    /// Seconds per iteration (for `cv`: the fraction).
    real: f64,
    cpu: f64,
    items_per_second: f64,
    /// The unit its times are reported in.
    unit: Unit,
}

fn row(name: &str, family: usize, repetitions: u32, index: u32, s: &Sample, unit: Unit) -> Row {
    let n = s.iterations.max(1) as f64;
    Row {
        unit,
        name: name.to_string(),
        run_name: name.to_string(),
        family,
        repetitions,
        repetition_index: Some(index),
        aggregate: None,
        iterations: s.iterations,
        real: s.wall.as_secs_f64() / n,
        cpu: s.cpu.as_secs_f64() / n,
        items_per_second: n / s.wall.as_secs_f64().max(1e-12),
    }
}

/// Google Benchmark's aggregates over the repetitions of one benchmark
/// (sample standard deviation; `cv` is stddev over mean).
fn aggregates(reps: &[Row]) -> Vec<Row> {
    if reps.len() < 2 {
        return Vec::new();
    }
    let stat = |f: &dyn Fn(&Row) -> f64| {
        let mut v: Vec<f64> = reps.iter().map(f).collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        v.sort_by(f64::total_cmp);
        let median = if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        let stddev = var.sqrt();
        let cv = if mean != 0.0 { stddev / mean } else { 0.0 };
        [mean, median, stddev, cv]
    };
    let (real, cpu, ips) = (
        stat(&|r: &Row| r.real),
        stat(&|r: &Row| r.cpu),
        stat(&|r: &Row| r.items_per_second),
    );
    ["mean", "median", "stddev", "cv"]
        .iter()
        .enumerate()
        .map(|(k, &agg)| Row {
            name: format!("{}_{agg}", reps[0].run_name),
            aggregate: Some(agg),
            repetition_index: None,
            iterations: reps.len() as u64,
            real: real[k],
            cpu: cpu[k],
            items_per_second: ips[k],
            ..reps[0].clone()
        })
        .collect()
}

/// Google Benchmark's console number: 3/2/1/0 decimals as the value grows.
fn format_time(t: f64) -> String {
    if t < 1.0 {
        format!("{t:10.3}")
    } else if t < 10.0 {
        format!("{t:10.2}")
    } else if t < 100.0 {
        format!("{t:10.1}")
    } else if t > 9_999_999_999.0 {
        format!("{t:1.4e}")
    } else {
        format!("{t:10.0}")
    }
}

/// `items_per_second` as Google Benchmark prints it: six significant
/// digits with a k/M/G/T prefix (`84.3853k`).
fn human_rate(rate: f64) -> String {
    for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if rate >= scale {
            return format!(
                "{}{suffix}",
                irvm::number_text::format_g_precision(rate / scale, 6)
            );
        }
    }
    irvm::number_text::format_g_precision(rate, 6)
}

fn console(rows: &[Row]) -> String {
    use std::fmt::Write as _;
    let width = rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(10)
        .max(10);
    let header = format!(
        "{:<width$} {:>13} {:>15} {:>12} UserCounters...",
        "Benchmark", "Time", "CPU", "Iterations"
    );
    let rule = "-".repeat(header.len());
    let mut out = format!("{rule}\n{header}\n{rule}\n");
    for r in rows {
        let _ = write!(out, "{:<width$} ", r.name);
        if r.aggregate == Some("cv") {
            let _ = write!(
                out,
                "{:10.2} {:<4} {:10.2} {:<4} ",
                100.0 * r.real,
                "%",
                100.0 * r.cpu,
                "%"
            );
        } else {
            let k = r.unit.per_second();
            let _ = write!(
                out,
                "{} {:<4} {} {:<4} ",
                format_time(r.real * k),
                r.unit.name(),
                format_time(r.cpu * k),
                r.unit.name()
            );
        }
        let rate = if r.aggregate == Some("cv") {
            format!("{:.2}%", 100.0 * r.items_per_second)
        } else {
            format!("{}/s", human_rate(r.items_per_second))
        };
        let _ = writeln!(out, "{:10} items_per_second={rate}", r.iterations);
    }
    out
}

fn csv(rows: &[Row]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message\n",
    );
    for r in rows {
        let k = r.unit.per_second();
        let (real, cpu) = if r.aggregate == Some("cv") {
            (r.real, r.cpu)
        } else {
            (r.real * k, r.cpu * k)
        };
        let _ = writeln!(
            out,
            "\"{}\",{},{},{},{},,{},,,",
            r.name,
            r.iterations,
            irvm::number_text::format_g_precision(real, 6),
            irvm::number_text::format_g_precision(cpu, 6),
            r.unit.name(),
            irvm::number_text::format_g_precision(r.items_per_second, 6)
        );
    }
    out
}

/// Machine facts for the JSON `context` and the console header.
struct MachineContext {
    date: String,
    host_name: String,
    executable: String,
    num_cpus: usize,
    mhz_per_cpu: f64,
    /// (type, level, size in bytes, CPUs sharing it).
    caches: Vec<(String, u32, u64, usize)>,
    load_avg: [f64; 3],
    /// Address-space randomization (`/proc/sys/kernel/randomize_va_space`).
    aslr_enabled: bool,
    /// `--benchmark_context` pairs.
    custom: std::collections::BTreeMap<String, String>,
}

fn machine_context() -> MachineContext {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let num_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mhz_per_cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("cpu MHz"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0);
    let mut caches = Vec::new();
    for k in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{k}");
        if !std::path::Path::new(&dir).exists() {
            break;
        }
        let level = read(&format!("{dir}/level")).trim().parse().unwrap_or(0);
        let kind = read(&format!("{dir}/type")).trim().to_string();
        let size = read(&format!("{dir}/size"));
        let size = size.trim();
        let bytes = size
            .strip_suffix('K')
            .and_then(|n| n.parse::<u64>().ok())
            .map(|n| n * 1024)
            .or_else(|| size.parse().ok())
            .unwrap_or(0);
        let sharing = read(&format!("{dir}/shared_cpu_list"));
        let sharing = sharing
            .trim()
            .split(',')
            .map(|part| match part.split_once('-') {
                Some((a, b)) => {
                    b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0)
                }
                None => usize::from(!part.is_empty()),
            })
            .sum::<usize>()
            .max(1);
        caches.push((kind, level, bytes, sharing));
    }
    let loads: Vec<f64> = read("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .filter_map(|v| v.parse().ok())
        .collect();
    let mut load_avg = [0.0; 3];
    for (d, v) in load_avg.iter_mut().zip(loads) {
        *d = v;
    }
    MachineContext {
        date: iso_date(),
        host_name: read("/proc/sys/kernel/hostname").trim().to_string(),
        executable: std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        num_cpus,
        mhz_per_cpu,
        caches,
        load_avg,
        aslr_enabled: read("/proc/sys/kernel/randomize_va_space").trim() != "0",
        custom: Default::default(),
    }
}

/// Local time as `2026-11-24T13:04:08+00:00`.
fn iso_date() -> String {
    let now = libc::time_t::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
    .unwrap_or(0);
    // SAFETY: `tm` is a plain C struct, zero is a valid value; localtime_r
    // writes it from `now` and does not keep either pointer.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::localtime_r(&now, &mut tm) };
    let off = tm.tm_gmtoff;
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        if off < 0 { '-' } else { '+' },
        off.abs() / 3600,
        off.abs() % 3600 / 60
    )
}

/// Google Benchmark's context lines (it prints them to stderr), then the
/// `--benchmark_context` pairs.
fn console_header(m: &MachineContext) -> String {
    let mut s = format!(
        "{}\nRunning {}\nRun on ({} X {:.2} MHz CPU s)\nCPU Caches:\n",
        m.date, m.executable, m.num_cpus, m.mhz_per_cpu
    );
    for (kind, level, bytes, sharing) in &m.caches {
        let size = format!("{} KiB", bytes / 1024);
        s.push_str(&format!(
            "  L{level} {kind} {size} (x{})\n",
            (m.num_cpus / sharing).max(1)
        ));
    }
    s.push_str(&format!(
        "Load Average: {:.2}, {:.2}, {:.2}\n",
        m.load_avg[0], m.load_avg[1], m.load_avg[2]
    ));
    for (key, value) in &m.custom {
        s.push_str(&format!("{key}: {value}\n"));
    }
    s
}

/// The `--benchmark_context` pairs (`k=v,k2=v2`), sorted by key as Google
/// Benchmark keeps them, with `dry_run` when `--benchmark_dry_run` is on.
fn custom_context(
    text: Option<&str>,
    dry_run: bool,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut pairs = std::collections::BTreeMap::new();
    for pair in text.unwrap_or("").split(',').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            format!("INVALID_ARGUMENT; --benchmark_context `{pair}` is not key=value")
        })?;
        pairs.insert(key.to_string(), value.to_string());
    }
    if dry_run {
        pairs.insert("dry_run".to_string(), "true".to_string());
    }
    Ok(pairs)
}

fn json(rows: &[Row], m: &MachineContext) -> String {
    use serde_json::json;
    let caches: Vec<_> = m
        .caches
        .iter()
        .map(|(kind, level, size, sharing)| {
            json!({"type": kind, "level": level, "size": size, "num_sharing": sharing})
        })
        .collect();
    let benchmarks: Vec<_> = rows
        .iter()
        .map(|r| {
            let mut o = serde_json::Map::new();
            o.insert("name".into(), json!(r.name));
            o.insert("family_index".into(), json!(r.family));
            o.insert("per_family_instance_index".into(), json!(0));
            o.insert("run_name".into(), json!(r.run_name));
            o.insert(
                "run_type".into(),
                json!(if r.aggregate.is_some() {
                    "aggregate"
                } else {
                    "iteration"
                }),
            );
            o.insert("repetitions".into(), json!(r.repetitions));
            if let Some(i) = r.repetition_index {
                o.insert("repetition_index".into(), json!(i));
            }
            o.insert("threads".into(), json!(1));
            if let Some(a) = r.aggregate {
                o.insert("aggregate_name".into(), json!(a));
                o.insert(
                    "aggregate_unit".into(),
                    json!(if a == "cv" { "percentage" } else { "time" }),
                );
            }
            let scale = if r.aggregate == Some("cv") {
                1.0
            } else {
                r.unit.per_second()
            };
            o.insert("iterations".into(), json!(r.iterations));
            o.insert("real_time".into(), json!(r.real * scale));
            o.insert("cpu_time".into(), json!(r.cpu * scale));
            o.insert("time_unit".into(), json!(r.unit.name()));
            o.insert("items_per_second".into(), json!(r.items_per_second));
            serde_json::Value::Object(o)
        })
        .collect();
    let mut context = json!({
        "date": m.date,
        "host_name": m.host_name,
        "executable": m.executable,
        "num_cpus": m.num_cpus,
        "mhz_per_cpu": m.mhz_per_cpu.round() as i64,
        "cpu_scaling_enabled": false,
        "aslr_enabled": m.aslr_enabled,
        "caches": caches,
        "load_avg": m.load_avg,
        "library_version": concat!("irvm ", env!("CARGO_PKG_VERSION")),
        "library_build_type": if cfg!(debug_assertions) { "debug" } else { "release" },
        "json_schema_version": 1
    });
    if let Some(o) = context.as_object_mut() {
        for (key, value) in &m.custom {
            o.insert(key.clone(), json!(value));
        }
    }
    let doc = json!({
        "context": context,
        "benchmarks": benchmarks
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn render(format: Format, rows: &[Row], m: &MachineContext) -> String {
    match format {
        Format::Console => console(rows),
        Format::Json => json(rows, m),
        Format::Csv => csv(rows),
    }
}

/// Loads the modules, times the functions and reports the results.
fn bench(args: &BenchArgs) -> Result<ExitCode, String> {
    crate::profile::start(&args.profile, args.print_statistics)?;
    crate::parameters::set(&args.parameters);
    crate::tensor_io::set_device(
        &args.device,
        args.trace_execution,
        args.print_statistics,
        args.limits.engine,
    )?;
    let Settings {
        min_time,
        unit,
        format,
        out_format,
        warmup,
        custom,
        filter,
    } = parse_settings(args)?;
    let loading = Instant::now();
    let mut ctx = load_context(&args.modules, &args.limits)?;
    let load_time = loading.elapsed();
    let main_module = last_module_name(&ctx);
    let names = benchmark_names(&ctx, &main_module, args, filter.as_ref())?;
    if args.list_tests {
        for name in &names {
            outln!("{}", bm_name(name));
        }
        // Nothing ran: the profile holds the loading alone.
        if let Some(data) = crate::profile::finish() {
            crate::profile::write_files(
                &args.profile,
                &data,
                &crate::profile::RunInfo {
                    tool: "irvm bench",
                    modules: &args.modules,
                    functions: &[],
                    device: crate::tensor_io::device_label(),
                },
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let calls = prepare_calls(&ctx, &main_module, &names, args, unit)?;
    if args.trace_execution {
        ctx.set_observer(Some(Box::new(irvm::ExecutionTracer::new(Box::new(
            std::io::stderr(),
        )))));
    }
    if crate::profile::current().is_some() {
        // Ctrl-C ends the benchmarks, not the process: the profile is written.
        // Installed before the console header is printed, so that a Ctrl-C
        // sent once the header is seen always finds it.
        crate::profile::sigint::interrupt_on_sigint(ctx.interrupt_handle());
    }
    let mut machine = machine_context();
    machine.custom = custom;
    if format == Format::Console {
        eprint!("{}", console_header(&machine));
    }
    let (plan, repetitions) = run_plan(args, min_time, warmup);
    let (imports, dispatches) = (ctx.host_calls(), crate::tensor_io::dispatch_count());
    crate::profile::measure_from_here();
    let running = Instant::now();
    let benchmarked = run_benchmarks(&mut ctx, &calls, plan, repetitions);
    let run_time = running.elapsed();
    let profiled = crate::profile::finish();
    // The profile is written whatever happened, after the report; one that
    // cannot be written is reported and fails the run.
    let write = |profiled: &Option<irvm::profile::ProfileData>| match profiled {
        Some(data) => crate::profile::write_files(
            &args.profile,
            data,
            &crate::profile::RunInfo {
                tool: "irvm bench",
                modules: &args.modules,
                functions: &names.iter().map(|n| format!("@{n}")).collect::<Vec<_>>(),
                device: crate::tensor_io::device_label(),
            },
        ),
        None => Ok(()),
    };
    let (rows, last) = match benchmarked {
        Ok(done) => done,
        Err(e) => {
            if let Err(w) = write(&profiled) {
                eprintln!("irvm bench: {w}");
            }
            return Err(e);
        }
    };
    let formats = (format, out_format);
    report(args, &rows, repetitions, formats, &machine)?;
    write(&profiled)?;
    if args.print_statistics {
        print_run_statistics(&ctx, load_time, run_time, (imports, dispatches));
        if let Some(data) = &profiled {
            crate::profile::summary::print(
                data,
                crate::tensor_io::device_workers(),
                run_time,
                args.trace_execution,
            );
        }
    }
    process_outputs(args, &last, ctx.resources().deadline())
}

/// `--print_statistics`: load and benchmark times, and the host calls and
/// dispatches since the counts `before` (taken before the benchmarks).
fn print_run_statistics(ctx: &Context, load: Duration, run: Duration, before: (u64, u64)) {
    let (imports, dispatches) = before;
    let figures = crate::cmd_run::RunFigures {
        load,
        run: ("benchmarks", run),
        imports: ctx.host_calls() - imports,
        dispatches: crate::tensor_io::dispatch_count() - dispatches,
    };
    crate::cmd_run::print_statistics(None, ctx, &figures);
}

/// The flags that say how to time and report, checked before anything is
/// loaded.
struct Settings {
    min_time: MinTime,
    /// `--benchmark_time_unit`, when given.
    unit: Option<Unit>,
    /// `--benchmark_format`.
    format: Format,
    /// `--benchmark_out_format`.
    out_format: Format,
    warmup: Duration,
    /// `--benchmark_context` (and `dry_run`).
    custom: std::collections::BTreeMap<String, String>,
    /// `--benchmark_filter`: whether it excludes, and its pattern.
    filter: Option<(bool, regex::Regex)>,
}

/// A function to time: its name, the function and its arguments.
type Call = (String, Func, CallArgs);

/// Parses and checks the timing and reporting flags.
fn parse_settings(args: &BenchArgs) -> Result<Settings, String> {
    let min_time = parse_min_time(&args.min_time)?;
    let unit = args.time_unit.as_deref().map(Unit::parse).transpose()?;
    let format = Format::parse("benchmark_format", &args.format)?;
    let out_format = Format::parse("benchmark_out_format", &args.out_format)?;
    if args.batch_size == 0 || args.batch_concurrency == 0 {
        // iree-benchmark-module's words.
        return Err(
            "INVALID_ARGUMENT; batch size and concurrency must be positive (--batch_size, \
             --batch_concurrency)"
                .into(),
        );
    }
    let warmup = Duration::try_from_secs_f64(args.min_warmup_time)
        .ok()
        .filter(|d| d.as_secs() < 1_000_000)
        .ok_or_else(|| {
            format!(
                "INVALID_ARGUMENT; --benchmark_min_warmup_time `{}` is not a number of seconds",
                args.min_warmup_time
            )
        })?;
    let custom = custom_context(args.context.as_deref(), args.dry_run)?;
    let filter = match &args.filter {
        None => None,
        Some(f) => Some(parse_filter(f)?),
    };
    Ok(Settings {
        min_time,
        unit,
        format,
        out_format,
        warmup,
        custom,
        filter,
    })
}

/// `--benchmark_filter`: a leading `-` excludes, `all` is every benchmark.
fn parse_filter(f: &str) -> Result<(bool, regex::Regex), String> {
    let (exclude, pattern) = match f.strip_prefix('-') {
        Some(p) => (true, p),
        None => (false, f),
    };
    let pattern = if pattern == "all" { "." } else { pattern };
    let re = regex::Regex::new(pattern).map_err(|e| {
        format!("INVALID_ARGUMENT; --benchmark_filter `{f}` is not a regular expression: {e}")
    })?;
    Ok((exclude, re))
}

/// The name of the module loaded last (whose functions are timed).
fn last_module_name(ctx: &Context) -> String {
    ctx.module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// A benchmark's name, as Google Benchmark's reports show it.
fn bm_name(name: &str) -> String {
    format!("BM_{name}/process_time/real_time")
}

/// The functions to time: the `--function`s, or every export of
/// `main_module` that takes no inputs ([`takes_no_inputs`]), then those
/// `filter` keeps.
fn benchmark_names(
    ctx: &Context,
    main_module: &str,
    args: &BenchArgs,
    filter: Option<&(bool, regex::Regex)>,
) -> Result<Vec<String>, String> {
    // An empty --function (a flagfile's `--function=""` default) is none.
    let functions: Vec<&String> = args.functions.iter().filter(|f| !f.is_empty()).collect();
    if args.enable_output_processing && functions.len() != 1 {
        return Err(
            "INVALID_ARGUMENT; output processing requires one function; use --function".into(),
        );
    }
    let names: Vec<String> = if functions.is_empty() {
        ctx.exports(Some(main_module))
            .into_iter()
            .filter(|name| discovered(ctx, main_module, name))
            .collect()
    } else {
        functions
            .iter()
            .map(|f| crate::flags::function_name(f).to_string())
            .collect()
    };
    if names.is_empty() {
        return Err(format!(
            "NOT_FOUND; module `{main_module}` exports no function without inputs; name one with --function"
        ));
    }
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| match filter {
            None => true,
            Some((exclude, re)) => re.is_match(&bm_name(n)) != *exclude,
        })
        .collect();
    if names.is_empty() {
        return Err(format!(
            "NOT_FOUND; no benchmark matches --benchmark_filter `{}`",
            args.filter.as_deref().unwrap_or("")
        ));
    }
    Ok(names)
}

/// The `iree.benchmark` reflection attribute of export `name` of
/// `module` (`entry` on the wrappers `--iree-flow-export-benchmark-funcs`
/// makes, `dispatch` on those `--iree-hal-dump-executable-benchmarks-to`
/// makes), if it has one.
fn benchmark_attr(ctx: &Context, module: &str, name: &str) -> Option<String> {
    let (_, _, m) = ctx
        .bytecode_modules()
        .into_iter()
        .rev()
        .find(|(_, n, _)| *n == module)?;
    let export = m.export(name)?;
    let signature = m.function_signature(export.internal_ordinal)?;
    signature
        .attrs
        .iter()
        .find(|(k, _)| *k == "iree.benchmark")
        .map(|(_, v)| v.to_string())
}

/// How export `name` of `main_module` is called ([`Invocation`]).
fn invocation(ctx: &Context, main_module: &str, name: &str) -> Invocation {
    if benchmark_attr(ctx, main_module, name).as_deref() == Some("dispatch") {
        Invocation::Dispatch
    } else if crate::cmd_run::uses_coarse_fences(ctx, main_module, name) {
        Invocation::Async
    } else {
        Invocation::Sync
    }
}

/// Whether export `name` of `main_module` is timed when no `--function` is
/// given, as iree-benchmark-module 3.13 decides: a benchmark wrapper
/// (`iree.benchmark` = `dispatch` or `entry`) always; any other function
/// when it is not internal or special (`__init`, any `__` prefix, a `$` in
/// the name) and takes no arguments, or, for an async-external function
/// (`iree.abi.model` is `coarse-fences`), only its wait and signal fences,
/// which each call passes itself.
fn discovered(ctx: &Context, main_module: &str, name: &str) -> bool {
    let kind = invocation(ctx, main_module, name);
    if kind == Invocation::Dispatch
        || benchmark_attr(ctx, main_module, name).as_deref() == Some("entry")
    {
        return true;
    }
    if name.starts_with("__") || name.contains('$') {
        return false;
    }
    let Ok(func) = ctx.function(&format!("{main_module}.{name}")) else {
        return false;
    };
    let fences = if kind == Invocation::Async { 2 } else { 0 };
    func.params().len() == fences
}

/// Looks up each function and makes its arguments: for a dispatch
/// benchmark its repeat count (the batch size; `--input` is refused with
/// `--function`, as iree-benchmark-module refuses it), for any other the
/// `--input`s (which must be as many as its arguments). `unit` is
/// `--benchmark_time_unit`, when given.
fn prepare_calls(
    ctx: &Context,
    main_module: &str,
    names: &[String],
    args: &BenchArgs,
    unit: Option<Unit>,
) -> Result<Vec<Call>, String> {
    let selected = args.functions.iter().any(|f| !f.is_empty());
    let mut calls = Vec::new();
    for name in names {
        let func = ctx
            .function(&format!("{main_module}.{name}"))
            .map_err(|e| e.to_string())?;
        let kind = invocation(ctx, main_module, name);
        let concurrency = match kind {
            Invocation::Async => u64::from(args.batch_concurrency),
            _ => 1,
        };
        // As iree-benchmark-module: the batch holds a whole number of
        // rounds of the timelines.
        let batch_size = u64::from(args.batch_size).div_ceil(concurrency) * concurrency;
        if batch_size > i32::MAX as u64 {
            return Err(format!(
                "OUT_OF_RANGE; rounded batch size is too large ({batch_size}, `{name}`)"
            ));
        }
        let inputs = match kind {
            Invocation::Dispatch if selected && !args.inputs.is_empty() => {
                return Err(format!(
                    "INVALID_ARGUMENT; dispatch wrappers take --batch_size, not --input \
                     (`{name}` is a dispatch benchmark)"
                ))
            }
            Invocation::Dispatch => vec![Value::I32(batch_size as i32)],
            _ => {
                let mut kinds = crate::cmd_run::input_kinds(&func);
                // An async-external function's last two parameters are its
                // fences, which each call passes itself.
                if kind == Invocation::Async {
                    kinds.truncate(kinds.len().saturating_sub(2));
                }
                if args.inputs.len() != kinds.len() {
                    return Err(format!(
                        "INVALID_ARGUMENT; `{name}` expects {} arguments but {} --input were given",
                        kinds.len(),
                        args.inputs.len()
                    ));
                }
                parse_inputs_within(ctx.resources().deadline(), None, &args.inputs, &kinds)
                    .map_err(|e| format!("{e}; parsing inputs of `{name}`"))?
            }
        };
        let unit = unit.unwrap_or(match kind {
            Invocation::Dispatch => Unit::Us,
            _ => Unit::Ms,
        });
        let args = CallArgs {
            inputs,
            kind,
            batch_size,
            concurrency,
            unit,
        };
        calls.push((name.clone(), func, args));
    }
    Ok(calls)
}

/// How each repetition runs, and how many there are (one batch and one
/// repetition for `--benchmark_dry_run`).
fn run_plan(args: &BenchArgs, min_time: MinTime, warmup: Duration) -> (Plan, u32) {
    if args.dry_run {
        // One batch (of each function's batch size).
        let plan = Plan {
            min_time: MinTime::Iterations(1),
            warmup: Duration::ZERO,
        };
        (plan, 1)
    } else {
        let plan = Plan { min_time, warmup };
        (plan, args.repetitions.max(1))
    }
}

/// Times every call `repetitions` times (warming up before the first);
/// returns the rows (each call's repetitions, then their aggregates) and
/// the results of the last call.
fn run_benchmarks(
    ctx: &mut Context,
    calls: &[Call],
    plan: Plan,
    repetitions: u32,
) -> Result<(Vec<Row>, Vec<Value>), String> {
    let mut rows = Vec::new();
    let mut last = Vec::new();
    for (family, (name, func, values)) in calls.iter().enumerate() {
        let mut reps = Vec::new();
        for index in 0..repetitions {
            let plan = Plan {
                warmup: if index == 0 {
                    plan.warmup
                } else {
                    Duration::ZERO
                },
                ..plan
            };
            let (s, results) = measure(ctx, func, values, plan)
                .map_err(|e| format!("benchmark `{name}` failed: {e}"))?;
            last = results;
            reps.push(row(
                &bm_name(name),
                family,
                repetitions,
                index,
                &s,
                values.unit,
            ));
        }
        let summary = aggregates(&reps);
        rows.extend(reps);
        rows.extend(summary);
    }
    Ok((rows, last))
}

/// With repetitions and `only`, the aggregate rows of `rows` (they can
/// stand for the runs); else all of them.
fn aggregates_only(only: bool, repetitions: u32, rows: &[Row]) -> Vec<Row> {
    if only && repetitions > 1 {
        rows.iter()
            .filter(|r| r.aggregate.is_some())
            .cloned()
            .collect()
    } else {
        rows.to_vec()
    }
}

/// Prints the rows on stdout (`--benchmark_format`) and writes them to
/// `--benchmark_out` (`--benchmark_out_format`), each as the
/// aggregates-only flags say.
fn report(
    args: &BenchArgs,
    rows: &[Row],
    repetitions: u32,
    (format, out_format): (Format, Format),
    machine: &MachineContext,
) -> Result<(), String> {
    let reported = aggregates_only(args.report_aggregates_only, repetitions, rows);
    let shown = aggregates_only(args.display_aggregates_only, repetitions, &reported);
    let text = render(format, &shown, machine);
    outln!("{}", text.strip_suffix('\n').unwrap_or(&text));
    if let Some(path) = &args.out {
        std::fs::write(path, render(out_format, &reported, machine))
            .map_err(|e| format!("cannot write --benchmark_out '{}': {e}", path.display()))?;
    }
    Ok(())
}

/// With `--enable_output_processing`, prints, writes or checks the last
/// call's results as `irvm run` does (expected outputs read by
/// `deadline`); the exit code says whether they matched.
fn process_outputs(
    args: &BenchArgs,
    last: &[Value],
    deadline: Option<Instant>,
) -> Result<ExitCode, String> {
    if args.enable_output_processing {
        let outcome = args
            .results
            .emit(last, deadline, crate::result_format::format_value)?;
        if let crate::tensor_io::Outcome::Mismatch = outcome {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_time_accepts_google_benchmark_forms() {
        let wall = |d| Ok(MinTime::Wall(d));
        assert_eq!(parse_min_time("0.5"), wall(Duration::from_millis(500)));
        assert_eq!(parse_min_time("2s"), wall(Duration::from_secs(2)));
        assert_eq!(parse_min_time("1000x"), Ok(MinTime::Iterations(1000)));
        assert!(parse_min_time("fast").is_err());
        assert!(parse_min_time("-1").is_err());
        assert!(parse_min_time("0x").is_err());
    }

    #[test]
    fn numbers_as_google_benchmark_prints_them() {
        assert_eq!(format_time(0.0123), "     0.012");
        assert_eq!(format_time(4.567), "      4.57");
        assert_eq!(format_time(45.67), "      45.7");
        assert_eq!(format_time(448.2), "       448");
        assert_eq!(human_rate(84385.3), "84.3853k");
        assert_eq!(human_rate(232.005), "232.005");
        assert_eq!(human_rate(1500.0), "1.5k");
    }

    #[test]
    fn aggregates_follow_the_repetitions() {
        let sample = |ms: u64| Sample {
            iterations: 10,
            wall: Duration::from_millis(ms * 10),
            cpu: Duration::from_millis(ms * 10),
        };
        assert_eq!(round_up(10, 4), 12);
        assert_eq!(round_up(0, 3), 3);
        let reps: Vec<Row> = [2, 4, 9]
            .iter()
            .enumerate()
            .map(|(i, &ms)| {
                row(
                    "BM_f/process_time/real_time",
                    0,
                    3,
                    i as u32,
                    &sample(ms),
                    Unit::Ms,
                )
            })
            .collect();
        let agg = aggregates(&reps);
        let names: Vec<&str> = agg.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "BM_f/process_time/real_time_mean",
                "BM_f/process_time/real_time_median",
                "BM_f/process_time/real_time_stddev",
                "BM_f/process_time/real_time_cv"
            ]
        );
        assert!((agg[0].real - 0.005).abs() < 1e-12);
        assert!((agg[1].real - 0.004).abs() < 1e-12);
        assert!((agg[2].real - 0.003605551).abs() < 1e-8);
        assert!((agg[3].real - 0.721110255).abs() < 1e-8);
        assert_eq!(agg[0].iterations, 3);
        assert!(aggregates(&reps[..1]).is_empty());
    }
}
