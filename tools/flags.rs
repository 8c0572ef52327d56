//! Command lines as IREE's tools take them, turned into what clap parses:
//!
//! - `--flagfile=PATH` is replaced, where it stands, by the flags in the
//!   file (one per line; blank lines and `#` comments skipped), so later
//!   flags override them (the parser lets a later value of a flag replace
//!   an earlier one);
//! - `--flag_name` and `--flag-name` both name a flag, whichever spelling
//!   irvm declares it with;
//! - a boolean flag may carry a value: IREE's flags take `true`, `1` and an
//!   empty value (`--trace_execution=`) as true, `false` and `0` as false;
//!   Google Benchmark's (`--benchmark_*`) also take its other spellings
//!   (`yes`/`no`, `on`/`off`, `t`/`f`, `y`/`n`, any case: [`benchmark_bool`]);
//! - flags of iree-run-module / iree-benchmark-module that mean nothing for
//!   irvm's CPU runtime (GPU drivers, device profiling, capture and replay,
//!   task-system tuning, allocator and plugin selection) are accepted and
//!   ignored ([`IGNORED`], and [`IGNORED_BY_BENCH`] for `irvm bench`).

use std::collections::HashSet;

/// IREE flags irvm accepts and ignores, with the reason: a name ending in
/// `*` stands for every flag that starts with it. (A flag irvm declares
/// itself, such as `--task_topology_max_group_count`, is acted on even
/// when a family here covers it.)
pub const IGNORED: &[(&str, &str)] = &[
    ("cuda_*", "CUDA driver settings; irvm has no GPU drivers"),
    ("hip_*", "HIP driver settings; irvm has no GPU drivers"),
    ("vulkan_*", "Vulkan driver settings; irvm has no GPU drivers"),
    (
        "task_*",
        "IREE task-system tuning (worker spin, stacks, local memory, topology); \
         irvm's local-task pool takes only --task_topology_max_group_count",
    ),
    (
        "dump_task_topologies",
        "prints IREE's task-system topology, which irvm does not have",
    ),
    (
        "device_profiling_*",
        "HAL profiling sessions and bundles; use --print_statistics",
    ),
    (
        "print_device_statistics",
        "HAL profiling statistics; use --print_statistics",
    ),
    ("device_capture_*", "external capture tools (RenderDoc, Metal)"),
    ("device_replay_*", "HAL replay capture, which irvm does not record"),
    ("agents_md", "guidance for HAL replay capture, which irvm does not record"),
    (
        "device_allocator",
        "allocator wrappers; irvm's device has one host allocator",
    ),
    (
        "device_lead_allocator",
        "lead device of several; irvm has one device",
    ),
    (
        "executable_plugin",
        "executable import plugins; irvm provides none (a library that needs one is refused, naming the import)",
    ),
    ("instrument_file", "instrumentation data, which irvm does not collect"),
    (
        "module_mode",
        "preload or mmap; irvm reads a module of at most 16 MiB into memory and maps a larger one, either way",
    ),
];

/// Flags of iree-benchmark-module (and its Google Benchmark library) that
/// `irvm bench` accepts and ignores, besides [`IGNORED`].
pub const IGNORED_BY_BENCH: &[(&str, &str)] = &[
    (
        "dispatch_statistics",
        "per-dispatch rows from HAL profiling, which irvm does not have",
    ),
    ("benchmark_color", "irvm's console table has no colors"),
    (
        "benchmark_counters_tabular",
        "user counters as columns; irvm's rows have none besides items_per_second",
    ),
    (
        "benchmark_enable_random_interleaving",
        "irvm runs the benchmarks in order",
    ),
    ("v", "Google Benchmark's log verbosity"),
];

/// The function a `--function` value names, as iree-run-module reads it:
/// surrounding whitespace trimmed, then one pair of double quotes around a
/// non-empty name stripped (`"main"` is `main`; `""` stays `""`, as there),
/// then a leading `@` (MLIR's spelling, which irvm also takes).
pub fn function_name(value: &str) -> &str {
    let value = value.trim();
    let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) if !inner.is_empty() => inner,
        _ => value,
    };
    value.strip_prefix('@').unwrap_or(value)
}

