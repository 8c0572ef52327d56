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
//! A call of a function of the same module is the exception: compiled
//! code checks the stack limits and capacities, stores the arguments into
//! the callee's window and calls the callee's compiled code directly, which
//! returns its results through the [`JitEnv`]. The copy that counts fuel
//! charges the call and the return as the interpreter's fueled loop does,
//! so fuel runs out at the same instruction either way. The interpreter's frame records of such calls
//! are written only when a callee leaves compiled code part-way: every
//! compiled caller then writes its callee's record and its own pc, and
//! returns [`LEFT_IN_CALLEE`], so the interpreter resumes the innermost
//! frame, never a native caller.
//!
//! The code is position-independent and calls the runtime only through
//! addresses it holds as constants (`helpers`). The only addresses of one
//! context it holds are its callees' (their entry cells and function
//! records), left as relocations: a function is compiled once per module
//! into a [`CodeImage`] ([`SharedCode`], kept with the module's lowered
//! functions), and each context that runs it maps its own copy with its
//! own callees' addresses filled in (`translate::link`). So the contexts
//! of one module (a vmvx executable's, one per worker) compile each hot
//! function once between them, not once each.

#[cfg(feature = "jit")]
mod background;
#[cfg(feature = "jit")]
mod bounds;
#[cfg(feature = "jit")]
mod helpers;
#[cfg(feature = "jit")]
mod translate;
#[cfg(feature = "jit")]
mod writeback;

#[cfg(feature = "jit")]
use std::sync::atomic::AtomicU8;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

#[cfg(feature = "jit")]
use crate::budget::Charge;
use crate::budget::MemoryBudget;
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
    /// next run (which is then not charged), or, with [`Checks::Polled`],
    /// because the stop word was raised at a back edge.
    pub fuel_short: u32,
    /// The context's stop word (`crate::stop::StopWord`), which code with
    /// [`Checks::Polled`] loads at every back edge.
    pub stop: *const std::sync::atomic::AtomicU32,
    /// One past the last frame record a call from compiled code may use:
    /// within the frame vector's capacity and the depth limit.
    pub frames_end: usize,
    /// The most bytes of the reference's stack the frames may take
    /// (`Limits::max_stack_bytes`).
    pub stack_bytes: u64,
    /// The start of the i32 register storage.
    pub i32s: usize,
    /// One past the last i32 slot a callee's window may reach: within the
    /// storage and the slot limit.
    pub i32_end: usize,
    /// The lowest native stack address a call from compiled code may
    /// start at (the stack grows down): below it the call is left to the
    /// interpreter.
    pub native_floor: usize,
    /// The running module's index (for frame records).
    pub module: u32,
    /// The ref window base of every frame called from compiled code
    /// (callees called so have no refs).
    pub ref_top: u32,
    /// Set by the compiled caller of the innermost callee that left
    /// compiled code part-way: the address of its frame record.
    pub innermost: usize,
    /// The results of the last return from compiled code, one per
    /// result, each in the low bytes of its word.
    pub ret: [u64; MAX_INLINE_RESULTS],
    /// The context's memory budget, which list growth in compiled code is
    /// charged to (`helpers::list_resize`).
    pub memory: *const std::sync::Arc<crate::budget::MemoryBudget>,
    /// The most elements a list may hold (`Limits::max_list_elements`).
    pub max_list_elements: u32,
    /// The context's tracker of the lists that can form cycles, which a
    /// variant list or list of lists allocated in compiled code joins
    /// (`helpers::list_alloc`), as the interpreter's do.
    pub lists: *mut crate::values::list::cycles::ListTracker,
}

/// The most results a function called from compiled code returns.
pub(crate) const MAX_INLINE_RESULTS: usize = 8;

/// The largest i32 window of a function called from compiled code (its
/// window is zeroed with unrolled stores).
pub(crate) const MAX_INLINE_WINDOW: u32 = 64;

/// What compiled code returns instead of an instruction index when a call
/// it made left compiled code part-way: the frames (the callee's on top)
/// already say where each goes on. Not an index (functions are shorter).
pub(crate) const LEFT_IN_CALLEE: u32 = 0x7fff_ffff;

/// Set in what compiled code returns at a `vm.return` whose results it
/// put in [`JitEnv::ret`]: a caller in compiled code goes on, the
/// interpreter clears it and performs the return.
pub(crate) const RETURNED_BIT: u32 = 0x8000_0000;

/// What compiled code knows of a function it calls: the frame record's
/// function pointer, the cell holding its entry, its window and frame
/// size and its signature. Only functions without refs whose arguments and
/// results are numbers (`i`, `f`, `I`, `F`) are called so.
#[derive(Clone, Debug)]
#[cfg_attr(
    not(feature = "jit"),
    expect(
        dead_code,
        reason = "read by compiled code, which the jit feature builds"
    )
)]
pub(crate) struct Callee {
    /// The `TieredFunction`'s address (what a frame record holds).
    pub func: usize,
    /// The address of its slot's entry cell for the copy being compiled
    /// ([`JitSlot::entry_cell`]): 0 while it has no code to call.
    pub entry: usize,
    /// Its i32 window.
    pub i32_count: u32,
    /// Its frame's bytes on the reference's stack.
    pub frame_bytes: u32,
    /// Argument kinds.
    pub arg_kinds: Vec<u8>,
    /// Result kinds.
    pub result_kinds: Vec<u8>,
    /// The slots of its window that may be read before written
    /// ([`entry_live_slots`]): zeroed by the caller unless an argument
    /// fills them.
    pub zeroed: Vec<u16>,
    /// The fuel of its first straight run (`program::runs`), which a
    /// caller counting fuel pays with the call, as the interpreter does.
    pub first_run: u32,
}

