//! Running a child process under a memory rlimit and a wall-clock bound,
//! so a crash or hang of the subject shows as a failed test (with the
//! child's exit status and output), never as a hung or killed test run.
//! Used by `hostile.rs` and `all/native_mutation.rs`.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a bounded child did.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code (None: killed by a signal).
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Whether the wall-clock bound killed it.
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Outcome {
    /// Exited by itself (no signal, no timeout) with a status other than a
    /// Rust panic's 101.
    pub fn assert_clean_exit(&self) {
        assert!(!self.timed_out, "the child hung: {self:#?}");
        assert_eq!(
            self.signal, None,
            "the child was killed by a signal: {self:#?}"
        );
        assert_ne!(self.code, Some(101), "the child panicked: {self:#?}");
    }
    /// A clean failure whose stderr contains `needle`.
    pub fn assert_error(&self, needle: &str) {
        self.assert_clean_exit();
        assert_ne!(self.code, Some(0), "expected a failure: {self:#?}");
        assert!(
            self.stderr.contains(needle) || self.stdout.contains(needle),
            "expected `{needle}` in the output: {self:#?}"
        );
    }
}

/// Runs `cmd` with an address-space rlimit of `memory` bytes, killing it
/// after `wall` (plus, when set, writing `stdin`).
pub fn bounded(mut cmd: Command, memory: u64, wall: Duration) -> Outcome {
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: memory as libc::rlim_t,
                rlim_max: memory as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn the child");
    // Drain the pipes on threads so a chatty child cannot block.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > wall {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    use std::os::unix::process::ExitStatusExt;
    Outcome {
        code: status.code(),
        signal: status.signal(),
        stdout: String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned(),
        timed_out,
        elapsed: start.elapsed(),
    }
}
