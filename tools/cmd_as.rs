//! `irvm as` (not implemented yet).

use std::process::ExitCode;

/// Arguments of `irvm as`.
#[derive(clap::Args)]
pub struct AsArgs {}

/// Runs `irvm as`.
pub fn main(_args: AsArgs) -> ExitCode {
    eprintln!("irvm as: not implemented yet");
    ExitCode::FAILURE
}