/// Whether `name` (underscore spelling) is one of `list`'s flags.
pub fn is_listed(list: &[(&str, &str)], name: &str) -> bool {
    list.iter().any(|(flag, _)| match flag.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *flag,
    })
}

/// The table of ignored flags for `--help` (after the options).
pub fn ignored_help(lists: &[&[(&str, &str)]]) -> String {
    let mut text = String::from(
        "IREE flags accepted and ignored (they mean nothing for irvm's CPU runtime):\n",
    );
    for list in lists {
        for (flag, why) in *list {
            text.push_str(&format!("  --{flag}\n          {why}\n"));
        }
    }
    text.push_str(
        "Every flag may be spelled with `_` or `-` (`--print_statistics`, `--print-statistics`), \
         booleans take `=true`/`=1`/`=` and `=false`/`=0` (`--benchmark_*` also `yes`/`no`, `on`/`off`), and --flagfile=PATH reads one flag per line.",
    );
    text
}

/// Deepest nesting of flagfiles (a file naming itself would not end).
const MAX_FLAGFILE_DEPTH: usize = 16;

/// The long flags a subcommand declares, which of them take no value, and
/// the IREE flags it ignores.
pub struct Known {
    pub names: HashSet<String>,
    pub switches: HashSet<String>,
    /// Boolean flags declared with an optional value (`--pretty`,
    /// `--pretty=false`).
    pub bools: HashSet<String>,
    pub ignored: Vec<&'static [(&'static str, &'static str)]>,
}

/// Rewrites `args` (program name first) for clap; errors name the flagfile
/// that could not be read.
pub fn normalize(
    args: Vec<String>,
    known: impl Fn(&str) -> Option<Known>,
) -> Result<Vec<String>, String> {
    // A flagfile that is a FIFO nobody writes would wait forever: the
    // command line's own --timeout bounds reading them.
    let deadline = crate::deadline::from_command_line(&args);
    let args = expand_flagfiles(args, 0, deadline)?;
    // The subcommand is the first argument that is not a flag.
    let Some(sub_at) = args
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|p| p + 1)
    else {
        return Ok(args);
    };
    let Some(known) = known(&args[sub_at]) else {
        return Ok(args);
    };
    let mut out = Vec::with_capacity(args.len());
    let mut rest_are_values = false;
    for (k, arg) in args.into_iter().enumerate() {
        if k <= sub_at || rest_are_values || !arg.starts_with("--") || arg == "--" {
            rest_are_values |= arg == "--" && k > sub_at;
            out.push(arg);
            continue;
        }
        let (name, value) = match arg[2..].split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg[2..].to_string(), None),
        };
        let spelled = [name.clone(), name.replace('_', "-"), name.replace('-', "_")]
            .into_iter()
            .find(|n| known.names.contains(n));
        match spelled {
            Some(n) if known.switches.contains(&n) => match bool_value(&n, value.as_deref()) {
                Some(true) => out.push(format!("--{n}")),
                Some(false) => {}
                None => out.push(format!("--{n}={}", value.unwrap_or_default())), // clap reports it
            },
            Some(n) if known.bools.contains(&n) => match bool_value(&n, value.as_deref()) {
                Some(b) if value.is_some() => out.push(format!("--{n}={b}")),
                _ => out.push(match value {
                    Some(v) => format!("--{n}={v}"), // clap reports it
                    None => format!("--{n}"),
                }),
            },
            Some(n) => out.push(match value {
                Some(v) => format!("--{n}={v}"),
                None => format!("--{n}"),
            }),
            None => {
                let underscored = name.replace('-', "_");
                if !known.ignored.iter().any(|l| is_listed(l, &underscored)) {
                    out.push(arg);
                }
            }
        }
    }
    Ok(out)
}

