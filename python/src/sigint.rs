//! Ctrl-C during a call: while the main thread runs a VM call (without the
//! GIL), a SIGINT handler chained in front of Python's raises the call's
//! interrupt (the stop word the VM's loops poll at back edges and calls,
//! and the hal before each workgroup), then hands the signal to Python's
//! own handler. When the call returns, `PyErr_CheckSignals` runs Python's
//! handler on the main thread, which raises `KeyboardInterrupt`.
//!
//! The handler is installed at the first call from the main thread and put
//! back in front when Python has replaced it (`signal.signal`): the SIGINT
//! action is looked at (a system call, about half a microsecond) by a call
//! that starts more than [`RECHECK`] after the last look, so short calls in
//! a loop pay nothing. A handler replaced less than that before a call
//! starts leaves that call to end before Ctrl-C is seen. Where SIGINT is
//! ignored or left to the default action, nothing is installed.
//!
//! Python code run inside a call (a Python host function, a state
//! constructor, a trace callback: [`PythonCode`]) and a wait for a
//! module's turn ([`WaitGuard`]) take Ctrl-C from the call around them
//! while they last: the code gets `KeyboardInterrupt` from Python alone
//! and may catch it (the call then goes on), and a wait is given up
//! without cancelling the call that waits. All these guards nest, each
//! putting back what the one around it armed.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::SeqCst};

use irvm::InterruptHandle;

/// The interrupt of the call the main thread is running, or null.
static ACTIVE: AtomicPtr<InterruptHandle> = AtomicPtr::new(std::ptr::null_mut());
/// Handlers running now (the guard waits for 0 before the handle may go).
static IN_HANDLER: AtomicUsize = AtomicUsize::new(0);
/// A SIGINT arrived during a call (or a wait for one).
static SEEN: AtomicBool = AtomicBool::new(false);
/// The main thread waits for a module's turn ([`WaitGuard`]): a SIGINT is
/// only recorded (no call of its own runs yet to interrupt).
static WAITING: AtomicBool = AtomicBool::new(false);
/// The handler ours replaced, and its `sa_flags`.
static PREVIOUS: AtomicUsize = AtomicUsize::new(0);
static PREVIOUS_FLAGS: AtomicUsize = AtomicUsize::new(0);
/// `pthread_self()` of Python's main thread (signals are handled there).
static MAIN_THREAD: AtomicU64 = AtomicU64::new(0);
/// When the SIGINT action was last looked at (nanoseconds since [`EPOCH`],
/// plus one; 0: never), and whether ours was in front then.
static LAST_LOOK: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// How long a look at the SIGINT action is trusted.
const RECHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether our handler is in front, looking again when the last look is
/// older than [`RECHECK`].
fn installed() -> bool {
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    let now = epoch.elapsed().as_nanos() as u64 + 1;
    let last = LAST_LOOK.load(SeqCst);
    if last != 0 && now - last < RECHECK.as_nanos() as u64 {
        return INSTALLED.load(SeqCst);
    }
    let ok = ensure_installed();
    INSTALLED.store(ok, SeqCst);
    LAST_LOOK.store(now, SeqCst);
    ok
}

/// Records which thread is Python's main thread.
pub fn set_main_thread(ident: u64) {
    MAIN_THREAD.store(ident, SeqCst);
}

extern "C" fn on_sigint(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    IN_HANDLER.fetch_add(1, SeqCst);
    let active = ACTIVE.load(SeqCst);
    if !active.is_null() {
        SEEN.store(true, SeqCst);
        // SAFETY: a non-null ACTIVE points at the handle of a running call,
        // which `CallGuard::drop` keeps alive until IN_HANDLER is back to 0
        // after clearing ACTIVE (or putting back the enclosing call's
        // handle, alive until that call's guard drops in turn; a WaitGuard
        // or Python code inside a call puts back that call's handle when it
        // ends, before the call's guard drops). `interrupt` is one atomic
        // or: safe in a signal handler.
        unsafe { (*active).interrupt() };
    } else if WAITING.load(SeqCst) {
        SEEN.store(true, SeqCst);
    }
    IN_HANDLER.fetch_sub(1, SeqCst);
    let previous = PREVIOUS.load(SeqCst);
    if previous == libc::SIG_DFL || previous == libc::SIG_IGN || previous == 0 {
        return;
    }
    if PREVIOUS_FLAGS.load(SeqCst) & libc::SA_SIGINFO as usize != 0 {
        // SAFETY: the previous action was installed with SA_SIGINFO, so its
        // address is a three-argument handler.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(previous) };
        f(signal, info, context);
    } else {
        // SAFETY: without SA_SIGINFO the previous action's address is a
        // one-argument handler (not SIG_DFL/SIG_IGN, excluded above).
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(previous) };
        f(signal);
    }
}

