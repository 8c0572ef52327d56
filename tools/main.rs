//! `irvm`: load, run, inspect, assemble and debug IREE VM bytecode modules.
//!
//! One clap subcommand per file; each mirrors the IREE tool of the same job
//! (`run` ~ iree-run-module, `dump` ~ iree-dump-module, `as` ~ iree-as-module,
//! `bench` ~ iree-benchmark-module).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[macro_use]
mod stdout;
mod cmd_as;
mod cmd_bench;
mod cmd_dbg;
mod cmd_dump;
mod cmd_run;
mod result_format;
mod scalar_input;
mod tensor_io;

#[derive(Parser)]
#[command(
    name = "irvm",
    version,
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
    /// Debug a function at source level (gdb's commands).
    Dbg(cmd_dbg::DbgArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => cmd_run::main(args),
        Command::Dump(args) => cmd_dump::main(args),
        Command::As(args) => cmd_as::main(args),
        Command::Bench(args) => cmd_bench::main(args),
        Command::Dbg(args) => cmd_dbg::main(args),
    }
}