/// The value of boolean flag `name` given as `value` (`None`: the flag
/// alone), or `None` when it is not a boolean spelling. IREE's flags
/// library reads an empty value as true (`--print_statistics=`); its other
/// values than `true`/`1`/`false`/`0` it reads as false without a word,
/// which irvm refuses rather than guess. Google Benchmark's flags
/// (`benchmark_*`) are read as it reads them ([`benchmark_bool`]).
fn bool_value(name: &str, value: Option<&str>) -> Option<bool> {
    let value = value.unwrap_or("");
    if name.starts_with("benchmark") {
        return Some(benchmark_bool(value));
    }
    match value {
        "" | "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// Google Benchmark's `IsTruthyFlagValue`: empty is true; one character is
/// true when it is a letter or digit other than `0`, `f`, `F`, `n`, `N`;
/// longer values are true unless they are `false`, `no` or `off` in any
/// case.
pub fn benchmark_bool(value: &str) -> bool {
    let mut chars = value.chars();
    match (chars.next(), chars.next()) {
        (None, _) => true,
        (Some(c), None) => c.is_ascii_alphanumeric() && !"0fFnN".contains(c),
        _ => !["false", "no", "off"].contains(&value.to_ascii_lowercase().as_str()),
    }
}

/// Largest flagfile read (`--flagfile=/dev/zero` must not exhaust memory).
const MAX_FLAGFILE_BYTES: u64 = 16 << 20;

fn read_flagfile(path: &str, deadline: Option<std::time::Instant>) -> Result<String, String> {
    let owned = path.to_string();
    crate::deadline::within(deadline, &format!("reading flagfile '{path}'"), move || {
        read_flagfile_now(&owned)
    })
}

fn read_flagfile_now(path: &str) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FLAGFILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read flagfile '{path}': {e}"))?;
    if bytes.len() as u64 > MAX_FLAGFILE_BYTES {
        return Err(format!(
            "flagfile '{path}' is larger than {MAX_FLAGFILE_BYTES} bytes"
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| format!("cannot read flagfile '{path}': it is not UTF-8 text"))
}

fn expand_flagfiles(
    args: Vec<String>,
    depth: usize,
    deadline: Option<std::time::Instant>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            // Everything after `--` is an operand, taken as written.
            out.push(arg);
            out.extend(iter);
            break;
        }
        let path = if let Some(p) = arg.strip_prefix("--flagfile=") {
            p.to_string()
        } else if arg == "--flagfile" {
            match iter.next() {
                Some(p) => p,
                None => return Err("--flagfile needs a path".into()),
            }
        } else {
            out.push(arg);
            continue;
        };
        if depth >= MAX_FLAGFILE_DEPTH {
            return Err(format!(
                "flagfile '{path}': flagfiles nest deeper than {MAX_FLAGFILE_DEPTH}"
            ));
        }
        let text = read_flagfile(&path, deadline)?;
        let flags: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        out.extend(expand_flagfiles(flags, depth + 1, deadline)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Option<Known> {
        Some(Known {
            names: [
                "module",
                "function",
                "trace-execution",
                "output_max_element_count",
                "benchmark_list_tests",
                "pretty",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            switches: ["trace-execution", "benchmark_list_tests"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            bools: ["pretty".to_string()].into_iter().collect(),
            ignored: vec![IGNORED],
        })
    }

    fn norm(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(|s| s.to_string()).collect(), |_| known()).unwrap()
    }

    #[test]
    fn both_spellings_and_boolean_values() {
        assert_eq!(
            norm(&[
                "irvm",
                "run",
                "--trace_execution",
                "--output-max-element-count=3",
                "--module=m"
            ]),
            [
                "irvm",
                "run",
                "--trace-execution",
                "--output_max_element_count=3",
                "--module=m"
            ]
        );
        assert_eq!(
            norm(&["irvm", "run", "--trace_execution=false", "--module=m"]),
            ["irvm", "run", "--module=m"]
        );
    }

    #[test]
    fn boolean_values_as_iree_and_google_benchmark_read_them() {
        // IREE: an empty value is true; other words are left to clap.
        assert_eq!(
            norm(&["irvm", "run", "--trace_execution=", "--module=m"]),
            ["irvm", "run", "--trace-execution", "--module=m"]
        );
        assert_eq!(
            norm(&["irvm", "run", "--trace_execution=yes"]),
            ["irvm", "run", "--trace-execution=yes"]
        );
        // Google Benchmark: its truthy spellings.
        for (v, on) in [
            ("", true),
            ("yes", true),
            ("TRUE", true),
            ("on", true),
            ("2", true),
            ("t", true),
            ("no", false),
            ("OFF", false),
            ("f", false),
            ("N", false),
            ("0", false),
            ("-", false),
        ] {
            let flag = format!("--benchmark_list_tests={v}");
            let want: &[&str] = if on {
                &["irvm", "bench", "--benchmark_list_tests"]
            } else {
                &["irvm", "bench"]
            };
            assert_eq!(norm(&["irvm", "bench", &flag]), want, "{flag}");
        }
        // A boolean with an optional value (`irvm dump --pretty`).
        for (v, b) in [
            ("1", "true"),
            ("", "true"),
            ("0", "false"),
            ("false", "false"),
        ] {
            let flag = format!("--pretty={v}");
            assert_eq!(
                norm(&["irvm", "dump", &flag, "m.vmfb"]),
                ["irvm", "dump", &format!("--pretty={b}"), "m.vmfb"],
                "{flag}"
            );
        }
        assert_eq!(
            norm(&["irvm", "dump", "--pretty", "--pretty=yes"]),
            ["irvm", "dump", "--pretty", "--pretty=yes"]
        );
    }

    #[test]
    fn device_flags_are_dropped_and_unknown_ones_kept() {
        assert_eq!(
            norm(&[
                "irvm",
                "run",
                "--cuda_use_streams=true",
                "--task_topology_max_group_count=2",
                "--bogus=1"
            ]),
            ["irvm", "run", "--bogus=1"]
        );
    }

    #[test]
    fn flagfiles_expand_where_they_stand() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flags");
        std::fs::write(&path, "# comment\n--module=a\n\n--function=f\n").unwrap();
        let file = format!("--flagfile={}", path.display());
        assert_eq!(
            norm(&["irvm", "run", &file, "--function=g"]),
            ["irvm", "run", "--module=a", "--function=f", "--function=g"]
        );
        std::fs::write(&path, format!("--flagfile={}\n", path.display())).unwrap();
        let e = normalize(vec!["irvm".into(), "run".into(), file], |_| known()).unwrap_err();
        assert!(e.contains("nest deeper"), "{e}");
        // An endless file is refused, not read into memory; after `--`
        // nothing is expanded.
        let e = normalize(
            vec!["irvm".into(), "run".into(), "--flagfile=/dev/zero".into()],
            |_| known(),
        )
        .unwrap_err();
        assert!(e.contains("larger than"), "{e}");
        assert_eq!(
            norm(&["irvm", "run", "--", "--flagfile=/dev/zero"]),
            ["irvm", "run", "--", "--flagfile=/dev/zero"]
        );
    }

    #[test]
    fn function_names_as_iree_run_module_reads_them() {
        assert_eq!(function_name("main"), "main");
        assert_eq!(function_name("\"main\""), "main");
        assert_eq!(function_name(" \"main\" "), "main");
        assert_eq!(function_name("\" main\""), " main");
        assert_eq!(function_name("\"\""), "\"\"");
        assert_eq!(function_name("\"\"main\"\""), "\"main\"");
        assert_eq!(function_name("'main'"), "'main'");
        assert_eq!(function_name("@main"), "main");
        assert_eq!(function_name("\"main"), "\"main");
    }
}