/// Puts `on_sigint` in front of the current SIGINT action; false when
/// SIGINT is ignored or has its default action (nothing to chain to).
fn ensure_installed() -> bool {
    // SAFETY: querying and setting a signal action with valid, zeroed
    // `sigaction` structs.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) != 0 {
            return false;
        }
        let ours = on_sigint as *const () as usize;
        if current.sa_sigaction == ours {
            return true;
        }
        if current.sa_sigaction == libc::SIG_DFL || current.sa_sigaction == libc::SIG_IGN {
            return false;
        }
        PREVIOUS_FLAGS.store(current.sa_flags as usize, SeqCst);
        PREVIOUS.store(current.sa_sigaction, SeqCst);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = ours;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        action.sa_mask = current.sa_mask;
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) == 0
    }
}

/// Makes SIGINT interrupt the call `handle` stops while it lives; nothing
/// when the calling thread is not Python's main thread. Guards nest (a
/// call made from a Python host function or trace callback during another
/// call): dropping one puts back the handle of the call around it, which
/// Ctrl-C then interrupts again.
pub struct CallGuard {
    armed: bool,
    /// The handle ACTIVE held before (the enclosing call's, or null).
    previous: usize,
}

/// Whether Python's SIGINT handler is `signal.default_int_handler` (the
/// one that raises `KeyboardInterrupt`), looked at most every
/// [`RECHECK`]. A handler of the program's own may choose not to stop
/// (set a flag, finish the work): then a call is left to end, as
/// iree.runtime leaves it.
pub fn python_handler_raises(py: pyo3::Python<'_>) -> pyo3::PyResult<bool> {
    use pyo3::types::PyAnyMethods;
    static LAST: AtomicU64 = AtomicU64::new(0);
    static RAISES: AtomicBool = AtomicBool::new(true);
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    let now = epoch.elapsed().as_nanos() as u64 + 1;
    let last = LAST.load(SeqCst);
    if last != 0 && now - last < RECHECK.as_nanos() as u64 {
        return Ok(RAISES.load(SeqCst));
    }
    // `signal.getsignal` is Python code: a SIGINT pending since the
    // arguments were converted runs its handler here, and what that raises
    // (KeyboardInterrupt) is the caller's to raise, not to drop.
    let signal = py.import("signal")?;
    let current = signal.call_method1("getsignal", (libc::SIGINT,))?;
    let raises = current.is(&signal.getattr("default_int_handler")?);
    RAISES.store(raises, SeqCst);
    LAST.store(now, SeqCst);
    Ok(raises)
}

/// Makes SIGINT end the main thread's wait for a module's turn
/// (`crate::turns`) while it lives, without touching the call that holds
/// the turn (another thread's); nothing on other threads. Guards nest in
/// calls: a wait made inside a call on the main thread (from a Python host
/// function or trace callback) takes Ctrl-C from that call, which it does
/// not interrupt, and gives it back when dropped.
pub struct WaitGuard {
    armed: bool,
    /// The handle ACTIVE held before (the enclosing call's, or null), and
    /// what WAITING was.
    previous: usize,
    was_waiting: bool,
}

impl WaitGuard {
    /// Arms Ctrl-C for a wait about to start on this thread, when `raises`
    /// (as for [`CallGuard::new`]).
    pub fn new(raises: bool) -> WaitGuard {
        // SAFETY: pthread_self has no preconditions.
        let this = unsafe { libc::pthread_self() } as u64;
        if !raises || this != MAIN_THREAD.load(SeqCst) || !installed() {
            return WaitGuard {
                armed: false,
                previous: 0,
                was_waiting: false,
            };
        }
        let was_waiting = WAITING.swap(true, SeqCst);
        let previous = ACTIVE.swap(std::ptr::null_mut(), SeqCst);
        WaitGuard {
            armed: true,
            previous: previous as usize,
            was_waiting,
        }
    }