/// The i32 slots of `func` that may be read before they are written from
/// its entry (every slot without the compiling tier).
pub(crate) fn entry_live_slots(func: &Function) -> Vec<u16> {
    #[cfg(feature = "jit")]
    {
        writeback::live_at_entry(func)
    }
    #[cfg(not(feature = "jit"))]
    {
        (0..func.i32_count).collect()
    }
}

/// The functions a function calls from compiled code, by ordinal.
pub(crate) type Callees = std::collections::HashMap<u32, Callee>;

/// Whether a function of this shape can be called from compiled code.
pub(crate) fn callable_inline(func: &Function) -> bool {
    let numbers = |k: &[u8]| k.iter().all(|k| matches!(k, b'i' | b'f' | b'I' | b'F'));
    func.ref_count == 0
        && u32::from(func.i32_count) <= MAX_INLINE_WINDOW
        && numbers(&func.arg_kinds)
        && numbers(&func.result_kinds)
        && func.result_kinds.len() <= MAX_INLINE_RESULTS
}

/// A compiled function's entry: `(i32 window, env, start index, the
/// frame's record, the frame's stack end) -> index of the next instruction
/// for the interpreter` (or [`LEFT_IN_CALLEE`], or an index with
/// [`RETURNED_BIT`]).
type EntryFn = unsafe extern "C" fn(*mut u32, *mut JitEnv, u32, *mut u8, u64) -> u32;

/// One function's machine code before it is linked into a context: the
/// bytes, where its callees' addresses go, and where it can be entered.
#[cfg(feature = "jit")]
pub(crate) struct CodeImage {
    bytes: Box<[u8]>,
    relocs: Box<[AddressReloc]>,
    entries: Box<[bool]>,
    loop_heads: Box<[bool]>,
    has_loop_heads: bool,
    callable: bool,
}

/// Which address of a callee compiled code holds.
#[cfg(feature = "jit")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CalleeAddress {
    /// [`Callee::func`].
    Function = 0,
    /// [`Callee::entry`].
    EntryCell = 1,
}

/// An 8-byte field of a [`CodeImage`] that holds `callee`'s address
/// `what` plus `addend`.
#[cfg(feature = "jit")]
struct AddressReloc {
    offset: u32,
    callee: u32,
    what: CalleeAddress,
    addend: i64,
}

/// How a compile for one copy ended, shared by the contexts of a module:
/// the image, or why the function stays interpreted.
#[cfg(feature = "jit")]
type ImageOutcome = Result<Arc<CodeImage>, Option<CompileRefusal>>;

/// A function's compiled images, shared by every context of its module
/// (kept with the module's lowered functions, `context/link.rs`): per
/// [`Checks`] and per engine (`Tier::Auto` or `Tier::Jit`, whose code is
/// entered at different places), whether one context is compiling it and
/// how that ended. A context that finds an image links it
/// (`translate::link`) instead of compiling; one that finds a compile under
/// way interprets meanwhile. A refusal for want of memory is one
/// context's budget, not the function's: it is not shared (another context
/// may try).
#[derive(Default)]
pub(crate) struct SharedCode {
    #[cfg(feature = "jit")]
    state: [AtomicU8; 2 * Checks::COUNT],
    #[cfg(feature = "jit")]
    images: [OnceLock<ImageOutcome>; 2 * Checks::COUNT],
}

#[cfg(feature = "jit")]
const IDLE: u8 = 0;
#[cfg(feature = "jit")]
const COMPILING: u8 = 1;
#[cfg(feature = "jit")]
const DONE: u8 = 2;

#[cfg(feature = "jit")]
impl SharedCode {
    fn key(checks: Checks, eager: bool) -> usize {
        checks as usize * 2 + usize::from(eager)
    }

    /// The outcome another context's compile left for `key`, if any.
    fn done(&self, key: usize) -> Option<&ImageOutcome> {
        if self.state[key].load(Ordering::Acquire) == DONE {
            self.images[key].get()
        } else {
            None
        }
    }

