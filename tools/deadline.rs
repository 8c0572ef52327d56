//! `--timeout` for the work the VM does not see: reading a module from
//! stdin, flagfiles, input files and parsing input tensors, and after the
//! call reading and parsing the expected outputs or writing output files.
//!
//! The VM stops itself at the deadline (`Context::set_deadline`); a read
//! from a pipe or FIFO that never ends, or the parse of a huge tensor
//! literal, happens before any VM code runs and would wait past it. Such
//! work runs on a thread of its own here, and the command gives up on it at
//! the deadline with DEADLINE_EXCEEDED (the thread is left blocked: the
//! command is about to exit), or when another thread gives up on it
//! ([`GiveUp`]: the debug adapter, when its client ends the session).

use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs `work`, giving up on it at `deadline`: the error then says
/// `DEADLINE_EXCEEDED; {doing}: not done within --timeout`. With no deadline
/// it runs on the calling thread.
pub fn within<T: Send + 'static>(
    deadline: Option<Instant>,
    doing: &str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    within_unless(deadline, None, doing, work)
}

/// Lets another thread give up on work [`within_unless`] waits for (the
/// debug adapter's reader thread, when the client ends the session while an
/// input is read). Once given up, every later wait on it ends at once.
#[derive(Clone, Default)]
pub struct GiveUp(Arc<Mutex<GiveUpState>>);

#[derive(Default)]
struct GiveUpState {
    /// Why, once given up.
    reason: Option<String>,
    /// Wakes the wait in progress, if any.
    wake: Option<Box<dyn Fn() + Send>>,
}

impl GiveUp {
    /// Gives up (the first reason stays), waking a wait in progress.
    pub fn give_up(&self, reason: &str) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.reason.get_or_insert_with(|| reason.to_string());
        if let Some(wake) = &state.wake {
            wake();
        }
    }

    fn reason(&self) -> Option<String> {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.reason.clone()
    }

    fn set_wake(&self, wake: Option<Box<dyn Fn() + Send>>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).wake = wake;
    }
}

/// What the waiting thread hears.
enum Heard<T> {
    /// The work ended (or panicked).
    Done(std::thread::Result<Result<T, String>>),
    /// [`GiveUp::give_up`] was called.
    GivenUp,
}

/// [`within`], also given up on when `give_up` is (the error then says
/// `CANCELLED; {doing}: given up: {reason}`). With neither a deadline nor
/// a `give_up` it runs on the calling thread.
pub fn within_unless<T: Send + 'static>(
    deadline: Option<Instant>,
    give_up: Option<&GiveUp>,
    doing: &str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    if deadline.is_none() && give_up.is_none() {
        return work();
    }
    let given_up = |reason: String| Err(format!("CANCELLED; {doing}: given up: {reason}"));
    let (tx, rx) = std::sync::mpsc::channel::<Heard<T>>();
    if let Some(g) = give_up {
        // Installed before the reason is looked at: a give_up from now on
        // wakes the wait below.
        let wake: Sender<Heard<T>> = tx.clone();
        g.set_wake(Some(Box::new(move || {
            let _ = wake.send(Heard::GivenUp);
        })));
        if let Some(reason) = g.reason() {
            g.set_wake(None);
            return given_up(reason);
        }
    }
    let spawned = std::thread::Builder::new()
        .name("irvm-bounded-read".into())
        .spawn(move || {
            // A panic is handed over, to unwind the caller as it would have
            // with the work on its own thread (not read as a timeout).
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(Heard::Done(done));
        });
    let heard = match spawned {
        Err(e) => Err(format!("{doing}: cannot start a thread for it: {e}")),
        Ok(_) => match deadline {
            Some(deadline) => rx.recv_timeout(deadline.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        }
        .map_err(|e| match e {
            RecvTimeoutError::Timeout => {
                format!("DEADLINE_EXCEEDED; {doing}: not done within --timeout")
            }
            RecvTimeoutError::Disconnected => {
                format!("INTERNAL; {doing}: its thread ended without a result")
            }
        }),
    };
    if let Some(g) = give_up {
        g.set_wake(None);
    }
    match heard? {
        Heard::Done(Ok(done)) => done,
        Heard::Done(Err(panic)) => std::panic::resume_unwind(panic),
        Heard::GivenUp => given_up(give_up.and_then(GiveUp::reason).unwrap_or_default()),
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
    fn work_given_up_on_by_another_thread_ends_the_wait_without_a_deadline() {
        let (hold, held) = std::sync::mpsc::channel::<()>();
        let give_up = GiveUp::default();
        let other = give_up.clone();
        let giver = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.give_up("the client ended the session");
        });
        let start = Instant::now();
        let got = within_unless(None, Some(&give_up), "reading input `@fifo`", move || {
            let _ = held.recv();
            Ok(())
        });
        assert_eq!(
            got,
            Err("CANCELLED; reading input `@fifo`: given up: the client ended the session".into())
        );
        assert!(start.elapsed() < Duration::from_secs(20));
        giver.join().unwrap();
        // Given up once, given up for every later wait; work done before
        // that is not affected.
        assert!(within_unless(None, Some(&give_up), "parsing", || Ok(1)).is_err());
        assert_eq!(
            within_unless(None, Some(&GiveUp::default()), "adding", || Ok(2 + 2)),
            Ok(4)
        );
        drop(hold);
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
