//! `irvm as`: assembles VM assembly (`.vmasm`) into a `.vmfb` module, like
//! `iree-as-module`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `irvm as`.
#[derive(clap::Args)]
pub struct AsArgs {
    /// Where to write the module (`-` for stdout).
    #[arg(short = 'o', long = "output", default_value = "-")]
    output: String,
    /// The assembly source (`-` for stdin).
    input: String,
}

/// Runs `irvm as`.
pub fn main(args: AsArgs) -> ExitCode {
    let (source, name) = if args.input == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("irvm as: cannot read stdin: {e}");
            return ExitCode::FAILURE;
        }
        (text, "<stdin>".to_string())
    } else {
        match std::fs::read(&args.input) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => (text, args.input.clone()),
                Err(e) => {
                    eprintln!(
                        "irvm as: {}: not UTF-8 text (invalid byte at offset {})",
                        args.input,
                        e.utf8_error().valid_up_to()
                    );
                    return ExitCode::FAILURE;
                }
            },
            Err(e) => {
                eprintln!("irvm as: cannot read {}: {e}", args.input);
                return ExitCode::FAILURE;
            }
        }
    };
    let bytes = match irvm::asm::assemble(&source, &name) {
        Ok(bytes) => bytes,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::FAILURE;
        }
    };
    let written = if args.output == "-" {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            eprintln!(
                "irvm as: refusing to write a binary module to a terminal; name a file with -o (or redirect stdout)"
            );
            return ExitCode::FAILURE;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(&bytes).and_then(|()| out.flush()) {
            crate::stdout::fail(e);
        }
        Ok(())
    } else {
        std::fs::write(PathBuf::from(&args.output), &bytes)
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("irvm as: cannot write {}: {e}", args.output);
            ExitCode::FAILURE
        }
    }
}