    /// Claims the compile of `key` for the caller: false when another
    /// context is compiling it or has done so.
    fn claim(&self, key: usize) -> bool {
        self.state[key]
            .compare_exchange(IDLE, COMPILING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Records how the claimed compile of `key` ended.
    fn finish(&self, key: usize, outcome: &ImageOutcome) {
        if let Err(Some(CompileRefusal::OverMemoryBudget { .. })) = outcome {
            self.abandon(key);
            return;
        }
        let _ = self.images[key].set(outcome.clone());
        self.state[key].store(DONE, Ordering::Release);
    }

    /// Gives the claimed compile of `key` up (nobody waits for it): another
    /// context may compile it.
    fn abandon(&self, key: usize) {
        let _ =
            self.state[key].compare_exchange(COMPILING, IDLE, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// What a context makes of a shared outcome: `image` linked with its own
/// callees.
#[cfg(feature = "jit")]
fn linked(image: &ImageOutcome, callees: &Callees) -> Outcome {
    match image {
        Ok(image) => translate::link(image, callees).ok_or(None),
        Err(why) => Err(why.clone()),
    }
}

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
    /// Whether compiled code calls it at its entry (a function of the
    /// right shape whose compiled code goes on from there to a loop, a
    /// call or its return before it leaves); `Tier::Auto` enters it there
    /// too.
    pub callable: bool,
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
    /// code was compiled from (at least `i32_count` slots), the top frame,
    /// whose record is at `frame` (in the frame vector) with `stack_end`;
    /// `env` holds that frame's ref window, its module's global storage
    /// and the stacks' bounds; nothing else accesses any of them while the
    /// code runs.
    #[inline]
    pub unsafe fn run(
        &self,
        regs: *mut u32,
        env: &mut JitEnv,
        pc: u32,
        frame: *mut u8,
        stack_end: u64,
    ) -> u32 {
        // SAFETY: the caller's contract is the one the translator assumed:
        // the verifier proved every register operand inside the window,
        // and branch targets, remap records and entries are instruction
        // indices of this function (translate::compile); `env`'s stack
        // fields describe the frame vector and register storage `frame`
        // and `regs` lie in.
        unsafe { (self.entry)(regs, env, pc, frame, stack_end) }
    }
}

/// Which copy of a function's machine code a context runs: without any
/// limit check; with the stop word read at every back edge (a deadline or
/// an interrupt handle, no fuel); or with fuel charged per straight run of
/// instructions, from a slice the interpreter hands it, so that it comes
/// back to read the stop word. A context without limits never pays for
/// them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Checks {
    /// No fuel, deadline, interrupt or pause is set.
    None = 0,
    /// Fuel is counted (`program::runs`), or a pause flag is set.
    Limits = 1,
    /// A deadline or interrupt handle, no fuel: one load and test of the
    /// stop word at every back edge.
    Polled = 2,
}

impl Checks {
    /// How many copies there are (the length of per-copy arrays).
    pub const COUNT: usize = 3;
}

/// Why the compiling tier left a function to the interpreter (see
/// [`crate::Context::functions_left_to_interpreter`]). The function runs
/// the same either way, only slower.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompileRefusal {
    /// The function is larger than the compiling tier takes on: its size
    /// in the units of docs/HOSTILE_INPUT.md ("Compiling": instructions and
    /// blocks times the registers they touch), and the limit. Cranelift's
    /// time and memory grow faster than a function's length, so a bound
    /// on the size bounds every compile (every one measured below the
    /// limit took under 100 ms and 15 MB of heap).
    TooLarge {
        /// The function's size.
        units: u64,
        /// The most the compiling tier takes on.
        limit: u64,
    },
    /// Compiling it would take more memory than the context's budget
    /// (`Limits::max_memory_bytes`) had left.
    OverMemoryBudget {
        /// The memory the compile would have been charged.
        bytes: u64,
    },
    /// The code generator failed: it panicked (a bug in it, caught; the
    /// default panic hook has printed where), with this message.
    CompilerFailed {
        /// The panic's message.
        message: String,
    },
}

impl std::fmt::Display for CompileRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileRefusal::TooLarge { units, limit } => {
                write!(
                    f,
                    "too large to compile: size {units} over the limit of {limit}"
                )
            }
            CompileRefusal::OverMemoryBudget { bytes } => write!(
                f,
                "compiling would need {bytes} bytes, more than the memory budget had left \
                 (Limits::max_memory_bytes, irvm --max-memory-bytes)"
            ),
            CompileRefusal::CompilerFailed { message } => {
                write!(f, "the compiler failed: {message}")
            }
        }
    }
}

/// A bytecode function the compiling tier left to the interpreter, and why
/// ([`crate::Context::functions_left_to_interpreter`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftToInterpreter {
    /// The module's name.
    pub module: String,
    /// The function's name (its export's, else the debug database's, else
    /// `fn<ordinal>`).
    pub function: String,
    /// Why it was not compiled.
    pub reason: CompileRefusal,
}

/// How a compile ended: the code, or why the function stays interpreted
/// (`None`: it had nothing worth compiling, or the code generator
/// declined it without failing).
pub(crate) type Outcome = Result<JitCode, Option<CompileRefusal>>;

/// What a compile is asked for, besides the function.
#[cfg(feature = "jit")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    /// Entered anywhere (`Tier::Jit`), else at hot loop heads only.
    pub eager: bool,
    /// The copy to make.
    pub checks: Checks,
    /// The function's own entry cell for `checks` ([`JitSlot::entry_cell`]):
    /// calls to it from its own code are made directly.
    pub own_cell: usize,
    /// Tests only: the compile panics inside the code generator's place.
    #[cfg(test)]
    pub panic: bool,
}

