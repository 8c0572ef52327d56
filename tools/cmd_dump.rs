//! `irvm dump` (not implemented yet).

use std::process::ExitCode;

/// Arguments of `irvm dump`.
#[derive(clap::Args)]
pub struct DumpArgs {}

/// Runs `irvm dump`.
pub fn main(_args: DumpArgs) -> ExitCode {
    eprintln!("irvm dump: not implemented yet");
    ExitCode::FAILURE
}
