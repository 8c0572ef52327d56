//! Installing a SIGINT handler: the one `sigaction` call `irvm dbg` (Ctrl-C
//! pauses) and `--profile` (Ctrl-C interrupts, the profile is written)
//! share.

/// Makes `handler` run on SIGINT (system calls it interrupts restart).
///
/// # Safety
/// `handler` must do only async-signal-safe work.
pub unsafe fn install(handler: extern "C" fn(libc::c_int)) {
    // SAFETY: `sigaction` gets a zeroed, then filled, struct that lives
    // across the call; the handler's work is the caller's contract.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}