/// A function's compiled code, made once per [`Checks`] (when hot) and
/// shared by every frame of it. The executor keeps one beside each function
/// (`exec::TieredFunction`); the program layer does not know of it.
///
/// Per copy the slot is *not compiled*, *compiling* (a background compile
/// runs: `compiling` is set), *ready* (`code` holds the machine code) or
/// *refused* (`code` holds why not); a background result moves into `code`
/// the next time the interpreter asks ([`JitSlot::compile`]), or when the
/// context counts its compiled functions.
#[derive(Default)]
pub(crate) struct JitSlot {
    /// Back edges taken in the interpreter so far (`Tier::Auto`).
    heat: AtomicU32,
    /// The images the contexts of the function's module share.
    shared: Arc<SharedCode>,
    /// Per [`Checks`]: the code, or why the function is interpreted.
    code: [OnceLock<Outcome>; Checks::COUNT],
    /// Per [`Checks`]: the background compile under way, if one was
    /// started.
    #[cfg(feature = "jit")]
    compiling: [OnceLock<Arc<background::Pending>>; Checks::COUNT],
    /// Per [`Checks`]: the entry compiled callers call (0 until the code
    /// is ready and [`JitCode::callable`]).
    entry: [std::sync::atomic::AtomicUsize; Checks::COUNT],
}

impl std::fmt::Debug for JitSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = |c: &OnceLock<Outcome>| match c.get() {
            None => "not compiled",
            Some(Err(_)) => "interpreted",
            Some(Ok(_)) => "compiled",
        };
        write!(
            f,
            "{} / {} with fuel / {} polled",
            state(&self.code[0]),
            state(&self.code[1]),
            state(&self.code[2])
        )
    }
}

impl JitSlot {
    /// A slot for a function of a module whose contexts share `shared`.
    pub fn new(shared: Arc<SharedCode>) -> JitSlot {
        JitSlot {
            shared,
            ..JitSlot::default()
        }
    }

    /// The images this function shares with the other contexts of its
    /// module.
    pub fn shared(&self) -> &Arc<SharedCode> {
        &self.shared
    }

    /// Whether another context of the module has compiled the copy for
    /// `checks` (`eager`: for `Tier::Jit`), so that this one need not wait
    /// for the function to get hot before it links the code.
    #[inline]
    pub fn shared_ready(&self, checks: Checks, eager: bool) -> bool {
        #[cfg(feature = "jit")]
        {
            self.shared
                .done(SharedCode::key(checks, eager))
                .is_some_and(Result::is_ok)
        }
        #[cfg(not(feature = "jit"))]
        {
            let _ = (checks, eager);
            false
        }
    }

    /// The code for `checks`, if compiled.
    #[inline]
    pub fn code(&self, checks: Checks) -> Option<&JitCode> {
        self.code[checks as usize]
            .get()
            .and_then(|c| c.as_ref().ok())
    }

    /// The address of the cell compiled callers load the entry of the
    /// copy for `checks` from (stable: the slot outlives every code that
    /// calls it, all of one context).
    pub fn entry_cell(&self, checks: Checks) -> usize {
        &self.entry[checks as usize] as *const std::sync::atomic::AtomicUsize as usize
    }

    /// Sets the entry cell of `checks` from its landed code.
    fn publish(&self, checks: Checks) {
        if let Some(code) = self.code(checks) {
            if code.callable {
                self.entry[checks as usize].store(code.entry as usize, Ordering::Release);
            }
        }
    }

    /// Every copy compiled so far (finished background compiles included).
    pub fn codes(&self) -> impl Iterator<Item = &JitCode> {
        self.land_all();
        self.code
            .iter()
            .filter_map(|c| c.get().and_then(|c| c.as_ref().ok()))
    }

    /// Why each copy that was refused for a reason worth reporting was
    /// (finished background compiles included).
    pub fn refusals(&self) -> impl Iterator<Item = &CompileRefusal> {
        self.land_all();
        self.code.iter().filter_map(|c| match c.get() {
            Some(Err(Some(why))) => Some(why),
            _ => None,
        })
    }