    /// Whether a SIGINT arrived while armed.
    pub fn seen(&self) -> bool {
        self.armed && SEEN.load(SeqCst)
    }

    /// Disarms; returns whether a SIGINT arrived while armed.
    pub fn finish(self) -> bool {
        let armed = self.armed;
        drop(self);
        armed && SEEN.swap(false, SeqCst)
    }
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        if self.armed {
            // Made and dropped on the main thread in nested order, as
            // CallGuards are: `previous` is the handle of a call still
            // running there (its guard, dropped later, keeps it alive).
            ACTIVE.store(self.previous as *mut InterruptHandle, SeqCst);
            WAITING.store(self.was_waiting, SeqCst);
        }
    }
}

impl CallGuard {
    /// Arms Ctrl-C for a call about to run on this thread, when `raises`
    /// (Python's handler raises `KeyboardInterrupt`:
    /// [`python_handler_raises`]).
    pub fn new(handle: &InterruptHandle, raises: bool) -> CallGuard {
        // SAFETY: pthread_self has no preconditions.
        let this = unsafe { libc::pthread_self() } as u64;
        if !raises || this != MAIN_THREAD.load(SeqCst) || !installed() {
            return CallGuard {
                armed: false,
                previous: 0,
            };
        }
        let previous = ACTIVE.swap(handle as *const InterruptHandle as *mut _, SeqCst);
        CallGuard {
            armed: true,
            previous: previous as usize,
        }
    }

    /// Disarms; returns whether a SIGINT arrived while armed.
    pub fn finish(self) -> bool {
        let armed = self.armed;
        drop(self);
        armed && SEEN.swap(false, SeqCst)
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.armed {
            // Guards are made and dropped on the main thread only, in
            // nested order, so `previous` is the handle of a call still
            // running there (its guard, dropped later, keeps it alive).
            ACTIVE.store(self.previous as *mut InterruptHandle, SeqCst);
            while IN_HANDLER.load(SeqCst) != 0 {
                std::hint::spin_loop();
            }
        }
    }
}

/// Python code run on the main thread from inside a call (a Python host
/// function, a state constructor, a trace callback): while it runs, Ctrl-C
/// is Python's alone (its handler raises `KeyboardInterrupt` in that code,
/// which may catch it), and the call around it is not interrupted. What the
/// code lets through stops the call as its exception; [`PythonCode::leave`]
/// runs the handler of a SIGINT that came too late for the code to see, so
/// that none is lost in between. Nothing on other threads.
pub struct PythonCode {
    armed: bool,
    /// The handle ACTIVE held before (the enclosing call's, or null).
    previous: usize,
}

impl PythonCode {
    /// Takes Ctrl-C from the enclosing call (if any) for Python code about
    /// to run on this thread.
    pub fn enter() -> PythonCode {
        // SAFETY: pthread_self has no preconditions.
        let this = unsafe { libc::pthread_self() } as u64;
        if this != MAIN_THREAD.load(SeqCst) {
            return PythonCode {
                armed: false,
                previous: 0,
            };
        }
        let previous = ACTIVE.swap(std::ptr::null_mut(), SeqCst);
        PythonCode {
            armed: true,
            previous: previous as usize,
        }
    }

    /// Gives Ctrl-C back to the enclosing call, then runs Python's handler
    /// of a SIGINT that came after the code's last look: its
    /// `KeyboardInterrupt` is the code's (a SIGINT after the give-back both
    /// interrupts the call and raises it here).
    pub fn leave(self, py: pyo3::Python<'_>) -> pyo3::PyResult<()> {
        drop(self);
        // SAFETY: called with the GIL held; runs pending signal handlers (on
        // the main thread only, a no-op elsewhere).
        if unsafe { pyo3::ffi::PyErr_CheckSignals() } != 0 {
            return Err(pyo3::PyErr::fetch(py));
        }
        Ok(())
    }
}

impl Drop for PythonCode {
    fn drop(&mut self) {
        if self.armed {
            // On the main thread, inside the call whose handle `previous`
            // is (its guard, dropped later, keeps it alive).
            ACTIVE.store(self.previous as *mut InterruptHandle, SeqCst);
        }
    }
}
