//! `irvm bench`: time exported functions in-process, in the manner of
//! `iree-benchmark-module` (same `--module`/`--function`/`--input` flags,
//! Google-Benchmark-style table). Each benchmark calls the function
//! repeatedly on one context until `--benchmark_min_time` has passed, then
//! reports wall time and process CPU time per call.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use irvm::{Context, Func, Value};

use crate::cmd_run::{load_context, parse_input, LimitArgs};

/// Arguments of `irvm bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// A module to load (`.vmfb`, or a dynamic host module
    /// `lib.so[@entry][?key=value&...]`); repeat to load several, in order.
    #[arg(long = "module", required = true)]
    modules: Vec<String>,
    /// An exported function of the last module to time; repeat for several.
    /// Without it, every export of the last module that takes no arguments.
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
    /// How many times to repeat each benchmark (each row is one repetition).
    #[arg(long = "benchmark_repetitions", default_value_t = 1)]
    repetitions: u32,
    /// Accepted for iree-benchmark-module compatibility; irvm has no devices.
    #[arg(long, hide = true)]
    device: Option<String>,
    /// Limits for the whole run (loading, `__init` and every timed call
    /// together); none by default, so timings use the plain loop.
    #[command(flatten)]
    limits: LimitArgs,
}

/// Runs `irvm bench`.
pub fn main(args: BenchArgs) -> ExitCode {
    match bench(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
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

fn measure(
    ctx: &mut Context,
    func: &Func,
    args: &[Value],
    min_time: MinTime,
) -> Result<Sample, String> {
    // Warm up once (and surface a failing function before timing it).
    ctx.invoke(func, args).map_err(|e| e.to_string())?;
    let (min_time, mut batch) = match min_time {
        MinTime::Wall(d) => (d, 1u64),
        MinTime::Iterations(n) => (Duration::ZERO, n),
    };
    let mut iterations = 0u64;
    let (wall0, cpu0) = (Instant::now(), process_cpu_time());
    loop {
        for _ in 0..batch {
            ctx.invoke(func, args).map_err(|e| e.to_string())?;
        }
        iterations += batch;
        let wall = wall0.elapsed();
        if wall >= min_time || iterations >= 1_000_000_000 {
            return Ok(Sample {
                iterations,
                wall,
                cpu: process_cpu_time().saturating_sub(cpu0),
            });
        }
        // Grow batches so that clock reads stay negligible.
        batch = (batch * 2).min(1 << 20);
    }
}

/// Formats a per-iteration time with Google Benchmark's units.
fn per_iteration(total: Duration, iterations: u64) -> String {
    let ns = total.as_secs_f64() * 1e9 / iterations.max(1) as f64;
    if ns < 1e3 {
        format!("{ns:.2} ns")
    } else if ns < 1e6 {
        format!("{:.2} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn bench(args: &BenchArgs) -> Result<(), String> {
    let _ = &args.device;
    let min_time = parse_min_time(&args.min_time)?;
    let mut ctx = load_context(&args.modules, &args.limits)?;
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let names: Vec<String> = if args.functions.is_empty() {
        ctx.exports(Some(&main_module))
            .into_iter()
            .filter(|name| name != "__init")
            .filter(|name| {
                ctx.function(&format!("{main_module}.{name}"))
                    .is_ok_and(|f| f.params().is_empty())
            })
            .collect()
    } else {
        args.functions
            .iter()
            .map(|f| f.trim_start_matches('@').to_string())
            .collect()
    };
    if names.is_empty() {
        return Err(format!(
            "NOT_FOUND; module `{main_module}` exports no function without arguments; name one with --function"
        ));
    }
    let mut plans = Vec::new();
    for name in &names {
        let func = ctx
            .function(&format!("{main_module}.{name}"))
            .map_err(|e| e.to_string())?;
        let kinds = crate::cmd_run::input_kinds(&func);
        if args.inputs.len() != kinds.len() {
            return Err(format!(
                "INVALID_ARGUMENT; `{name}` expects {} arguments but {} --input were given",
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
            .map_err(|e| format!("{e}; parsing inputs of `{name}`"))?;
        plans.push((name.clone(), func, values));
    }
    let rows: Vec<String> = plans
        .iter()
        .flat_map(|(name, _, _)| {
            (0..args.repetitions.max(1)).map(move |_| format!("BM_{name}/process_time/real_time"))
        })
        .collect();
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(10).max(10);
    let rule = "-".repeat(width + 44);
    outln!("{rule}");
    outln!(
        "{:<width$} {:>13} {:>13} {:>12}",
        "Benchmark",
        "Time",
        "CPU",
        "Iterations"
    );
    outln!("{rule}");
    for (name, func, values) in &plans {
        for _ in 0..args.repetitions.max(1) {
            let s = measure(&mut ctx, func, values, min_time)
                .map_err(|e| format!("benchmark `{name}` failed: {e}"))?;
            let rate = s.iterations as f64 / s.wall.as_secs_f64().max(1e-12);
            outln!(
                "{:<width$} {:>13} {:>13} {:>12} items_per_second={}/s",
                format!("BM_{name}/process_time/real_time"),
                per_iteration(s.wall, s.iterations),
                per_iteration(s.cpu, s.iterations),
                s.iterations,
                human_rate(rate)
            );
        }
    }
    Ok(())
}

/// `items_per_second` as Google Benchmark prints it (`232.005`, `1.5k`).
fn human_rate(rate: f64) -> String {
    let trim = |x: f64| {
        let t = format!("{x:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if rate >= scale {
            return format!("{}{suffix}", trim(rate / scale));
        }
    }
    trim(rate)
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
    fn units_follow_magnitude() {
        assert_eq!(per_iteration(Duration::from_nanos(500), 1), "500.00 ns");
        assert_eq!(per_iteration(Duration::from_micros(1500), 1), "1.50 ms");
        assert_eq!(per_iteration(Duration::from_secs(3), 2), "1.50 s");
        assert_eq!(human_rate(232.005), "232.005");
        assert_eq!(human_rate(1500.0), "1.5k");
    }
}