    /// Whether compiling for `checks` was tried and failed (or is
    /// unavailable), so the interpreter need not come back here.
    #[inline]
    pub fn refused(&self, checks: Checks) -> bool {
        matches!(self.code[checks as usize].get(), Some(Err(_)))
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
    ///
    /// Within bounds (`bounds.rs`): a function too large is refused; the
    /// compile's memory is charged to `budget` while it runs, and refused
    /// when it does not fit; a panic in the code generator is caught and
    /// the function refused. A function that is not small compiles in the
    /// background unless `eager`: `None` then until its code is ready, and
    /// the interpreter runs on meanwhile.
    pub fn compile(
        &self,
        func: &Function,
        eager: bool,
        checks: Checks,
        budget: &Arc<MemoryBudget>,
        callees: impl FnOnce() -> Callees,
    ) -> Option<&JitCode> {
        let code = self.compile_inner(func, eager, checks, budget, callees);
        self.publish(checks);
        code
    }

    fn compile_inner(
        &self,
        func: &Function,
        eager: bool,
        checks: Checks,
        budget: &Arc<MemoryBudget>,
        callees: impl FnOnce() -> Callees,
    ) -> Option<&JitCode> {
        let slot = &self.code[checks as usize];
        if let Some(done) = slot.get() {
            return done.as_ref().ok();
        }
        #[cfg(feature = "jit")]
        {
            let request = Request {
                eager,
                checks,
                own_cell: self.entry_cell(checks),
                #[cfg(test)]
                panic: tests::PANIC_IN_COMPILE.with(std::cell::Cell::get),
            };
            if let Some(pending) = self.compiling[checks as usize].get() {
                let outcome = pending.take()?;
                return slot.get_or_init(|| outcome).as_ref().ok();
            }
            // Another context of the module compiled it, or is compiling
            // it (this one interprets meanwhile).
            let key = SharedCode::key(checks, eager);
            if let Some(image) = self.shared.done(key) {
                let outcome = linked(image, &callees());
                return slot.get_or_init(|| outcome).as_ref().ok();
            }
            if !self.shared.claim(key) {
                return self.shared.done(key).and_then(|image| {
                    slot.get_or_init(|| linked(image, &callees())).as_ref().ok()
                });
            }
            let callees = callees();
            let plan = match bounds::plan(func) {
                Ok(plan) => plan,
                Err(why) => {
                    let outcome = Err(Some(why));
                    self.shared.finish(key, &outcome);
                    return slot
                        .get_or_init(|| linked(&outcome, &callees))
                        .as_ref()
                        .ok();
                }
            };
            if plan.background && !eager {
                let pending = Arc::new(background::Pending::default());
                let job = background::Job {
                    func: func.clone(),
                    request,
                    callees,
                    plan,
                    budget: budget.clone(),
                    pending: Arc::downgrade(&pending),
                    shared: self.shared.clone(),
                    key,
                };
                match background::submit(job) {
                    Ok(()) => {
                        let _ = self.compiling[checks as usize].set(pending);
                        return None;
                    }
                    // No worker thread: compile here (still within bounds).
                    Err(job) => {
                        let image = compile_now(func, job.request, &job.callees, &plan, budget);
                        self.shared.finish(key, &image);
                        let outcome = linked(&image, &job.callees);
                        return slot.get_or_init(|| outcome).as_ref().ok();
                    }
                }
            }
            let image = compile_now(func, request, &callees, &plan, budget);
            self.shared.finish(key, &image);
            let outcome = linked(&image, &callees);
            slot.get_or_init(|| outcome).as_ref().ok()
        }
        #[cfg(not(feature = "jit"))]
        {
            let _ = (func, eager, budget, callees);
            slot.get_or_init(|| Err(None)).as_ref().ok()
        }
    }

    /// Moves the results of finished background compiles into `code`.
    fn land_all(&self) {
        #[cfg(feature = "jit")]
        for (c, (slot, pending)) in self.code.iter().zip(&self.compiling).enumerate() {
            if slot.get().is_none() {
                if let Some(outcome) = pending.get().and_then(|p| p.take()) {
                    let _ = slot.set(outcome);
                    self.publish([Checks::None, Checks::Limits, Checks::Polled][c]);
                }
            }
        }
    }
}

/// Stack a compile needs left on the calling thread (Cranelift's
/// recursion, more in an unoptimized build): with less, the compile runs
/// on a thread of its own.
#[cfg(feature = "jit")]
const COMPILE_STACK_ROOM: usize = 1 << 20;

/// The stack of that thread.
#[cfg(feature = "jit")]
const COMPILE_THREAD_STACK: usize = 8 << 20;

/// Bytes of stack left below this point on the calling thread (unbounded
/// when the system does not say).
#[cfg(feature = "jit")]
fn stack_room() -> usize {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    thread_stack_low().map_or(usize::MAX, |low| here.saturating_sub(low))
}

/// Compiles `func` as `plan` says (on this thread, or on one with a larger
/// stack when this one has little left), the plan's memory
/// charged to `budget` while it runs (or refused when it does not fit),
/// and a panic inside the code generator caught and reported as the
/// refusal's message. Nothing shared is left half-changed by a panic: the
/// code generators (`OnceLock`s) exist before it starts, and everything
/// else the compile touches is its own.
#[cfg(feature = "jit")]
fn compile_now(
    func: &Function,
    request: Request,
    callees: &Callees,
    plan: &bounds::Plan,
    budget: &Arc<MemoryBudget>,
) -> ImageOutcome {
    let Ok(_charge) = Charge::new(budget, plan.memory, "compiling a function") else {
        return Err(Some(CompileRefusal::OverMemoryBudget {
            bytes: plan.memory,
        }));
    };
    let isa = plan.isa().ok_or(None)?;
    let started = crate::profile::any_active().then(std::time::Instant::now);
    let compile = || {
        #[cfg(test)]
        if request.panic {
            panic!("a compiler panic the tests asked for");
        }
        translate::compile(func, &request, callees, isa)
    };
    let run = || std::panic::catch_unwind(std::panic::AssertUnwindSafe(compile));
    let outcome = if stack_room() < COMPILE_STACK_ROOM {
        // An embedder's thread with a small stack: the code generator
        // runs on a thread of its own (and this one waits for it).
        std::thread::scope(|scope| {
            match std::thread::Builder::new()
                .name("irvm-compile-here".into())
                .stack_size(COMPILE_THREAD_STACK)
                .spawn_scoped(scope, run)
            {
                Ok(thread) => thread.join().unwrap_or_else(Err),
                Err(_) => run(),
            }
        })
    } else {
        run()
    };
    if let Some(start) = started {
        crate::profile::compile_event(
            &format!(
                "compile function {} ({} instructions)",
                func.ordinal,
                func.code.len()
            ),
            start,
            std::time::Instant::now(),
        );
    }
    match outcome {
        Ok(Some(image)) => Ok(Arc::new(image)),
        Ok(None) => Err(None),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(Some(CompileRefusal::CompilerFailed { message }))
        }
    }
}

