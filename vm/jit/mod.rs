//! The compiling tier: hot functions become machine code (Cranelift), which
//! the interpreter enters at loop heads and function entries.
//!
//! Compiled code works on the frame's i32 register window: it loads the
//! registers it uses at entry and keeps them in machine registers. When it
//! leaves, it stores the registers it changed that the interpreter may
//! still read (`writeback`), so the window then holds everything the rest
//! of the function can observe, and returns the index of the next
//! instruction to interpret. It leaves before any instruction it does
//! not translate (calls, returns, most ref instructions, yields, ...) and
//! before any
//! instruction that would trap (a zero divisor, a bad buffer access, a
//! global out of range): the interpreter then executes that instruction, so
//! every trap, host call and frame change happens in one place, with the
//! same function, offset and source line in both tiers.
//!
//! The code is position-independent and calls the runtime only through
//! addresses it holds as constants (`helpers`), so a function is compiled
//! once into its own executable mapping with no linking.

#[cfg(feature = "jit")]
mod helpers;
#[cfg(feature = "jit")]
mod translate;
#[cfg(feature = "jit")]
mod writeback;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use crate::program::Function;
use crate::values::Ref;

/// What compiled code reads of the running context, passed by pointer.
#[repr(C)]
pub(crate) struct JitEnv {
    /// The frame's ref register window.
    pub refs: *mut Ref,
    /// The module's global storage.
    pub rwdata: *mut u8,
    /// Its length in bytes.
    pub rwdata_len: u64,
    /// This thread's buffer-lease token (`vm/values/buffer/lease.rs`).
    pub token: u64,
    /// Set by a helper that could not complete (compiled code then leaves
    /// before the instruction, for the interpreter to trap on it).
    pub fault: u32,
    /// The byte length `helpers::buffer_access` reports with a pointer.
    pub access_len: u64,
    /// The module's type table (this context's), for ref type checks.
    pub types: *const crate::values::TypeDef,
    /// Its length.
    pub types_len: usize,
    /// The fuel code with [`Checks::Limits`] may spend (in and out),
    /// charged per straight run: at most a slice of the context's.
    pub fuel: u64,
    /// Set when the code stopped because the fuel left did not pay for the
    /// next run (which is then not charged).
    pub fuel_short: u32,
}

/// A compiled function's entry: `(i32 window, env, start index) -> index of
/// the next instruction for the interpreter`.
type EntryFn = unsafe extern "C" fn(*mut u32, *mut JitEnv, u32) -> u32;

/// One function's machine code.
pub(crate) struct JitCode {
    /// The executable mapping that holds the code.
    #[cfg(feature = "jit")]
    _mem: memmap2::Mmap,
    entry: EntryFn,
    /// Which instruction indices compiled code can start at: the
    /// function's entry and every branch target when compiled eagerly, else
    /// the loop heads.
    entries: Box<[bool]>,
    /// The heads of loops that run round entirely in compiled code, and the
    /// function's entry when compiled code leads from there into one: where
    /// `Tier::Auto` enters.
    loop_heads: Box<[bool]>,
    /// Whether any `loop_heads` is set.
    pub has_loop_heads: bool,
    /// Bytes of machine code.
    pub size: usize,
}

impl JitCode {
    /// Whether to start compiled code at instruction `pc`: any entry when
    /// `eager` (`Tier::Jit`), else only a loop head.
    #[inline]
    pub fn enters_at(&self, pc: u32, eager: bool) -> bool {
        let set = if eager {
            &self.entries
        } else {
            &self.loop_heads
        };
        set.get(pc as usize).copied().unwrap_or(false)
    }

