//! `irvm`: load, run, inspect, assemble and debug IREE VM bytecode modules.
//!
//! One clap subcommand per file; each mirrors the IREE tool of the same job
//! (`run` ~ iree-run-module, `dump` ~ iree-dump-module, `as` ~ iree-as-module,
//! `bench` ~ iree-benchmark-module, `params` ~ the parameter tools).

use clap::{CommandFactory, FromArgMatches, Subcommand};
use std::process::ExitCode;

#[macro_use]
mod stdout;
mod cmd_as;
mod cmd_bench;
mod cmd_check;
mod cmd_dap;
mod cmd_dbg;
mod cmd_dump;
mod cmd_params;
mod cmd_run;
mod deadline;
mod flags;
mod gtest_report;
mod hal_query;
mod npy;
mod parameters;
mod profile;
mod result_format;
mod scalar_input;
mod sigint_handler;
mod source_names;
mod tensor_io;
mod value_history;

#[derive(clap::Parser)]
#[command(
    name = "irvm",
    version = concat!(env!("CARGO_PKG_VERSION"), " (reads IREE VM bytecode 17.0, as IREE 3.13)"),
    about = "Run and inspect IREE VM bytecode modules"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Invoke an exported function (like iree-run-module).
    Run(cmd_run::RunArgs),
    /// Print a module's metadata and/or disassembly (like iree-dump-module).
    Dump(cmd_dump::DumpArgs),
    /// Assemble VM assembly text into a .vmfb (like iree-as-module).
    #[command(name = "as")]
    As(cmd_as::AsArgs),
    /// Time exported functions in-process (like iree-benchmark-module).
    Bench(cmd_bench::BenchArgs),
    /// Run every test function of a module with IREE's `check` module,
    /// printing gtest's output (like iree-check-module).
    Check(cmd_check::CheckArgs),
    /// Debug a function at source level (gdb's commands).
    Dbg(cmd_dbg::DbgArgs),
    /// Serve the Debug Adapter Protocol on stdin/stdout (for editors).
    Dap(cmd_dap::DapArgs),
    /// Dump, create and convert parameter archives (like
    /// iree-dump-parameters, iree-create-parameters, iree-convert-parameters).
    Params(cmd_params::ParamsArgs),
}

/// The long flags subcommand `name` of `cmd` declares (see
/// `flags::normalize`).
fn known_flags(cmd: &clap::Command, name: &str) -> Option<flags::Known> {
    let sub = cmd.find_subcommand(name)?;
    let mut known = flags::Known {
        names: Default::default(),
        switches: Default::default(),
        bools: Default::default(),
        ignored: ignored_by(name),
    };
    for arg in sub.get_arguments() {
        let takes_value = arg.get_action().takes_values();
        for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
            known.names.insert(long.to_string());
            if !takes_value {
                known.switches.insert(long.to_string());
            } else if is_optional_bool(arg) {
                known.bools.insert(long.to_string());
            }
        }
    }
    Some(known)
}

/// Whether `arg` is a boolean that may be given without a value
/// (`--pretty`, `--pretty=false`).
fn is_optional_bool(arg: &clap::Arg) -> bool {
    let optional = arg
        .get_num_args()
        .is_some_and(|n| n.min_values() == 0 && n.max_values() == 1);
    let names: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    optional && names == ["true", "false"]
}

/// The lists of IREE flags subcommand `name` accepts and ignores.
fn ignored_by(name: &str) -> Vec<&'static [(&'static str, &'static str)]> {
    match name {
        "run" | "dbg" | "check" => vec![flags::IGNORED],
        "bench" => vec![flags::IGNORED, flags::IGNORED_BY_BENCH],
        _ => Vec::new(),
    }
}

/// `raw` with each byte outside printable ASCII as `\xNN`, quoted.
fn escaped_bytes(raw: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("'");
    for &b in raw.as_bytes() {
        if (0x20..0x7f).contains(&b) && b != b'\\' && b != b'\'' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

fn main() -> ExitCode {
    // A later value of a flag replaces an earlier one (flagfiles); `--help`
    // of the commands that take IREE's flags lists those irvm ignores.
    let cmd = Cli::command().mut_subcommands(|s| {
        let lists = ignored_by(s.get_name());
        let s = s.args_override_self(true);
        if lists.is_empty() {
            s
        } else {
            s.after_help(flags::ignored_help(&lists))
        }
    });
    let mut utf8 = Vec::new();
    for (i, arg) in std::env::args_os().enumerate() {
        match arg.into_string() {
            Ok(arg) => utf8.push(arg),
            Err(raw) => {
                eprintln!(
                    "irvm: argument {i} is not valid UTF-8: {} (irvm reads its arguments, file \
                     names included, as UTF-8)",
                    escaped_bytes(&raw)
                );
                return ExitCode::from(2);
            }
        }
    }
    let args = match flags::normalize(utf8, |name| known_flags(&cmd, name)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("irvm: {e}");
            return ExitCode::from(2);
        }
    };
    let args = cmd_dbg::gdb_spellings(args);
    let cli = match cmd.try_get_matches_from(args).and_then(|m| {
        let mut cli = Cli::from_arg_matches(&m)?;
        if let Command::Dbg(dbg) = &mut cli.command {
            dbg.order_startup(m.subcommand_matches("dbg"));
        }
        Ok(cli)
    }) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Run(args) => cmd_run::main(args),
        Command::Dump(args) => cmd_dump::main(args),
        Command::As(args) => cmd_as::main(args),
        Command::Bench(args) => cmd_bench::main(args),
        Command::Check(args) => cmd_check::main(args),
        Command::Dbg(args) => cmd_dbg::main(args),
        Command::Dap(args) => cmd_dap::main(args),
        Command::Params(args) => cmd_params::main(args),
    }
}
