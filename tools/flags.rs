//! Command lines as IREE's tools take them, turned into what clap parses:
//!
//! - `--flagfile=PATH` is replaced, where it stands, by the flags in the
//!   file (one per line; blank lines and `#` comments skipped), so later
//!   flags override them (the parser lets a later value of a flag replace
//!   an earlier one);
//! - `--flag_name` and `--flag-name` both name a flag, whichever spelling
//!   irvm declares it with;
//! - a boolean flag may carry `=true`/`=false` (`--trace_execution=false`);
//! - flags of iree-run-module / iree-benchmark-module that mean nothing for
//!   irvm's CPU runtime (GPU drivers, device profiling and capture, task
//!   topology, allocator and plugin selection) are accepted and ignored
//!   ([`IGNORED`]).

use std::collections::HashSet;

/// IREE flag families (prefixes) and flags irvm accepts and ignores.
pub const IGNORED: &[&str] = &[
    "cuda_",
    "hip_",
    "vulkan_",
    "device_profiling_",
    "device_capture_",
    "device_replay_",
    "task_",
    "device_allocator",
    "device_lead_allocator",
    "executable_plugin",
    "instrument_file",
    "agents_md",
    "parameter_mode",
    "module_mode",
    "print_device_statistics",
];

/// Deepest nesting of flagfiles (a file naming itself would not end).
const MAX_FLAGFILE_DEPTH: usize = 16;

/// The long flags a subcommand declares, and which of them take no value.
pub struct Known {
    pub names: HashSet<String>,
    pub switches: HashSet<String>,
}

/// Rewrites `args` (program name first) for clap; errors name the flagfile
/// that could not be read.
pub fn normalize(
    args: Vec<String>,
    known: impl Fn(&str) -> Option<Known>,
) -> Result<Vec<String>, String> {
    let args = expand_flagfiles(args, 0)?;
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
            Some(n) if known.switches.contains(&n) => match value.as_deref() {
                None | Some("true") | Some("1") => out.push(format!("--{n}")),
                Some("false") | Some("0") => {}
                Some(v) => out.push(format!("--{n}={v}")), // clap reports it
            },
            Some(n) => out.push(match value {
                Some(v) => format!("--{n}={v}"),
                None => format!("--{n}"),
            }),
            None => {
                let underscored = name.replace('-', "_");
                if !IGNORED.iter().any(|p| underscored.starts_with(p)) {
                    out.push(arg);
                }
            }
        }
    }
    Ok(out)
}

/// Largest flagfile read (`--flagfile=/dev/zero` must not exhaust memory).
const MAX_FLAGFILE_BYTES: u64 = 16 << 20;

fn read_flagfile(path: &str) -> Result<String, String> {
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

fn expand_flagfiles(args: Vec<String>, depth: usize) -> Result<Vec<String>, String> {
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
        let text = read_flagfile(&path)?;
        let flags: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        out.extend(expand_flagfiles(flags, depth + 1)?);
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
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            switches: ["trace-execution".to_string()].into_iter().collect(),
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
}
