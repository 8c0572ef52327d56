//! `--timeout` for the work the VM does not see: reading a module from
//! stdin, flagfiles, input files and parsing input tensors, and reading and
//! parsing the expected outputs after the call.
//!
//! The VM stops itself at the deadline (`Context::set_deadline`); a read
//! from a pipe or FIFO that never ends, or the parse of a huge tensor
//! literal, happens before any VM code runs and would wait past it. Such
//! work runs on a thread of its own here, and the command gives up on it at
//! the deadline with DEADLINE_EXCEEDED (the thread is left blocked: the
//! command is about to exit).

use std::time::{Duration, Instant};

/// Runs `work`, giving up on it at `deadline`: the error then says
/// `DEADLINE_EXCEEDED; {doing}: not done within --timeout`. With no deadline
/// it runs on the calling thread.
pub fn within<T: Send + 'static>(
    deadline: Option<Instant>,
    doing: &str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let Some(deadline) = deadline else {
        return work();
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("irvm-bounded-read".into())
        .spawn(move || {
            // A panic is handed over, to unwind the caller as it would have
            // with the work on its own thread (not read as a timeout).
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(done);
        })
        .map_err(|e| format!("{doing}: cannot start a thread for it: {e}"))?;
    let left = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(done)) => done,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => Err(format!(
            "DEADLINE_EXCEEDED; {doing}: not done within --timeout"
        )),
    }
}

/// `--timeout`'s value: seconds, 0 or more; `Duration::MAX` for one past
/// what a `Duration` holds (no deadline).
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let t: f64 = s
        .trim()
        .parse()
        .map_err(|_| "not a number of seconds (such as 2 or 0.5)".to_string())?;
    if t.is_nan() || t < 0.0 {
        return Err("a timeout is 0 or more seconds".into());
    }
    Ok(Duration::try_from_secs_f64(t).unwrap_or(Duration::MAX))
}

/// The deadline `--timeout` sets when given on the command line itself
/// (`--timeout=S` or `--timeout S`, the last one before `--`): what bounds
/// reading the flagfiles, which are read before the flags are parsed.
/// `None` when there is none or it does not parse (the parser reports that
/// later).
pub fn from_command_line(args: &[String]) -> Option<Instant> {
    let mut timeout = None;
    let mut iter = args.iter().skip(1);
    while let Some(arg) = iter.next() {
        if arg == "--" {
            break;
        }
        let value = match arg.strip_prefix("--timeout=") {
            Some(v) => Some(v.to_string()),
            None if arg == "--timeout" => iter.next().cloned(),
            None => continue,
        };
        timeout = value.and_then(|v| parse_timeout(&v).ok());
    }
    timeout.and_then(|d| Instant::now().checked_add(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn work_done_in_time_returns_its_result() {
        let soon = Instant::now() + Duration::from_secs(30);
        assert_eq!(within(Some(soon), "adding", || Ok(2 + 2)), Ok(4));
        assert_eq!(
            within::<()>(None, "failing", || Err("no".into())),
            Err("no".into())
        );
    }

    #[test]
    fn work_past_the_deadline_is_given_up_on() {
        let (hold, held) = std::sync::mpsc::channel::<()>();
        let start = Instant::now();
        let got = within(
            Some(start + Duration::from_millis(50)),
            "reading input `@fifo`",
            move || {
                // Blocks until the test ends (the sender is dropped then).
                let _ = held.recv();
                Ok(())
            },
        );
        assert_eq!(
            got,
            Err("DEADLINE_EXCEEDED; reading input `@fifo`: not done within --timeout".into())
        );
        assert!(start.elapsed() < Duration::from_secs(20));
        drop(hold);
    }

    #[test]
    fn the_command_lines_last_timeout_sets_the_deadline() {
        let before = Instant::now();
        let d = from_command_line(&args(&[
            "irvm",
            "run",
            "--timeout=100",
            "--timeout",
            "5",
            "--flagfile=f",
        ]))
        .expect("a deadline");
        assert!(d >= before + Duration::from_secs(5) && d < before + Duration::from_secs(50));
        assert_eq!(
            from_command_line(&args(&["irvm", "run", "--flagfile=f"])),
            None
        );
        // After `--` it is an operand; a value that does not parse is none.
        assert_eq!(
            from_command_line(&args(&["irvm", "run", "--", "--timeout=1"])),
            None
        );
        assert_eq!(
            from_command_line(&args(&["irvm", "run", "--timeout=soon"])),
            None
        );
    }

    #[test]
    fn a_panic_in_the_work_unwinds_the_caller_not_a_timeout() {
        let soon = Instant::now() + Duration::from_secs(30);
        let caught = std::panic::catch_unwind(|| {
            within::<()>(Some(soon), "parsing", || panic!("parser bug"))
        });
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"parser bug"));
    }
}
