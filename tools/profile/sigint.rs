//! Ctrl-C while a profile records: the first SIGINT interrupts the
//! program (it stops at its next check, as `--timeout` stops it), so the
//! run ends through the usual path and the profile of what ran is still
//! written; the handler then gives SIGINT back its default action, so a
//! second Ctrl-C ends the process at once (a native kernel that does not
//! return, for instance).

use std::sync::OnceLock;

use irvm::InterruptHandle;

/// The handle the first SIGINT interrupts (set once, read by the handler).
static TARGET: OnceLock<InterruptHandle> = OnceLock::new();

extern "C" fn on_sigint(_: libc::c_int) {
    if let Some(handle) = TARGET.get() {
        handle.interrupt();
    }
    // SAFETY: `signal` is async-signal-safe; SIG_DFL restores the default
    // action (end the process) for the next SIGINT.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Makes the next SIGINT interrupt `handle`'s context instead of ending
/// the process. Only the first call has an effect; a process started with
/// SIGINT ignored (a background job of a script, `nohup`) keeps ignoring
/// it, as shells expect.
pub fn interrupt_on_sigint(handle: InterruptHandle) {
    // SAFETY: `sigaction` with a null new action only reads the current
    // one into `current`, a zeroed struct that lives across the call.
    let ignored = unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    };
    if ignored || TARGET.set(handle).is_err() {
        return;
    }
    // SAFETY: the handler reads a OnceLock (an atomic load), sets an
    // atomic flag and calls `signal`, all async-signal-safe.
    unsafe { crate::sigint_handler::install(on_sigint) };
}
