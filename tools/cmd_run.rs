//! `irvm run` (not implemented yet).

use std::process::ExitCode;

/// Arguments of `irvm run`.
#[derive(clap::Args)]
pub struct RunArgs {}

/// Runs `irvm run`.
pub fn main(_args: RunArgs) -> ExitCode {
    eprintln!("irvm run: not implemented yet");
    ExitCode::FAILURE
}