thread_local! {
    /// This thread's lowest stack address, once asked (0: not yet).
    static STACK_LOW: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The lowest address of the calling thread's stack, when the system says
/// (asked once per thread).
pub(crate) fn thread_stack_low() -> Option<usize> {
    let known = STACK_LOW.with(|c| c.get());
    if known != 0 {
        return Some(known);
    }
    let low = ask_stack_low()?;
    STACK_LOW.with(|c| c.set(low));
    Some(low)
}

#[cfg(target_os = "linux")]
fn ask_stack_low() -> Option<usize> {
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is
    // read and destroyed after; `addr` and `size` are plain out-values.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (got == 0 && !addr.is_null()).then_some(addr as usize)
    }
}

#[cfg(not(target_os = "linux"))]
fn ask_stack_low() -> Option<usize> {
    None
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

#[cfg(all(test, feature = "jit"))]
mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Set by a test: compiles asked for on this thread panic inside
        /// the code generator's place (in the background too: the request
        /// carries it).
        pub(super) static PANIC_IN_COMPILE: Cell<bool> = const { Cell::new(false) };
    }

    #[cfg(feature = "asm")]
    mod bounded {
        use super::PANIC_IN_COMPILE;
        use crate::jit::{bounds, CalleeAddress, Checks, SharedCode};
        use crate::{CompileRefusal, Context, Limits, Module, Tier, TypeRegistry, Value};

        /// `sum(n)`: a small hot loop, compiled on the calling thread.
        const SMALL: &str = "vm.module @m version 0\nvm.export @sum\n\
            vm.func @sum(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32.zero\n  \
            %i2 = vm.const.i32 1\n  vm.br ^bb1(%i1->%i3, %i1->%i4)\n^bb1:\n  \
            %i5 = vm.cmp.lt.i32.s %i3, %i0\n  vm.cond_br %i5, ^bb2(), ^bb3()\n^bb2:\n  \
            %i6 = vm.xor.i32 %i4, %i3\n  %i4 = vm.add.i32 %i6, %i3\n  \
            %i3 = vm.add.i32 %i3, %i2\n  vm.br ^bb1()\n^bb3:\n  vm.return %i4\n}\n";

        /// `sum(n)`: `n` passes of a loop of `body` additions over `regs`
        /// registers (3 and up), then the sum of the first 32.
        fn wide(body: usize, regs: u16) -> String {
            let mut s = String::from(
                "vm.module @m version 0\nvm.export @sum\nvm.func @sum(%i0: i32) -> (i32) {\n\
                 ^bb0:\n  %i1 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n",
            );
            for k in 0..body {
                let (d, a, b) = (
                    3 + (k * 7) % (regs as usize - 3),
                    3 + k % (regs as usize - 3),
                    3 + (k * 13 + 5) % (regs as usize - 3),
                );
                s.push_str(&format!(
                    "  %i{d} = vm.add.i32 %i{a}, %i{b}\n  %i{d} = vm.add.i32 %i{d}, %i1\n"
                ));
            }
            s.push_str("  %i0 = vm.sub.i32 %i0, %i1\n  %i2 = vm.cmp.nz.i32 %i0\n  vm.cond_br %i2, ^bb1(), ^bb2()\n^bb2:\n  %i2 = vm.const.i32.zero\n");
            for r in 3..regs.min(35) {
                s.push_str(&format!("  %i2 = vm.add.i32 %i2, %i{r}\n"));
            }
            s.push_str("  vm.return %i2\n}\n");
            s
        }

        fn context(source: &str, tier: Tier, limits: Limits) -> Context {
            let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
            ctx.set_tier(tier);
            ctx.register_module(Module::from_assembly(source, "m.vmasm").expect("assembles"))
                .expect("registers");
            ctx
        }

        fn sum(ctx: &mut Context, n: i32) -> i32 {
            let f = ctx.function("m.sum").expect("exported");
            match ctx.invoke(&f, &[Value::I32(n)]).expect("runs")[..] {
                [Value::I32(v)] => v,
                ref other => panic!("{other:?}"),
            }
        }

        /// The function's size in the compiling tier's units.
        fn units(source: &str) -> u64 {
            let ctx = context(source, Tier::Interp, Limits::default());
            let crate::context::Registered::Bytecode(b) = &ctx.modules[0] else {
                unreachable!("one bytecode module")
            };
            bounds::measure(&b.funcs[0]).units()
        }

        /// Waits (up to a minute) until the background compile of `ctx`'s
        /// function has landed, compiled or refused.
        fn settle(ctx: &Context) {
            let start = std::time::Instant::now();
            while ctx.compiled_functions().0 == 0
                && ctx.functions_left_to_interpreter().is_empty()
                && start.elapsed() < std::time::Duration::from_secs(60)
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }

        /// A function between the foreground and the overall limit.
        fn background_sized() -> String {
            let source = wide(400, 40);
            let u = units(&source);
            assert!(
                u > bounds::MAX_FOREGROUND_UNITS && u <= bounds::MAX_UNITS,
                "{u} units: not a background compile"
            );
            source
        }

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn a_panic_in_the_compiler_leaves_the_function_to_the_interpreter() {
            if !Tier::compiler_available() {
                return;
            }
            let big = background_sized();
            // Small functions compile on this thread (and eagerly with
            // Tier::Jit); larger ones in the background with Tier::Auto.
            for (source, tier, n) in [
                (SMALL, Tier::Jit, 1000),
                (SMALL, Tier::Auto, 100_000),
                (big.as_str(), Tier::Jit, 30),
                (big.as_str(), Tier::Auto, 30_000),
            ] {
                let want = sum(&mut context(source, Tier::Interp, Limits::default()), n);
                let mut ctx = context(source, tier, Limits::default());
                PANIC_IN_COMPILE.with(|p| p.set(true));
                let got = sum(&mut ctx, n);
                PANIC_IN_COMPILE.with(|p| p.set(false));
                assert_eq!(got, want, "{tier}");
                settle(&ctx);
                let left = ctx.functions_left_to_interpreter();
                assert_eq!(left.len(), 1, "{tier}: {left:?}");
                assert_eq!(
                    (left[0].module.as_str(), left[0].function.as_str()),
                    ("m", "sum")
                );
                assert_eq!(
                    left[0].reason,
                    CompileRefusal::CompilerFailed {
                        message: "a compiler panic the tests asked for".into()
                    }
                );
                assert_eq!(
                    left[0].reason.to_string(),
                    "the compiler failed: a compiler panic the tests asked for"
                );
                assert_eq!(ctx.compiled_functions().0, 0);
                // The function stays interpreted, and nothing was left
                // poisoned: it runs again, and compiles in a new context.
                assert_eq!(sum(&mut ctx, n), want);
                let mut fresh = context(source, tier, Limits::default());
                assert_eq!(sum(&mut fresh, n), want);
                settle(&fresh);
                assert_eq!(fresh.compiled_functions().0, 1, "{tier}");
                assert!(fresh.functions_left_to_interpreter().is_empty());
            }
        }

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn a_large_function_compiles_in_the_background_and_is_entered_when_ready() {
            if !Tier::compiler_available() {
                return;
            }
            let source = background_sized();
            let want = sum(
                &mut context(&source, Tier::Interp, Limits::default()),
                50_000,
            );
            let mut ctx = context(&source, Tier::Auto, Limits::default());
            // The loop gets hot after 20,000 passes; the call goes on
            // interpreting while the function compiles.
            assert_eq!(sum(&mut ctx, 50_000), want);
            settle(&ctx);
            assert_eq!(ctx.compiled_functions().0, 1);
            assert_eq!(sum(&mut ctx, 50_000), want, "compiled");
        }

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn a_context_dropped_while_its_function_compiles_is_harmless() {
            if !Tier::compiler_available() {
                return;
            }
            let source = background_sized();
            let want = sum(
                &mut context(&source, Tier::Interp, Limits::default()),
                20_010,
            );
            for _ in 0..4 {
                let mut ctx = context(&source, Tier::Auto, Limits::default());
                // Hot at the very end of the call: the compile starts and
                // the context goes while it runs (or before it starts).
                assert_eq!(sum(&mut ctx, 20_010), want);
                drop(ctx);
            }
            // The worker goes on serving.
            let mut ctx = context(&source, Tier::Auto, Limits::default());
            assert_eq!(sum(&mut ctx, 20_010), want);
            settle(&ctx);
            assert_eq!(ctx.compiled_functions().0, 1);
        }

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn a_compile_that_does_not_fit_the_memory_budget_is_refused() {
            if !Tier::compiler_available() {
                return;
            }
            let limits = Limits {
                max_memory_bytes: 1 << 20,
                ..Limits::default()
            };
            for (tier, n) in [(Tier::Jit, 1000), (Tier::Auto, 100_000)] {
                // What the call holds (its registers) in the interpreter.
                let mut interp = context(SMALL, Tier::Interp, limits);
                let want = sum(&mut interp, n);
                let mut ctx = context(SMALL, tier, limits);
                assert_eq!(sum(&mut ctx, n), want);
                let left = ctx.functions_left_to_interpreter();
                assert_eq!(left.len(), 1, "{left:?}");
                assert!(
                    matches!(left[0].reason, CompileRefusal::OverMemoryBudget { bytes } if bytes > 1 << 20),
                    "{left:?}"
                );
                assert!(left[0].reason.to_string().contains("--max-memory-bytes"));
                assert_eq!(
                    ctx.memory_in_use(),
                    interp.memory_in_use(),
                    "nothing stays charged"
                );
            }
            // With the default budget, the compile's charge is taken and
            // given back.
            let mut interp = context(SMALL, Tier::Interp, Limits::default());
            let want = sum(&mut interp, 1000);
            let mut ctx = context(SMALL, Tier::Jit, Limits::default());
            assert_eq!(sum(&mut ctx, 1000), want);
            assert_eq!(ctx.compiled_functions().0, 1);
            assert_eq!(ctx.memory_in_use(), interp.memory_in_use());
            assert!(
                ctx.memory_peak() > interp.memory_peak() + (1 << 20),
                "the compile was charged"
            );
        }

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn a_function_over_the_limit_is_interpreted() {
            let source = wide(3000, 400);
            let u = units(&source);
            assert!(u > bounds::MAX_UNITS, "{u}");
            let want = sum(&mut context(&source, Tier::Interp, Limits::default()), 3);
            for tier in [Tier::Jit, Tier::Auto] {
                let n = if tier == Tier::Jit { 3 } else { 20_010 };
                let want = if tier == Tier::Jit {
                    want
                } else {
                    sum(&mut context(&source, Tier::Interp, Limits::default()), n)
                };
                let mut ctx = context(&source, tier, Limits::default());
                assert_eq!(sum(&mut ctx, n), want);
                if Tier::compiler_available() {
                    let left = ctx.functions_left_to_interpreter();
                    assert_eq!(
                        left.iter().map(|l| &l.reason).collect::<Vec<_>>(),
                        [&CompileRefusal::TooLarge {
                            units: u,
                            limit: bounds::MAX_UNITS
                        }]
                    );
                }
            }
        }

        /// A loop calling `@twice` and `@inc` (ordinals 0 and 1), then
        /// `@loop` itself (ordinal 2).
        const CALLER: &str = "vm.module @m version 0\nvm.export @sum\n\
            vm.func @twice(%i0: i32) -> (i32) {\n^bb0:\n  %i0 = vm.add.i32 %i0, %i0\n  \
            vm.return %i0\n}\n\
            vm.func @inc(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32 1\n  \
            %i0 = vm.add.i32 %i0, %i1\n  vm.return %i0\n}\n\
            vm.func @sum(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32.zero\n  \
            %i2 = vm.const.i32 1\n  vm.br ^bb1(%i1->%i3, %i1->%i4)\n^bb1:\n  \
            %i5 = vm.cmp.lt.i32.s %i3, %i0\n  vm.cond_br %i5, ^bb2(), ^bb3()\n^bb2:\n  \
            %i6 = vm.call @twice(%i3)\n  %i6 = vm.call @inc(%i6)\n  \
            %i4 = vm.xor.i32 %i4, %i6\n  %i3 = vm.add.i32 %i3, %i2\n  vm.br ^bb1()\n\
            ^bb3:\n  vm.return %i4\n}\n";

        #[test]
        #[cfg_attr(miri, ignore = "compiles and runs machine code")]
        fn linked_code_holds_its_own_contexts_callee_addresses() {
            // Each context's copy of the shared image: every relocated
            // field is that context's own callee's entry cell or function
            // (a wrong cell, one that stays 0, would still give right
            // results, every call going through the interpreter).
            if !Tier::compiler_available() {
                return;
            }
            let module = Module::from_assembly(CALLER, "m.vmasm").expect("assembles");
            let make = || {
                let mut ctx = Context::new(&TypeRegistry::new());
                ctx.set_tier(Tier::Jit);
                ctx.register_module(module.clone()).expect("registers");
                ctx
            };
            let want = sum(&mut context(CALLER, Tier::Interp, Limits::default()), 1000);
            let mut first = make();
            assert_eq!(sum(&mut first, 1000), want);
            let mut second = make();
            assert_eq!(sum(&mut second, 1000), want);
            for (which, ctx) in [("first", &first), ("second", &second)] {
                let crate::context::Registered::Bytecode(b) = &ctx.modules[0] else {
                    unreachable!("one bytecode module")
                };
                let caller = &b.funcs[2];
                let key = SharedCode::key(Checks::None, true);
                let Some(Ok(image)) = caller.jit.shared().done(key) else {
                    panic!("{which}: no shared image");
                };
                let code = caller.jit.code(Checks::None).expect("compiled");
                assert_eq!(
                    image.relocs.len(),
                    4,
                    "{which}: two callees, two addresses each"
                );
                for r in image.relocs.iter() {
                    let callee = &b.funcs[r.callee as usize];
                    let address = match r.what {
                        CalleeAddress::EntryCell => callee.jit.entry_cell(Checks::None),
                        CalleeAddress::Function => {
                            &**callee as *const crate::exec::TieredFunction as usize
                        }
                    };
                    let at = r.offset as usize;
                    let field: [u8; 8] = code._mem[at..at + 8].try_into().expect("8 bytes");
                    assert_eq!(
                        i64::from_le_bytes(field),
                        (address as i64).wrapping_add(r.addend),
                        "{which}: callee {} {:?}",
                        r.callee,
                        r.what
                    );
                }
            }
        }
    }
}
