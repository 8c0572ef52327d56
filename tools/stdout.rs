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

/// Writes `bytes` to stdout as they are (gdb's `printf "%c", 255`
/// writes the byte 0xFF), exiting as [`write_line`] does on failure.
pub fn write_bytes(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        fail(e);
    }
}

/// Writes `text` to stdout, giving up at `deadline` (`--timeout`): a pipe
/// nobody reads blocks the write once its buffer is full, and the command
/// then fails with `DEADLINE_EXCEEDED; {doing}: not done within --timeout`.
/// A reader that keeps up gets everything (the write is one, not cut into
/// timed pieces). A failed write (a closed pipe) exits as [`write_line`].
/// With no deadline it writes on the calling thread.
pub fn write_within(
    deadline: Option<std::time::Instant>,
    doing: &str,
    text: String,
) -> Result<(), String> {
    let written = crate::deadline::within(deadline, doing, move || {
        let mut out = std::io::stdout().lock();
        Ok(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
    })?;
    written.unwrap_or_else(|e| fail(e));
    Ok(())
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