    /// Runs from instruction `pc` (an entry: [`JitCode::enters_at`]) until
    /// an instruction the interpreter must execute; returns its index.
    ///
    /// # Safety
    /// `regs` is the i32 register window of a frame of the function this
    /// code was compiled from (at least `i32_count` slots) and `env` holds
    /// that frame's ref window and its module's global storage; nothing
    /// else accesses either while the code runs.
    #[inline]
    pub unsafe fn run(&self, regs: *mut u32, env: &mut JitEnv, pc: u32) -> u32 {
        // SAFETY: the caller's contract is the one the translator assumed:
        // the verifier proved every register operand inside the window,
        // and branch targets, remap records and entries are instruction
        // indices of this function (translate::compile).
        unsafe { (self.entry)(regs, env, pc) }
    }
}

/// Which copy of a function's machine code a context runs: without any
/// limit check, or with the checks a context with limits needs (fuel
/// charged per straight run of instructions, from a slice the interpreter
/// hands it, so that it comes back to read the stop word). A context
/// without limits never pays for them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Checks {
    /// No fuel, deadline, interrupt or pause is set.
    None = 0,
    /// Fuel is counted (`program::runs`).
    Limits = 1,
}

/// A function's compiled code, made once per [`Checks`] (when hot) and
/// shared by every frame of it. The executor keeps one beside each function
/// (`exec::TieredFunction`); the program layer does not know of it.
#[derive(Default)]
pub(crate) struct JitSlot {
    /// Back edges taken in the interpreter so far (`Tier::Auto`).
    heat: AtomicU32,
    /// Per [`Checks`]: `Some(None)`: compiling was tried and the function
    /// is interpreted.
    code: [OnceLock<Option<JitCode>>; 2],
}

impl std::fmt::Debug for JitSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = |c: &OnceLock<Option<JitCode>>| match c.get() {
            None => "not compiled",
            Some(None) => "interpreted",
            Some(Some(_)) => "compiled",
        };
        write!(
            f,
            "{} / {} with limits",
            state(&self.code[0]),
            state(&self.code[1])
        )
    }
}

impl JitSlot {
    /// The code for `checks`, if compiled.
    #[inline]
    pub fn code(&self, checks: Checks) -> Option<&JitCode> {
        self.code[checks as usize].get().and_then(Option::as_ref)
    }

    /// Every copy compiled so far.
    pub fn codes(&self) -> impl Iterator<Item = &JitCode> {
        self.code
            .iter()
            .filter_map(|c| c.get().and_then(Option::as_ref))
    }

    /// Whether compiling for `checks` was tried and failed (or is
    /// unavailable), so the interpreter need not come back here.
    #[inline]
    pub fn refused(&self, checks: Checks) -> bool {
        matches!(self.code[checks as usize].get(), Some(None))
    }

    /// Counts one back edge; true once `threshold` have been counted.
    #[inline]
    pub fn heat_up(&self, threshold: u32) -> bool {
        let h = self.heat.load(Ordering::Relaxed);
        if h >= threshold {
            return true;
        }
        self.heat.store(h + 1, Ordering::Relaxed);
        h + 1 >= threshold
    }

    /// Compiles `func`, the function this slot belongs to, with `checks`
    /// (once per `checks`; later calls return the same result), entered
    /// anywhere when `eager` (`Tier::Jit`), else at its hot loop heads only
    /// (`Tier::Auto`). Whichever engine compiles a function first decides:
    /// the code is shared by every frame of the function, and is correct
    /// wherever it is entered.
    pub fn compile(&self, func: &Function, eager: bool, checks: Checks) -> Option<&JitCode> {
        self.code[checks as usize]
            .get_or_init(|| {
                #[cfg(feature = "jit")]
                {
                    translate::compile(func, eager, checks)
                }
                #[cfg(not(feature = "jit"))]
                {
                    let _ = (func, eager, checks);
                    None
                }
            })
            .as_ref()
    }
}

/// Whether this build can compile on this machine.
pub(crate) fn available() -> bool {
    #[cfg(feature = "jit")]
    {
        translate::isa().is_some()
    }
    #[cfg(not(feature = "jit"))]
    {
        false
    }
}
