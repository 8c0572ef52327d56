//! Writing to standard output without panicking: `println!` panics when
//! stdout is a closed pipe (`irvm run ... | head -0`). `outln!` exits with
//! status 1 instead: quietly when the reader has gone (as the C tools, which
//! SIGPIPE kills, say nothing), with a message on stderr for other errors
//! (a full disk).

use std::io::Write;

/// Writes `args` and a newline to stdout; on failure (a closed pipe, a full
/// disk) says so on stderr and exits with status 1.
pub fn write_line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        fail(e);
    }
}

/// Ends the process after a failed write to stdout (see the module doc).
pub fn fail(e: std::io::Error) -> ! {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        // stderr may be closed as well: nothing more to say then.
        let _ = writeln!(std::io::stderr(), "irvm: writing to standard output: {e}");
    }
    std::process::exit(1);
}

/// Writes `args` to stdout as [`write_line`] does, without a newline.
pub fn write_text(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        fail(e);
    }
}

/// `print!` that exits with status 1 instead of panicking when stdout
/// cannot be written.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write_text(format_args!($($arg)*))
    };
}

/// `println!` that exits with status 1 instead of panicking when stdout
/// cannot be written.
macro_rules! outln {
    () => {
        $crate::stdout::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write_line(format_args!($($arg)*))
    };
}
