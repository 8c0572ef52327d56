//! A source-level debugger over a [`Context`]: breakpoints at source lines,
//! functions and bytecode offsets (with conditions, hit counts, ignore
//! counts, temporary ones), gdb's stepping commands (`stepi`, `step`,
//! `next`, `until`, `advance`, `finish`, `continue`), stops at traps inside
//! the faulting frame, changing where a stopped program goes (`jump`,
//! `return`) and calling its functions while it is stopped (`call`),
//! pausing a running program from another thread or a
//! signal handler (or interrupting the command in progress so that a front
//! end serves a request, then resuming it), frame selection, and typed views
//! of registers, lists and buffers. It is built on the interpreter's [`Observer`] hook and paused
//! calls. `irvm dbg` (gdb's commands) and `irvm dap` (the Debug Adapter
//! Protocol) are front ends over it; embedders can drive it directly.
//!
//! Lines come from the modules' debug databases: a *line table* lists, per
//! function, the bytecode offsets where a new source line starts. Source
//! stepping stops at the first instruction of a different line (or of the
//! same line entered again from a later point, like the next iteration of a
//! one-line loop). Without debug information, `step` and `next` fall back to
//! instruction stepping.
//!
//! Cost: while nothing needs watching (no enabled breakpoint, no step in
//! progress, not [`Debugger::set_interruptible`]) the observer is detached
//! and the program runs in the interpreter's plain loop, as fast as
//! without a debugger.
//!
//! The crate (`irvm-debugger`, `tools/debugger/` of the irvm workspace)
//! is built on irvm's public API: [`Context`]'s paused calls, pause flag
//! and kept trap frames, the [`Observer`] hook, the loader's debug
//! database, and, for the register types and return values it reads from
//! bytecode, irvm's decoder (`irvm::bytecode::decode`) and its hidden
//! instruction table (`irvm::bytecode::isa`).

#![warn(missing_docs)]

mod breakpoints;
mod c_char;
mod c_int;
mod call;
mod expr;
mod expression;
mod float_text;
mod frame_moves;
mod info;
mod logpoint;
mod memory;
mod printf;
mod watchpoints;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use self::breakpoints::BreakpointTable;
pub use self::c_int::{IntType, Integer};
pub use self::call::parse_call;
pub use self::expr::{
    describe_ref, expandable, ref_children, type_def_name, DebugValue, Format, RefFormatter,
    RegisterFile, RegisterRef, MAX_CHILDREN, PREVIEW_ELEMENTS,
};
pub use self::expression::{Expr, NamedValues};
pub use self::float_text::{f32_text, f64_text};
pub use self::info::DebugInfo;
pub use self::logpoint::LogMessage;
pub use self::memory::{
    read_ref, write_ref, Examine, ExamineFormat, RefBytes, RefContents, RefMemory,
    MAX_EXAMINE_UNITS,
};
pub use self::printf::{format_printf, split_printf};
use self::watchpoints::ActiveWatch;
pub use self::watchpoints::{WatchEvent, WatchHit, WatchKind, WatchRead, Watchpoint};

/// Where logpoints' messages go, as the program reaches them.
pub type LogSink = Box<dyn FnMut(String) + Send>;
use irvm::bytecode::decode::{Decoder, Operand};
use irvm::bytecode::isa::{Bank, Field, Opcode, I32_INDEX_MASK, REF_BANK_BIT, REF_INDEX_MASK};
use irvm::loader::SourcePosition;
use irvm::{
    CallState, Context, Control, ExecView, FrameInfo, Func, Module, Observer, Ref, Trap, Value,
};

/// Where execution stops: a bytecode module, an internal function
/// ordinal and a bytecode offset.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeAddress {
    /// Module name.
    pub module: String,
    /// The module's place in the context ([`irvm::FrameInfo::module_index`]):
    /// which module, when several were registered under one name.
    pub module_index: usize,
    /// Internal function ordinal.
    pub function: u32,
    /// Bytecode offset of the instruction.
    pub offset: u32,
}

/// When a breakpoint's hits make it stop (DAP's `hitCondition`): `N` or
/// `== N` (the Nth hit), `>= N`, `> N`, `< N`, `<= N`, `% N` (every Nth).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitCondition {
    /// Exactly the Nth hit.
    Equal(u32),
    /// From the Nth hit on.
    AtLeast(u32),
    /// After the Nth hit.
    Greater(u32),
    /// Before the Nth hit.
    Less(u32),
    /// Up to the Nth hit.
    AtMost(u32),
    /// Every Nth hit.
    Multiple(u32),
}

impl HitCondition {
    /// Parses `5`, `== 5`, `>= 5`, `> 5`, `< 5`, `<= 5` or `% 5`.
    pub fn parse(text: &str) -> Result<HitCondition, DebugCommandError> {
        let t = text.trim();
        type Make = fn(u32) -> HitCondition;
        let ops: [(&str, Make); 6] = [
            ("==", HitCondition::Equal),
            (">=", HitCondition::AtLeast),
            ("<=", HitCondition::AtMost),
            (">", HitCondition::Greater),
            ("<", HitCondition::Less),
            ("%", HitCondition::Multiple),
        ];
        let (make, number) = ops
            .iter()
            .find_map(|(op, make)| t.strip_prefix(op).map(|rest| (*make, rest)))
            .unwrap_or((HitCondition::Equal, t));
        let n: u32 = number.trim().parse().map_err(|_| {
            DebugCommandError(format!(
                "bad hit condition `{t}` (expected N, == N, >= N, > N, < N, <= N or % N)"
            ))
        })?;
        if matches!(make(n), HitCondition::Multiple(0)) {
            return err(format!("bad hit condition `{t}`: % 0"));
        }
        Ok(make(n))
    }

    /// Whether the `hits`th hit stops.
    pub fn satisfied(self, hits: u32) -> bool {
        match self {
            HitCondition::Equal(n) => hits == n,
            HitCondition::AtLeast(n) => hits >= n,
            HitCondition::Greater(n) => hits > n,
            HitCondition::Less(n) => hits < n,
            HitCondition::AtMost(n) => hits <= n,
            HitCondition::Multiple(n) => n != 0 && hits % n == 0,
        }
    }
}

/// A breakpoint and the addresses it resolved to.
#[derive(Clone, Debug)]
pub struct Breakpoint {
    /// Number shown to the user (from 1).
    pub id: u32,
    /// What the user asked for (`fib.mlir:9`, `fib`, `*0x33`).
    pub spec: String,
    /// Every address it stops at.
    pub addresses: Vec<CodeAddress>,
    /// For a source line: the line it is at (the first line with code at
    /// or after the one asked for).
    pub line: Option<i32>,
    /// Disabled breakpoints keep their place but never stop.
    pub enabled: bool,
    /// Deleted when it stops the program (`tbreak`).
    pub temporary: bool,
    /// Stops only where this holds (`break ... if COND`, `condition N`).
    pub condition: Option<Expr>,
    /// Stops only on the hits this admits.
    pub hit_condition: Option<HitCondition>,
    /// The next this many hits do not stop (`ignore N COUNT`).
    pub ignore_count: u32,
    /// How often the program reached it with its condition holding.
    pub hits: u32,
    /// A logpoint: where it would stop, this message goes to the
    /// [`LogSink`] and the program goes on.
    pub log_message: Option<LogMessage>,
}

/// What a new breakpoint is: where (a spec as [`Debugger::add_breakpoint`]
/// reads it) and when it stops.
#[derive(Clone, Debug, Default)]
pub struct BreakpointRequest {
    /// `FILE:LINE`, `LINE`, `FUNCTION`, `*OFFSET`.
    pub spec: String,
    /// An expression ([`Expr`]) that must hold.
    pub condition: Option<String>,
    /// A [`HitCondition`].
    pub hit_condition: Option<String>,
    /// Deleted at its first stop.
    pub temporary: bool,
}

/// A breakpoint that stopped the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BreakpointHit {
    /// Its number.
    pub id: u32,
    /// It was temporary, and is now deleted.
    pub temporary: bool,
    /// Its condition could not be evaluated (the program stops, as gdb's).
    pub condition_error: Option<String>,
}

/// Why the program stopped.
#[derive(Debug)]
pub enum Stop {
    /// Started and stopped before its first instruction.
    Entry,
    /// At a breakpoint, before the instruction.
    Breakpoint(BreakpointHit),
    /// A step command (`stepi`, `step`, `next`, `until`, `advance`)
    /// completed.
    Step,
    /// `finish`: the frame returned these values; stopped in its caller.
    Returned(Vec<Value>),
    /// Stopped by a [`PauseHandle`].
    Paused,
    /// Stopped by [`PauseHandle::interrupt`]: the command in progress is
    /// not done; [`Debugger::resume`] goes on with it.
    Interrupted,
    /// Watchpoints stopped the program, before one instruction: each whose
    /// register changed ([`WatchEvent::Changed`]: before the next
    /// instruction of its frame) and each whose frame returned
    /// ([`WatchEvent::LeftScope`]: the watchpoint is deleted; stopped in
    /// the caller), in the order they were set. Several can at once, as in
    /// gdb: two watchpoints on one register, or a callee's watchpoint
    /// ending as its result changes a watched register of the caller.
    Watchpoints {
        /// What each watchpoint saw.
        events: Vec<WatchEvent>,
        /// The breakpoint at the same instruction, which stopped the
        /// program too (counted as hit; gdb reports both).
        breakpoint: Option<BreakpointHit>,
    },
    /// The program trapped; stopped in the faulting frame, which can be
    /// inspected. Going on ends the program with [`Stop::Failed`].
    Exception(Trap),
    /// The entry function returned these values.
    Finished(Vec<Value>),
    /// The program ended with this failure.
    Failed(Trap),
}

/// What the debugger's errors say (bad breakpoint specs, commands that need
/// a running program, ...).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DebugCommandError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, DebugCommandError> {
    Err(DebugCommandError(message.into()))
}

/// What [`Debugger::address_reference`] adds to offsets.
pub const REFERENCE_OFFSET_BIAS: u64 = 1 << 31;

const NOT_RUNNING: &str = "the program is not being run (use `run`)";

/// Stops a running program at its next instruction, from any thread or a
/// signal handler (it only stores to an atomic flag). The program must be
/// watched: see [`Debugger::set_interruptible`].
#[derive(Clone, Debug, Default)]
pub struct PauseHandle {
    flag: Arc<AtomicBool>,
    /// The stop asked for is an interrupt, not a pause.
    interrupt: Arc<AtomicBool>,
    /// [`PauseHandle::command_read`] was called since the program last
    /// went on: a pause asked for since is the command's, not stale.
    command_read: Arc<AtomicBool>,
    /// The call made from the debugger ([`Debugger::call_function`]) is
    /// to be abandoned: raised by a pause and by
    /// [`PauseHandle::abandon_call`], never by an interrupt (a front end
    /// serving a request does not end the call).
    call: Arc<AtomicBool>,
}

impl PauseHandle {
    /// Requests the pause. A call made from the debugger
    /// ([`Debugger::call_function`]) is abandoned by it.
    pub fn pause(&self) {
        self.call.store(true, Ordering::Relaxed);
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Abandons the call made from the debugger while the program is
    /// stopped ([`Debugger::call_function`]), without asking the program
    /// to pause when it goes on: a front end that serves requests while
    /// such a call runs (DAP's `pause` during a debug-console call). Asked
    /// while no call runs, it abandons the next call, unless the program
    /// runs or a command is read ([`PauseHandle::command_read`]) first.
    pub fn abandon_call(&self) {
        self.call.store(true, Ordering::Relaxed);
    }

    /// Tells the debugger that a command was just read (a front end calls
    /// it when a command line comes, before doing anything else): a pause
    /// asked for until now (Ctrl-C at the prompt) is forgotten, and one
    /// asked for from now on stops the run the command starts, before its
    /// first instruction if it comes that early. Without this call a
    /// pause asked for while the program is stopped is forgotten when it
    /// goes on. An interrupt is kept either way.
    pub fn command_read(&self) {
        self.command_read.store(true, Ordering::SeqCst);
        self.call.store(false, Ordering::SeqCst);
        if !self.interrupt.load(Ordering::Relaxed) {
            self.flag.store(false, Ordering::SeqCst);
        }
    }

    /// Requests a stop that is not the user's: the command in progress
    /// stops with [`Stop::Interrupted`] so that its caller can do something
    /// (DAP: serve a request that came meanwhile), then goes on with
    /// [`Debugger::resume`]. Unlike a pause, an interrupt asked for while
    /// the program is stopped is kept: the next command stops at once.
    pub fn interrupt(&self) {
        self.interrupt.store(true, Ordering::Relaxed);
        self.flag.store(true, Ordering::Relaxed);
    }
}

/// How the observer decides to pause.
#[derive(Clone, Debug, Default)]
enum Mode {
    /// Only at breakpoints.
    #[default]
    Run,
    /// Before the next instruction.
    Instruction,
    /// Before the next instruction of the frame at `depth` or a caller
    /// (`nexti`: over calls).
    InstructionOver { depth: usize },
    /// At the start of another source line, at any depth (`step`), or only
    /// at depth `<= max_depth` (`next`).
    Line {
        max_depth: usize,
        from: Option<(String, i32)>,
        from_offset: u32,
        from_depth: usize,
    },
    /// At the start of a line after this one in the frame, or when the
    /// frame returns (`until`).
    Until {
        from: Option<(String, i32)>,
        from_offset: u32,
        depth: usize,
    },
    /// Once the frame at `depth` has returned; `returns` maps the offsets
    /// of its function's `vm.return`s to their registers (for the values).
    Finish {
        depth: usize,
        returns: Arc<HashMap<u32, Vec<u16>>>,
        kinds: Arc<Vec<char>>,
    },
    /// At one of `targets`, or when the frame at `depth` returns.
    Advance {
        targets: Arc<HashSet<CodeAddress>>,
        depth: usize,
    },
}

/// Why the observer paused.
enum Reason {
    Breakpoint(BreakpointHit),
    Watch(Vec<WatchEvent>, Option<BreakpointHit>),
    Pause,
    Step,
    Returned(Vec<Value>),
}

/// State shared between the [`Debugger`] and its observer (which lives
/// inside the context while attached).
#[derive(Default)]
struct Shared {
    breakpoints: Vec<Breakpoint>,
    /// The watchpoints (numbered with the breakpoints).
    watchpoints: Vec<Watchpoint>,
    /// (module, function) -> line table, filled lazily.
    lines: HashMap<(usize, u32), Arc<LineTable>>,
    /// (module, function) -> how the function uses its i32 registers.
    banks: HashMap<(usize, u32), Arc<BTreeMap<u16, Bank>>>,
    /// (module, function) -> the registers each instruction reads (for
    /// read and access watchpoints), filled lazily.
    reads: HashMap<(usize, u32), Reads>,
    reason: Option<Reason>,
    /// Reads of watched registers no instruction came after to report
    /// them: left by an observer as it is detached ([`StopObserver`]'s
    /// `Drop`); the last `vm.return` of an outermost frame's.
    unreported_reads: Vec<WatchEvent>,
    /// The number of the last breakpoint made (0: none yet).
    next_id: u32,
    /// Where logpoints' messages go.
    log_sink: Option<LogSink>,
}

/// Per function: offset -> source position, and which offsets start a line.
///
/// A `vm.return` placed in the function's file on a line before the one of
/// its first instruction is at the compiler's own location: IREE gives the
/// final `vm.return` it makes (the `func.func`'s `return` became a branch
/// to it) the location of the function itself (`func.func @fib` at 1:1).
/// Such instructions have no line (`None`), so stepping never stops there
/// and frames there show no line. (Other instructions before the first
/// line are code inlined from functions above it, and keep their lines.)
/// Instructions at a location with no file position (`loc(unknown)`) have
/// no line either.
#[derive(Default)]
struct LineTable {
    positions: BTreeMap<u32, Option<SourcePosition>>,
    starts: BTreeMap<u32, SourcePosition>,
}

impl LineTable {
    fn build(module: &Module, function: u32) -> LineTable {
        let mut table = LineTable::default();
        let Some(db) = module.debug_database() else {
            return table;
        };
        let name = function_name(module, function);
        let Some(map) = db.source_map_for(function as usize, name.as_deref()) else {
            return table;
        };
        let mut entries: Vec<(i32, i32)> = map.entries().collect();
        entries.sort();
        // An entry whose location names no file position (an unknown
        // location) is no line, not the line before it.
        let positions: Vec<(u32, Option<SourcePosition>)> = entries
            .into_iter()
            .filter_map(|(offset, loc)| {
                Some((u32::try_from(offset).ok()?, db.source_position(loc as i64)))
            })
            .collect();
        let entry = positions
            .iter()
            .find_map(|(_, p)| p.as_ref().map(|p| (p.file.clone(), p.line)));
        let returns = return_registers(module, function);
        let mut previous: Option<(String, i32)> = None;
        for (offset, pos) in positions {
            let pos = pos.filter(|pos| {
                let synthetic = returns.contains_key(&offset)
                    && entry
                        .as_ref()
                        .is_some_and(|(file, line)| *file == pos.file && pos.line < *line);
                !synthetic
            });
            let Some(pos) = pos else {
                previous = None;
                table.positions.insert(offset, None);
                continue;
            };
            let key = Some((pos.file.clone(), pos.line));
            if key != previous {
                table.starts.insert(offset, pos.clone());
            }
            previous = key;
            table.positions.insert(offset, Some(pos));
        }
        table
    }

    /// The position of the instruction at `offset` (the entry at or before
    /// it: source maps list the first instruction of each location run).
    fn position(&self, offset: u32) -> Option<&SourcePosition> {
        self.positions
            .range(..=offset)
            .next_back()
            .and_then(|(_, p)| p.as_ref())
    }
}

/// The name a function's source map is keyed by: its export name or the
/// debug database's own name for it.
fn function_name(module: &Module, function: u32) -> Option<String> {
    let from_db = module
        .debug_database()
        .and_then(|db| db.positional_source_map(function as usize))
        .map(|m| m.local_name().to_string())
        .filter(|n| !n.is_empty());
    from_db.or_else(|| {
        module
            .exports()
            .iter()
            .find(|e| e.internal_ordinal == function as usize)
            .map(|e| e.local_name.to_string())
    })
}

/// The debugger's shared state, locked (a poisoned lock is used as is: the
/// state is plain data that every update leaves consistent).
fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a function uses its i32 registers (shared: cached per function).
type Banks = Arc<BTreeMap<u16, Bank>>;

/// The registers each instruction of a function reads, by offset.
type Reads = Arc<HashMap<u32, info::InstructionReads>>;

/// The register use of a function, cached in `shared`.
fn cached_banks(
    shared: &mut Shared,
    module: &Module,
    module_index: usize,
    function: u32,
) -> Arc<BTreeMap<u16, Bank>> {
    shared
        .banks
        .entry((module_index, function))
        .or_insert_with(|| Arc::new(banks_of(module, function)))
        .clone()
}

struct StopObserver {
    shared: Arc<Mutex<Shared>>,
    pause: Arc<AtomicBool>,
    /// [`watch_key`]s of every enabled breakpoint address, sorted: a quick
    /// filter before the module is compared.
    watch: Vec<u64>,
    mode: Mode,
    /// The first instruction is the one the program paused at: it runs
    /// without stopping again.
    skip_first: bool,
    /// `finish`: what the frame's `vm.return` returned.
    returned: Option<Vec<Value>>,
    /// The line table of the function last asked about.
    last_table: Option<(usize, u32, Arc<LineTable>)>,
    /// The watchpoints to check before each instruction.
    watches: Vec<ActiveWatch>,
    /// The register use of the function last asked about.
    last_banks: Option<(usize, u32, Banks)>,
    /// The registers read by the instructions of the function last asked
    /// about.
    last_reads: Option<(usize, u32, Reads)>,
}

impl Drop for StopObserver {
    /// The reads its watchpoints noted and could not report (the frame's
    /// last instruction returned from the outermost frame: no instruction
    /// came after) are left for the run to report as it ends.
    fn drop(&mut self) {
        let reads: Vec<WatchEvent> = self
            .watches
            .iter()
            .filter_map(ActiveWatch::unreported_read)
            .collect();
        if !reads.is_empty() {
            lock(&self.shared).unreported_reads.extend(reads);
        }
    }
}

impl StopObserver {
    fn banks(&mut self, view: &ExecView<'_>) -> Banks {
        if let Some((m, f, b)) = &self.last_banks {
            if *f == view.function && *m == view.module_index {
                return b.clone();
            }
        }
        let banks = cached_banks(
            &mut lock(&self.shared),
            view.module,
            view.module_index,
            view.function,
        );
        self.last_banks = Some((view.module_index, view.function, banks.clone()));
        banks
    }

    /// The registers each instruction of the function of `view` reads.
    fn reads(&mut self, view: &ExecView<'_>) -> Reads {
        if let Some((m, f, r)) = &self.last_reads {
            if *f == view.function && *m == view.module_index {
                return r.clone();
            }
        }
        let reads = lock(&self.shared)
            .reads
            .entry((view.module_index, view.function))
            .or_insert_with(|| {
                Arc::new(
                    info::instruction_reads(view.module, view.function)
                        .into_iter()
                        .collect(),
                )
            })
            .clone();
        self.last_reads = Some((view.module_index, view.function, reads.clone()));
        reads
    }

    /// Whether register `r` is read by the instruction `view` stands
    /// before (asked only when a read or access watchpoint is set): a
    /// branch reads the block-argument sources of the way it goes only.
    fn read_here(&mut self, view: &ExecView<'_>) -> impl Fn(RegisterRef) -> bool {
        let reads = if self.watches.iter().any(|w| w.kind != WatchKind::Write) {
            self.reads(view)
                .get(&view.offset)
                .map(|reads| reads.read_with(view.i32_registers()))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        move |r| reads.iter().any(|&read| watchpoints::overlap(read, r))
    }

    /// Whether register `r` is written by the instruction `view` stands
    /// before (asked only when an access watchpoint is set): its results,
    /// and a branch's block arguments on the way it goes.
    fn written_here(&mut self, view: &ExecView<'_>) -> impl Fn(RegisterRef) -> bool {
        let writes = if self.watches.iter().any(|w| w.kind == WatchKind::Access) {
            self.reads(view)
                .get(&view.offset)
                .map(|uses| uses.written_with(view.i32_registers()))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        move |r| {
            writes
                .iter()
                .any(|&written| watchpoints::overlap(written, r))
        }
    }

    /// Before the instruction the program paused at, which runs without
    /// being checked: the reads it makes are still noted.
    fn note_reads(&mut self, view: &ExecView<'_>) {
        let banks = self.banks(view);
        let read_here = self.read_here(view);
        let written_here = self.written_here(view);
        let regs = RegisterFile {
            i32s: view.i32_registers(),
            refs: view.ref_registers(),
            banks: &banks,
        };
        for w in &mut self.watches {
            w.note_read(view.depth, &regs, &read_here);
            w.note_write(view.depth, &written_here);
        }
    }

    /// Every watchpoint whose register changed or whose frame returned
    /// (all of them: one left out here would have followed its register's
    /// value and never report the change); every watchpoint follows its
    /// register's value.
    fn watch_stop(&mut self, view: &ExecView<'_>) -> Option<Reason> {
        let banks = self.banks(view);
        let read_here = self.read_here(view);
        let written_here = self.written_here(view);
        let regs = RegisterFile {
            i32s: view.i32_registers(),
            refs: view.ref_registers(),
            banks: &banks,
        };
        let mut events = Vec::new();
        let mut ended_quietly = Vec::new();
        for w in &mut self.watches {
            let Some(event) = w.check(view.depth, &regs, &read_here, &written_here) else {
                continue;
            };
            if !w.enabled {
                // A disabled watchpoint's frame returned: it is deleted
                // without stopping the program.
                ended_quietly.push(w.id);
                continue;
            }
            let seen = match &event {
                WatchEvent::Changed(hit) => Some((hit.id, hit.new.clone())),
                WatchEvent::Read(read) => Some((read.id, w.value.clone())),
                WatchEvent::LeftScope(_) => None,
            };
            if let Some((id, value)) = seen {
                let mut shared = lock(&self.shared);
                if let Some(kept) = shared.watchpoints.iter_mut().find(|k| k.id == id) {
                    kept.hits = kept.hits.saturating_add(1);
                    kept.value = value;
                }
            }
            events.push(event);
        }
        if !ended_quietly.is_empty() {
            lock(&self.shared)
                .watchpoints
                .retain(|w| !ended_quietly.contains(&w.id));
        }
        // A watchpoint whose frame returned is checked no more.
        let ended: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                WatchEvent::LeftScope(id) => Some(*id),
                WatchEvent::Changed(_) | WatchEvent::Read(_) => None,
            })
            .chain(ended_quietly)
            .collect();
        self.watches.retain(|w| !ended.contains(&w.id));
        (!events.is_empty()).then_some(Reason::Watch(events, None))
    }

    fn line_table(&mut self, view: &ExecView<'_>) -> Arc<LineTable> {
        if let Some((m, f, t)) = &self.last_table {
            if *f == view.function && *m == view.module_index {
                return t.clone();
            }
        }
        let table = lock(&self.shared)
            .lines
            .entry((view.module_index, view.function))
            .or_insert_with(|| Arc::new(LineTable::build(view.module, view.function)))
            .clone();
        self.last_table = Some((view.module_index, view.function, table.clone()));
        table
    }

    /// The breakpoint that stops here, counting hits of every breakpoint
    /// whose condition holds.
    fn breakpoint_hit(&mut self, view: &ExecView<'_>) -> Option<BreakpointHit> {
        let mut shared = lock(&self.shared);
        let banks = cached_banks(&mut shared, view.module, view.module_index, view.function);
        let regs = RegisterFile {
            i32s: view.i32_registers(),
            refs: view.ref_registers(),
            banks: &banks,
        };
        let here = (view.module_index, view.function, view.offset);
        let mut chosen = None;
        let mut logged = Vec::new();
        for b in shared.breakpoints.iter_mut() {
            if !b.enabled
                || !b
                    .addresses
                    .iter()
                    .any(|a| (a.module_index, a.function, a.offset) == here)
            {
                continue;
            }
            let (holds, error) = match &b.condition {
                None => (true, None),
                Some(c) => match c.holds(&regs) {
                    Ok(h) => (h, None),
                    Err(e) => (true, Some(e.0)),
                },
            };
            if !holds {
                continue;
            }
            b.hits = b.hits.saturating_add(1);
            if b.ignore_count > 0 {
                b.ignore_count -= 1;
                continue;
            }
            if b.hit_condition.is_some_and(|h| !h.satisfied(b.hits)) {
                continue;
            }
            if let Some(message) = &b.log_message {
                logged.push(message.render(&regs));
                continue;
            }
            if chosen.is_none() {
                chosen = Some(BreakpointHit {
                    id: b.id,
                    temporary: b.temporary,
                    condition_error: error,
                });
            }
        }
        if let Some(sink) = shared.log_sink.as_mut() {
            for message in logged {
                sink(message);
            }
        }
        chosen
    }

    fn mode_stops(&mut self, view: &ExecView<'_>) -> Option<Reason> {
        match self.mode.clone() {
            Mode::Run => None,
            Mode::Instruction => Some(Reason::Step),
            Mode::InstructionOver { depth } => (view.depth <= depth).then_some(Reason::Step),
            Mode::Finish {
                depth,
                returns,
                kinds,
            } => {
                if view.depth < depth {
                    return Some(Reason::Returned(self.returned.take().unwrap_or_default()));
                }
                if view.depth == depth {
                    if let Some(regs) = returns.get(&view.offset) {
                        self.returned = Some(return_values(view, regs, &kinds));
                    }
                }
                None
            }
            Mode::Advance { targets, depth } => {
                let here = CodeAddress {
                    module: view.module_name.to_string(),
                    module_index: view.module_index,
                    function: view.function,
                    offset: view.offset,
                };
                (view.depth < depth || targets.contains(&here)).then_some(Reason::Step)
            }
            Mode::Until {
                from,
                from_offset,
                depth,
            } => {
                if view.depth < depth {
                    return Some(Reason::Step);
                }
                if view.depth > depth {
                    return None;
                }
                let table = self.line_table(view);
                if table.positions.is_empty() {
                    return Some(Reason::Step);
                }
                let start = table.starts.get(&view.offset)?;
                let other_line = from
                    .as_ref()
                    .is_none_or(|(file, line)| (&start.file, start.line) != (file, *line));
                (other_line && view.offset > from_offset).then_some(Reason::Step)
            }
            Mode::Line {
                max_depth,
                from,
                from_offset,
                from_depth,
            } => {
                if view.depth > max_depth {
                    return None;
                }
                if view.depth < from_depth {
                    // Returned to a caller: stop at once.
                    return Some(Reason::Step);
                }
                let table = self.line_table(view);
                let stop = match (table.starts.get(&view.offset), &from) {
                    // No line information at all: behave like stepi.
                    _ if table.positions.is_empty() => true,
                    (Some(start), Some((file, line))) => {
                        (&start.file, start.line) != (file, *line)
                            || view.depth != from_depth
                            || view.offset <= from_offset
                    }
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                stop.then_some(Reason::Step)
            }
        }
    }
}

impl Observer for StopObserver {
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control {
        if std::mem::take(&mut self.skip_first) {
            if !self.watches.is_empty() {
                self.note_reads(view);
            }
            return Control::Continue;
        }
        let watched = if self.watches.is_empty() {
            None
        } else {
            self.watch_stop(view)
        };
        let at_breakpoint = |w: &[u64]| {
            !w.is_empty()
                && w.binary_search(&watch_key(view.function, view.offset))
                    .is_ok()
        };
        let reason = if let Some(Reason::Watch(events, _)) = watched {
            // (Before a pause: the change is reported once, now.) A
            // breakpoint here stops the program too, and counts the hit.
            let hit = if at_breakpoint(&self.watch) {
                self.breakpoint_hit(view)
            } else {
                None
            };
            Some(Reason::Watch(events, hit))
        } else if self.pause.load(Ordering::Relaxed) {
            self.pause.store(false, Ordering::Relaxed);
            Some(Reason::Pause)
        } else if !self.watch.is_empty()
            && self
                .watch
                .binary_search(&watch_key(view.function, view.offset))
                .is_ok()
        {
            match self.breakpoint_hit(view) {
                Some(hit) => Some(Reason::Breakpoint(hit)),
                None => self.mode_stops(view),
            }
        } else {
            self.mode_stops(view)
        };
        match reason {
            Some(r) => {
                lock(&self.shared).reason = Some(r);
                Control::Pause
            }
            None => Control::Continue,
        }
    }
}

/// A function and offset as one number, for the observer's quick filter.
fn watch_key(function: u32, offset: u32) -> u64 {
    (function as u64) << 32 | offset as u64
}

/// The values a `vm.return` is about to return, by the function's result
/// kinds (calling-convention letters).
fn return_values(view: &ExecView<'_>, regs: &[u16], kinds: &[char]) -> Vec<Value> {
    let i32s = view.i32_registers();
    let slot = |k: u16| {
        i32s.get((k & I32_INDEX_MASK) as usize)
            .copied()
            .unwrap_or(0)
    };
    let wide = |k: u16| slot(k) as u64 | (slot(k + 1) as u64) << 32;
    regs.iter()
        .enumerate()
        .map(|(i, &r)| {
            if r & REF_BANK_BIT != 0 {
                let v = view
                    .ref_registers()
                    .get((r & REF_INDEX_MASK) as usize)
                    .cloned()
                    .unwrap_or_default();
                return Value::Ref(v);
            }
            match kinds.get(i) {
                Some('I') => Value::I64(wide(r) as i64),
                Some('F') => Value::F64(f64::from_bits(wide(r))),
                Some('f') => Value::F32(f32::from_bits(slot(r))),
                _ => Value::I32(slot(r) as i32),
            }
        })
        .collect()
}

/// What a register store writes: one i32 slot or a pair.
enum StoredBits {
    One(u32),
    Two(u64),
}

/// An integer literal's exact value (decimal or `0x` hex, with an optional
/// `-`), where the expression is one: integer registers take it exactly,
/// where the expression's value may not hold it (past i64 it is an f64).
fn integer_literal(text: &str) -> Option<i128> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if hex.starts_with(|c: char| c.is_ascii_hexdigit()) => {
            u128::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        // C's octal, as the expression reads it (`010` is 8).
        None if digits.len() > 1 && digits.starts_with('0') => {
            u128::from_str_radix(&digits[1..], 8).ok()?
        }
        None => digits.parse::<u128>().ok()?,
    };
    let v = i128::try_from(magnitude).ok()?;
    Some(if negative { -v } else { v })
}

/// The bits `given` stores in `register`, which now holds `current` (its
/// type, as the function uses it); `literal`: the value's exact integer,
/// when it was written as one ([`integer_literal`]).
fn store_bits(
    register: &dyn std::fmt::Display,
    current: &DebugValue,
    given: &DebugValue,
    literal: Option<i128>,
) -> Result<StoredBits, DebugCommandError> {
    let number = match given {
        DebugValue::I32(v) => Ok(*v as f64),
        DebugValue::I64(v) => Err(i128::from(*v)),
        DebugValue::Integer(i) => Err(i.value()),
        DebugValue::F32(v) => Ok(*v as f64),
        DebugValue::F64(v) => Ok(*v),
        other => {
            return err(format!(
                "{register} holds a number; {} is not one",
                other.type_name()
            ))
        }
    };
    // Integers exactly (an i64 beyond 2^53 does not survive an f64, nor a
    // literal past i64's range, which the expression reads as one).
    let integer = |lo: i128, hi: i128, what: &str| -> Result<i128, DebugCommandError> {
        let v: i128 = match (literal, given, number) {
            (Some(exact), _, _) => exact,
            (None, DebugValue::I32(v), _) => *v as i128,
            (None, _, Err(v)) => v,
            (None, _, Ok(f)) if f.is_finite() => f.trunc() as i128,
            _ => {
                return err(format!(
                    "{register} is an {what}: it cannot hold {}",
                    given_text(given)
                ))
            }
        };
        if v < lo || v > hi {
            let shown = literal.map_or_else(|| given_text(given), |l| l.to_string());
            return err(format!("{shown} is out of range for {register} ({what})"));
        }
        Ok(v)
    };
    let float = || match number {
        Ok(f) => f,
        Err(i) => i as f64,
    };
    Ok(match current {
        DebugValue::Ref(_) => {
            return err(format!(
                "{register} is a ref register: refs cannot be set (the verifier proved their types)"
            ))
        }
        DebugValue::F32(_) => StoredBits::One((float() as f32).to_bits()),
        DebugValue::F64(_) => StoredBits::Two(float().to_bits()),
        DebugValue::I64(_) => {
            StoredBits::Two(integer(i64::MIN as i128, u64::MAX as i128, "i64")? as u64)
        }
        // (An i32 register takes any 32-bit pattern, signed or not.)
        _ => StoredBits::One(integer(i32::MIN as i128, u32::MAX as i128, "i32")? as u32),
    })
}

fn given_text(v: &DebugValue) -> String {
    v.format(Format::Natural, None)
}

/// Where the program is.
enum State {
    /// Not started, or ended.
    Idle,
    /// Paused inside the call.
    Paused,
    /// Stopped at a trap, with the frames as they were.
    Trapped { trap: Trap, frames: Vec<FrameInfo> },
}

/// A program under the debugger: a context, the function to run and its
/// arguments.
pub struct Debugger {
    ctx: Context,
    entry: Func,
    args: Vec<Value>,
    shared: Arc<Mutex<Shared>>,
    state: State,
    /// The modules' debug information.
    info: DebugInfo,
    /// The breakpoints (sharing `shared`).
    table: BreakpointTable,
    selected: usize,
    pause: PauseHandle,
    interruptible: bool,
    displays: Vec<(u32, Expr, Format)>,
    next_display: u32,
    formatter: Option<RefFormatter>,
    /// Reads host objects' bytes (`x`, DAP's `readMemory`).
    ref_bytes: Option<RefBytes>,
    /// A host object's contents as a buffer, for writing them.
    ref_contents: Option<RefContents>,
    /// The mode of the command an interrupt stopped.
    interrupted: Option<Mode>,
    /// Module initializers (`__init`s) to run, in order, before `entry`
    /// ([`Debugger::set_initializers`]).
    inits: Vec<Func>,
    /// How many of `inits` have run to their end.
    inits_done: usize,
    /// The call in progress is `inits[inits_done]`.
    in_init: bool,
    /// The initializers were given ([`Debugger::set_initializers`]): the
    /// debugger runs them, so a `run` can start the program afresh.
    owns_inits: bool,
    /// The program has run since it last started afresh.
    ran: bool,
    /// `start` asked to stop before the entry function's first
    /// instruction, once the initializers have run.
    entry_stop: bool,
    /// The entry function began for `entry_stop`: its first step stop is
    /// the entry ([`Stop::Entry`]).
    entry_stop_armed: bool,
    /// The innermost frame was moved for `jump`: the next run does not
    /// skip the instruction it now stands at (a breakpoint there stops).
    moved: bool,
    /// Stopped inside a host call that yields (a pause or interrupt came
    /// between its resumptions): the innermost frame stands at the call
    /// instruction, which has begun; going on resumes the host call where
    /// it was.
    yielded: bool,
    /// Called as the entry function begins ([`Debugger::set_entry_hook`]).
    on_entry: Option<EntryHook>,
    /// What watchpoints saw as the program ended
    /// ([`Debugger::take_final_watch_events`]).
    final_watch_events: Vec<WatchEvent>,
}

/// What [`Debugger::set_entry_hook`] calls.
pub type EntryHook = Box<dyn FnMut() + Send>;

/// A register and its value, as [`Debugger::registers`] lists them.
pub type RegisterValue = (RegisterRef, DebugValue);

impl Debugger {
    /// Prepares to debug `entry(args)` in `ctx`.
    pub fn new(ctx: Context, entry: Func, args: Vec<Value>) -> Debugger {
        let info = DebugInfo::new(
            ctx.bytecode_modules()
                .into_iter()
                .map(|(i, n, m)| (i, n.to_string(), m.clone()))
                .collect(),
        );
        let shared = Arc::new(Mutex::new(Shared::default()));
        let table = BreakpointTable {
            info: info.clone(),
            shared: shared.clone(),
        };
        Debugger {
            ctx,
            entry,
            args,
            shared,
            state: State::Idle,
            info,
            table,
            selected: 0,
            pause: PauseHandle::default(),
            interruptible: false,
            displays: Vec::new(),
            next_display: 1,
            formatter: None,
            ref_bytes: None,
            ref_contents: None,
            interrupted: None,
            inits: Vec::new(),
            inits_done: 0,
            in_init: false,
            owns_inits: false,
            ran: false,
            entry_stop: false,
            entry_stop_armed: false,
            moved: false,
            yielded: false,
            final_watch_events: Vec::new(),
            on_entry: None,
        }
    }

    /// Calls `hook` each time the entry function begins, once the
    /// initializers have run (a front end prints `EXEC @function` there,
    /// where `irvm run` prints it).
    pub fn set_entry_hook(&mut self, hook: Option<EntryHook>) {
        self.on_entry = hook;
    }

    /// Module initializers to run before the entry function, in order
    /// (from [`irvm::Context::register_module_deferring_init`]): the first
    /// `run` (or `start`) calls each to its end, then the entry function,
    /// all as one program, so that breakpoints, steps and pauses stop in
    /// them as in any function (a long `__init` can be paused and looked
    /// at). Each later `run` (or `start`, after `kill` too) starts the
    /// program afresh, as gdb starts a new process: every bytecode
    /// module's globals are zeroed ([`irvm::Context::reset_globals`]) and
    /// the initializers run again, so the program computes what it computes
    /// in one `irvm run`. Host modules' states are kept. `start`'s entry
    /// stop is before the entry function's first instruction.
    pub fn set_initializers(&mut self, inits: Vec<Func>) {
        self.inits = inits;
        self.inits_done = 0;
        self.owns_inits = true;
    }

    /// Whether the program is in a module initializer (`__init`).
    pub fn in_initializer(&self) -> bool {
        self.in_init
    }

    /// The module whose initializer the program is in (or failed in), if
    /// it is in one.
    pub fn initializer_module(&self) -> Option<&str> {
        if !self.in_init {
            return None;
        }
        let init = self.inits.get(self.inits_done)?;
        // `module.__init`: the function's own name has no dot.
        Some(init.name().rsplit_once('.').map_or(init.name(), |(m, _)| m))
    }

    /// Begins the next call of the program: the next initializer still to
    /// run, else the entry function.
    fn begin_next_call(&mut self) -> Result<CallState, irvm::Trap> {
        match self.inits.get(self.inits_done) {
            Some(init) => {
                self.in_init = true;
                let init = init.clone();
                self.ctx.begin_call(&init, &[])
            }
            None => {
                self.in_init = false;
                if let Some(hook) = self.on_entry.as_mut() {
                    hook();
                }
                self.ctx.begin_call(&self.entry, &self.args)
            }
        }
    }

    /// Attaches what watches the program for `mode` (an observer, or the
    /// pause flag, or nothing); whether an observer was needed.
    fn attach(&mut self, mode: Mode, skip_first: bool, watches: Vec<ActiveWatch>) -> bool {
        let mut watch: Vec<u64> = lock(&self.shared)
            .breakpoints
            .iter()
            .filter(|b| b.enabled)
            .flat_map(|b| b.addresses.iter().map(|a| watch_key(a.function, a.offset)))
            .collect();
        watch.sort_unstable();
        watch.dedup();
        // Without breakpoints, watchpoints or a step the program runs in
        // the plain loop; a pause request then reaches it through the
        // context's pause flag.
        let needed = !watch.is_empty() || !watches.is_empty() || !matches!(mode, Mode::Run);
        let flag = (self.interruptible && !needed).then(|| self.pause.flag.clone());
        self.ctx.set_pause_flag(flag);
        if needed {
            self.ctx.set_observer(Some(Box::new(StopObserver {
                shared: self.shared.clone(),
                pause: self.pause.flag.clone(),
                watch,
                mode,
                skip_first,
                returned: None,
                last_table: None,
                watches,
                last_banks: None,
                last_reads: None,
            })));
        } else {
            self.ctx.set_observer(None);
        }
        needed
    }

    /// The reads of read and access watchpoints that the program's last
    /// instruction made, which no stop reported because it ended the
    /// program (the entry frame's `vm.return` reading a watched register,
    /// where another frame's read is reported at its caller's next
    /// instruction): after [`Stop::Finished`], taken once.
    pub fn take_final_watch_events(&mut self) -> Vec<WatchEvent> {
        std::mem::take(&mut self.final_watch_events)
    }

    /// Whether the program has been started and has not ended (it may be
    /// stopped at a trap).
    pub fn is_running(&self) -> bool {
        !matches!(self.state, State::Idle)
    }

    /// Whether the program is stopped inside a host call that yields (a
    /// pause between its resumptions): the innermost frame stands at the
    /// call instruction, which has begun; going on resumes the host call
    /// where it was. Its frame cannot be moved (`jump`, `return`) there.
    pub fn in_yielding_call(&self) -> bool {
        self.yielded
    }

    /// The trap the program is stopped at, if it is.
    pub fn trap(&self) -> Option<&Trap> {
        match &self.state {
            State::Trapped { trap, .. } => Some(trap),
            _ => None,
        }
    }

    /// The context (for inspection).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The function being debugged.
    pub fn entry(&self) -> &Func {
        &self.entry
    }

    /// A handle that pauses the running program (Ctrl-C, DAP's `pause`).
    pub fn pause_handle(&self) -> PauseHandle {
        self.pause.clone()
    }

    /// Whether [`PauseHandle::pause`] can stop the program while nothing
    /// else watches it (no enabled breakpoint, no step): the context's
    /// pause flag is then polled at backward branches and calls (a copy of
    /// the plain loop; about as fast). Off, a pause takes effect only
    /// while breakpoints are enabled or a step is in progress.
    pub fn set_interruptible(&mut self, on: bool) {
        self.interruptible = on;
    }

    /// Renders host objects (`!hal.buffer_view`, ...) in values.
    pub fn set_ref_formatter(&mut self, f: Option<RefFormatter>) {
        self.formatter = f;
    }

    /// Sets (or removes) what reads host objects' bytes ([`RefBytes`]).
    pub fn set_ref_bytes(&mut self, f: Option<RefBytes>) {
        self.ref_bytes = f;
    }

    /// How host objects' contents are written ([`Debugger::write_memory`]).
    pub fn set_ref_contents(&mut self, f: Option<RefContents>) {
        self.ref_contents = f;
    }

    /// Writes `data` at byte `offset` of a ref's contents ([`write_ref`]:
    /// read-only memory is refused): how many bytes were written.
    pub fn write_memory(
        &self,
        r: &Ref,
        offset: u64,
        data: &[u8],
        partial: bool,
    ) -> Result<usize, DebugCommandError> {
        write_ref(r, offset, data, partial, self.ref_contents.as_ref())
    }

    /// Reads `count` bytes from byte `offset` of `r`'s contents (a
    /// buffer's, or a host object's through [`Debugger::set_ref_bytes`]).
    pub fn read_memory(
        &self,
        r: &Ref,
        offset: u64,
        count: usize,
    ) -> Result<RefMemory, DebugCommandError> {
        read_ref(r, offset, count, self.ref_bytes.as_ref())
    }

    /// gdb's `x/NFU %rN[+OFFSET]` in the selected frame: the lines it
    /// prints ([`Examine`]).
    pub fn examine(&self, suffix: &str, argument: &str) -> Result<Vec<String>, DebugCommandError> {
        let x = Examine::parse(suffix, argument)?;
        let register = RegisterRef::parse(&x.register)?;
        if !matches!(register, RegisterRef::Ref(_)) {
            return err(format!(
                "x examines the contents of a ref register (%rN), not {register}"
            ));
        }
        let DebugValue::Ref(r) = self.evaluate(&x.register, self.selected)? else {
            return err(format!("{register} is not a ref"));
        };
        let memory = self.read_memory(&r, x.offset, x.byte_count())?;
        if memory.bytes.is_empty() {
            return err(format!(
                "{register}+{:#x} is past the contents' end (byte {})",
                x.offset, memory.length
            ));
        }
        Ok(x.lines(&memory))
    }

    /// The host-object renderer, if set.
    pub fn ref_formatter(&self) -> Option<&RefFormatter> {
        self.formatter.as_ref()
    }

    // ----------------------------------------------------------------------
    // Breakpoints

    /// The breakpoints, in creation order.
    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        lock(&self.shared).breakpoints.clone()
    }

    /// Sets a breakpoint from a gdb-style spec: `FILE:LINE` (every function
    /// with code on that line of a file whose name ends with FILE, or on
    /// the next line that has code), `LINE` (in the current file),
    /// `FUNCTION` (its first instruction), or `*OFFSET` (a bytecode offset,
    /// decimal or 0x-hex, in the selected frame's function or else the
    /// entry function).
    pub fn set_breakpoint(&mut self, spec: &str) -> Result<Breakpoint, DebugCommandError> {
        self.add_breakpoint(BreakpointRequest {
            spec: spec.to_string(),
            ..Default::default()
        })
    }

    /// Sets a breakpoint with a condition, hit condition or as temporary.
    pub fn add_breakpoint(
        &mut self,
        req: BreakpointRequest,
    ) -> Result<Breakpoint, DebugCommandError> {
        let spec = req.spec.trim();
        let (addresses, line) = self.resolve(spec)?;
        self.table.add_resolved(&req, addresses, line)
    }

    /// Sets a breakpoint at `line` (or the next line with code) of the
    /// source files `files` ([`BreakpointTable::add_line_breakpoint`]).
    pub fn add_line_breakpoint(
        &mut self,
        files: &BTreeSet<String>,
        line: i32,
        req: BreakpointRequest,
    ) -> Result<Breakpoint, DebugCommandError> {
        self.table.add_line_breakpoint(files, line, req)
    }

    /// Sets a breakpoint at one instruction (DAP's instruction
    /// breakpoints).
    pub fn add_address_breakpoint(
        &mut self,
        address: CodeAddress,
        condition: Option<&str>,
    ) -> Result<Breakpoint, DebugCommandError> {
        self.table.add_address_breakpoint(address, condition)
    }

    /// Deletes breakpoint `id`, or all with `None`.
    pub fn delete_breakpoint(&mut self, id: Option<u32>) -> Result<(), DebugCommandError> {
        self.table.delete_breakpoint(id)
    }

    /// Sets (or with `None`/empty removes) breakpoint `id`'s condition.
    pub fn set_condition(
        &mut self,
        id: u32,
        condition: Option<&str>,
    ) -> Result<(), DebugCommandError> {
        self.table.set_condition(id, condition)
    }

    /// Makes breakpoint `id` a logpoint with this message ([`LogMessage`]),
    /// or (`None`) a breakpoint that stops again.
    pub fn set_log_message(
        &mut self,
        id: u32,
        message: Option<&str>,
    ) -> Result<(), DebugCommandError> {
        self.table.set_log_message(id, message)
    }

    /// Enables or disables breakpoint or watchpoint `id`, or all of both
    /// with `None`.
    pub fn enable_breakpoint(
        &mut self,
        id: Option<u32>,
        on: bool,
    ) -> Result<(), DebugCommandError> {
        let mut shared = lock(&self.shared);
        match id {
            Some(id) => {
                if let Some(w) = shared.watchpoints.iter_mut().find(|w| w.id == id) {
                    w.enabled = on;
                    return Ok(());
                }
                drop(shared);
                self.table.with_breakpoint(id, |b| b.enabled = on)
            }
            None => {
                for b in shared.breakpoints.iter_mut() {
                    b.enabled = on;
                }
                for w in shared.watchpoints.iter_mut() {
                    w.enabled = on;
                }
                Ok(())
            }
        }
    }

    /// The watchpoints, in creation order.
    pub fn watchpoints(&self) -> Vec<Watchpoint> {
        lock(&self.shared).watchpoints.clone()
    }

    /// Watches register `register` (`%iN`, `%iN:M`, `%rN`) of the selected
    /// frame: the program stops when its value changes, or, with
    /// `condition`, when it changes and the condition holds in that frame;
    /// and when the frame returns, which deletes the watchpoint
    /// ([`Stop::Watchpoints`]).
    pub fn add_watchpoint(
        &mut self,
        register: &str,
        condition: Option<&str>,
    ) -> Result<Watchpoint, DebugCommandError> {
        let register = RegisterRef::parse(register)?;
        self.add_watchpoint_in(self.selected, register, condition)
    }

    /// A read (`rwatch`) or access (`awatch`) watchpoint, or with
    /// [`WatchKind::Write`] one as [`Debugger::add_watchpoint`] makes, on
    /// `register` of the selected frame.
    pub fn add_watchpoint_of_kind(
        &mut self,
        register: &str,
        condition: Option<&str>,
        kind: WatchKind,
    ) -> Result<Watchpoint, DebugCommandError> {
        let register = RegisterRef::parse(register)?;
        self.add_watchpoint_kind_in(self.selected, register, condition, kind)
    }

    /// [`Debugger::add_watchpoint`] in frame `n` (0 = innermost).
    pub fn add_watchpoint_in(
        &mut self,
        n: usize,
        register: RegisterRef,
        condition: Option<&str>,
    ) -> Result<Watchpoint, DebugCommandError> {
        self.add_watchpoint_kind_in(n, register, condition, WatchKind::Write)
    }

    /// [`Debugger::add_watchpoint_of_kind`] in frame `n` (0 = innermost).
    pub fn add_watchpoint_kind_in(
        &mut self,
        n: usize,
        register: RegisterRef,
        condition: Option<&str>,
        kind: WatchKind,
    ) -> Result<Watchpoint, DebugCommandError> {
        self.require_running()?;
        if matches!(self.state, State::Trapped { .. }) {
            return err("the program stopped at a trap: nothing runs past it to watch");
        }
        let condition = condition
            .filter(|c| !c.trim().is_empty())
            .map(Expr::parse)
            .transpose()?;
        let frames = self.frames();
        let f = self.frame(n)?;
        let banks = self.banks_for(&f);
        let value = RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        }
        .read(register)?;
        let address = Self::address_of(&f)
            .ok_or_else(|| DebugCommandError("the frame is not in a bytecode function".into()))?;
        let mut shared = lock(&self.shared);
        shared.next_id += 1;
        let w = Watchpoint {
            id: shared.next_id,
            register,
            kind,
            depth: frames.len() - n,
            module: address.module.clone(),
            module_index: address.module_index,
            function: address.function,
            function_name: self.info.function_name(&address),
            enabled: true,
            condition,
            hits: 0,
            value,
        };
        shared.watchpoints.push(w.clone());
        Ok(w)
    }

    /// Sets register `register` of the selected frame to `value` (a number,
    /// or another register of the frame), converted as the function uses
    /// the register (gdb's `set var %i3 = 5`): an i32 or i64 takes an
    /// integer (a float is truncated toward zero, as C assigns it; one out
    /// of the register's range is refused), an f32 or f64 any number. Ref
    /// registers cannot be set. Returns the register's new value.
    pub fn set_register(
        &mut self,
        register: &str,
        value: &str,
    ) -> Result<DebugValue, DebugCommandError> {
        let register = RegisterRef::parse(register)?;
        self.set_register_in(self.selected, register, value)
    }

    /// [`Debugger::set_register`] in frame `n` (0 = innermost).
    pub fn set_register_in(
        &mut self,
        n: usize,
        register: RegisterRef,
        value: &str,
    ) -> Result<DebugValue, DebugCommandError> {
        self.require_running()?;
        if matches!(self.state, State::Trapped { .. }) {
            return err(
                "the program stopped at a trap: nothing runs past it, so registers cannot be set",
            );
        }
        let f = self.frame(n)?;
        let banks = self.banks_for(&f);
        let regs = RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        };
        let current = regs.read(register)?;
        let literal = integer_literal(value);
        let given = match (Expr::parse(value).and_then(|e| e.evaluate(&regs)), literal) {
            (Ok(given), _) => given,
            // A literal past 64 bits, which no expression holds, is
            // reported as out of the register's range.
            (Err(_), Some(exact)) => DebugValue::F64(exact as f64),
            (Err(e), None) => return Err(e),
        };
        let bits = store_bits(&register, &current, &given, literal)?;
        let slot = match register {
            RegisterRef::I32(k) | RegisterRef::Pair(k) => k as usize,
            RegisterRef::Ref(_) => return err(format!("{register} is a ref register")),
        };
        let written = match bits {
            StoredBits::One(b) => self.ctx.set_frame_i32(n, slot, b),
            StoredBits::Two(b) => {
                self.ctx.set_frame_i32(n, slot, b as u32)
                    && self.ctx.set_frame_i32(n, slot + 1, (b >> 32) as u32)
            }
        };
        if !written {
            return err(format!("{register} cannot be set in frame {n}"));
        }
        let f = self.frame(n)?;
        RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        }
        .read(register)
    }

    /// A handle that ends the running program with CANCELLED from another
    /// thread, even inside a long host call: the VM's interrupt, which a
    /// dispatch's kernels (vmvx: at loop back edges; native: between
    /// workgroups) check too, unlike the [`PauseHandle`], which stops only
    /// before a bytecode instruction of the program itself. Not a pause:
    /// the program cannot go on after it.
    pub fn cancel_handle(&mut self) -> irvm::InterruptHandle {
        self.ctx.interrupt_handle()
    }

    /// Where logpoints' messages go (`None`: nowhere).
    pub fn set_log_sink(&mut self, sink: Option<LogSink>) {
        lock(&self.shared).log_sink = sink;
    }

    /// Makes breakpoint `id` ignore its next `count` hits.
    pub fn set_ignore_count(&mut self, id: u32, count: u32) -> Result<(), DebugCommandError> {
        self.table.with_breakpoint(id, |b| b.ignore_count = count)
    }

    /// Where a spec stops, and the source line it resolved to.
    fn resolve(&self, spec: &str) -> Result<(Vec<CodeAddress>, Option<i32>), DebugCommandError> {
        if let Some(off) = spec.strip_prefix('*') {
            return Ok((self.resolve_offset(off)?, None));
        }
        if let Some(found) = self.line_spec(spec) {
            let (file, line, named) = found?;
            let (a, l) = self.table.resolve_line(&file, line, &named)?;
            return Ok((a, Some(l)));
        }
        if spec.is_empty() {
            return err("break needs a location: FILE:LINE, LINE, FUNCTION or *OFFSET");
        }
        Ok((self.resolve_function(spec)?, None))
    }

    /// A `LINE` or `FILE:LINE` spec outside the lines of its file that
    /// have code (0, negative, or past the last): the line and the file as
    /// gdb's `info line` names it (`Line number 0 is out of range for
    /// "fib.mlir".`): the current file's recorded name, or the name typed.
    /// `None` for other specs and for lines in range.
    pub fn line_out_of_range(&self, spec: &str) -> Option<(i32, String)> {
        let (file, line, _) = self.line_spec(spec.trim())?.ok()?;
        let (_, lines) = self
            .info
            .line_starts_where(|recorded| file_matches(recorded, &file));
        let last = *lines.keys().next_back()?;
        (line <= 0 || line > last).then_some((line, file))
    }

    /// The file and line a line spec names, as gdb's linespecs read them,
    /// and how `No line N in ...` names the file: `LINE` and `FILE:LINE`
    /// (a number past 32 bits wraps, as gdb's does: `99999999999` is line
    /// 1215752191), `+N` and `-N` (`N` lines after or before the default
    /// line [`Debugger::default_line`]; `+0` is `+5` and `-0` `-15`, as in
    /// gdb), `FILE:+N` and `FILE:-N` (line `N` and `-N`, as gdb reads
    /// them). `None` for specs of other forms (functions, `*OFFSET`).
    pub fn line_spec(
        &self,
        spec: &str,
    ) -> Option<Result<(String, i32, String), DebugCommandError>> {
        let spec = spec.trim();
        let current = || {
            self.default_source_file().ok_or_else(|| {
                DebugCommandError(format!(
                    "bad breakpoint `{spec}`: no current source file (use FILE:LINE)"
                ))
            })
        };
        let here = "the current file".to_string();
        if let Some(number) = line_number(spec) {
            return Some(current().map(|file| (file, number, here)));
        }
        if let Some((sign, offset)) = spec
            .strip_prefix('+')
            .map(|n| (1, n))
            .or_else(|| spec.strip_prefix('-').map(|n| (-1, n)))
        {
            let offset = line_number(offset.trim())?;
            let Some((file, default)) = self.default_line() else {
                return Some(current().map(|file| (file, offset.wrapping_mul(sign), here)));
            };
            let line = match (sign, offset) {
                (1, 0) => default.wrapping_add(5),
                (_, 0) => default.wrapping_sub(15),
                (1, n) => default.wrapping_add(n),
                (_, n) => default.wrapping_sub(n),
            };
            return Some(Ok((file, line, here)));
        }
        let (file, line) = spec.rsplit_once(':')?;
        let line = line.trim();
        let number = match line.strip_prefix('+') {
            Some(n) => line_number(n),
            None => match line.strip_prefix('-') {
                Some(n) => line_number(n).map(i32::wrapping_neg),
                None => line_number(line),
            },
        };
        let Some(number) = number else {
            return Some(parse_line(spec, line).map(|n| (file.to_string(), n, String::new())));
        };
        Some(Ok((file.to_string(), number, format!("file \"{file}\""))))
    }

    /// The line `+N` and `-N` count from, with its file: the selected
    /// frame's line (the last one shown, as gdb's last displayed line),
    /// else, with no program, the line gdb's default source line is before
    /// `run`: nine lines above the entry function's first line (at least
    /// 1), where gdb's `list` would start around `main`.
    pub fn default_line(&self) -> Option<(String, i32)> {
        if let Some((_, Some(p))) = self.selected_location() {
            return Some((p.file, p.line));
        }
        if self.is_running() {
            return None;
        }
        let (module, function) = self.entry_address().ok()?;
        let m = self.module_at(module).ok()?;
        let table = LineTable::build(m, function);
        let first = table.positions.values().flatten().next()?;
        Some((first.file.clone(), first.line.saturating_sub(9).max(1)))
    }

    /// Resolves a location spec as [`Debugger::resolve_location`] does,
    /// with the line a `LINE` or `FILE:LINE` spec resolved to (the next
    /// line with code where the line has none).
    pub fn resolve_location_line(
        &self,
        spec: &str,
    ) -> Result<(Vec<CodeAddress>, Option<i32>), DebugCommandError> {
        self.resolve(spec.trim())
    }

    /// Resolves a location spec (as for breakpoints) to its addresses.
    pub fn resolve_location(&self, spec: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        Ok(self.resolve(spec.trim())?.0)
    }

    fn resolve_offset(&self, text: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        let t = text.trim();
        let offset = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
        .ok_or_else(|| DebugCommandError(format!("bad breakpoint `*{text}`: not an offset")))?;
        let frames = self.frames();
        let (module_index, function) = match frames.get(self.selected).or(frames.first()) {
            Some(f) => (f.module_index, f.frame.ordinal.unwrap_or(0)),
            None => self.entry_address()?,
        };
        let m = self.module_at(module_index)?;
        let module = self
            .info
            .modules()
            .find(|(i, _, _)| *i == module_index)
            .map_or_else(String::new, |(_, n, _)| n.to_string());
        let starts = instruction_offsets(m, function);
        if !starts.contains(&offset) {
            return err(format!(
                "bad breakpoint `*{text}`: no instruction starts at offset {offset:#x} of {module}.{}",
                function_name(m, function).unwrap_or_else(|| format!("fn{function}"))
            ));
        }
        Ok(vec![CodeAddress {
            module,
            module_index,
            function,
            offset,
        }])
    }

    /// The entry function: its module's place in the context and its
    /// ordinal.
    fn entry_address(&self) -> Result<(usize, u32), DebugCommandError> {
        let (module, local) = self
            .entry
            .name()
            .rsplit_once('.')
            .unwrap_or(("", self.entry.name()));
        let (index, m) = self.module(module)?;
        let e = m
            .exports()
            .into_iter()
            .find(|e| e.local_name == local)
            .ok_or_else(|| {
                DebugCommandError(format!(
                    "`{}` is not a bytecode function",
                    self.entry.name()
                ))
            })?;
        Ok((index, e.internal_ordinal as u32))
    }

    /// The source position of a function's first instruction.
    pub fn function_position(&self, name: &str) -> Result<SourcePosition, DebugCommandError> {
        let addresses = self.resolve_function(name.trim())?;
        for a in &addresses {
            let m = self.module_at(a.module_index)?;
            let table = LineTable::build(m, a.function);
            if let Some(p) = table.positions.values().flatten().next() {
                return Ok(p.clone());
            }
        }
        err(format!("function `{name}` has no source position"))
    }

    /// The file `break LINE` and `list` use: the selected frame's, else the
    /// entry function's.
    pub fn default_source_file(&self) -> Option<String> {
        if let Some((_, Some(p))) = self.selected_location() {
            return Some(p.file);
        }
        let (module, function) = self.entry_address().ok()?;
        let m = self.module_at(module).ok()?;
        let table = LineTable::build(m, function);
        if let Some(p) = table.positions.values().flatten().next() {
            return Some(p.file.clone());
        }
        self.source_files().into_iter().next()
    }

    // ----------------------------------------------------------------------
    // Running

    fn go(&mut self, mode: Mode) -> Result<Stop, DebugCommandError> {
        self.ran = true;
        let resuming = matches!(self.state, State::Paused);
        // After a jump the instruction the frame stands at has not been
        // looked at: a breakpoint there stops at once.
        let moved = std::mem::take(&mut self.moved);
        self.go_from(mode, resuming && !moved)
    }

    /// Goes on with the command an interrupt or a breakpoint stopped
    /// ([`Stop::Interrupted`], [`Stop::Breakpoint`]), in the same mode:
    /// breakpoints at the instruction it stopped before still stop there
    /// (a client resumes after a breakpoint only once it is removed).
    /// Without such a command, an error.
    pub fn resume(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        match self.interrupted.take() {
            Some(mode) => self.go_from(mode, false),
            None => err("no interrupted command to go on with"),
        }
    }

    /// Runs in `mode`; `skip_first`: the instruction it stopped at runs
    /// without stopping again.
    fn go_from(&mut self, mode: Mode, skip_first: bool) -> Result<Stop, DebugCommandError> {
        self.interrupted = None;
        // Stopped inside a yielding host call, the call instruction has
        // begun: the first instruction the observer sees is the one after
        // it, which has not been looked at.
        let skip_first = skip_first && !std::mem::take(&mut self.yielded);
        if let State::Trapped { .. } = self.state {
            // Nothing runs past a trap: the program ends with it.
            lock(&self.shared).watchpoints.clear();
            return match std::mem::replace(&mut self.state, State::Idle) {
                State::Trapped { trap, .. } => Ok(Stop::Failed(trap)),
                _ => err(NOT_RUNNING),
            };
        }
        let resuming = matches!(self.state, State::Paused);
        // A pause asked for while stopped is stale, unless it came after
        // the command that runs now was read; an interrupt is not.
        let for_this_command = self.pause.command_read.swap(false, Ordering::SeqCst);
        if !for_this_command && !self.pause.interrupt.load(Ordering::Relaxed) {
            self.pause.flag.store(false, Ordering::Relaxed);
        }
        // A pause during the run is the run's, not a call's made later.
        self.pause.call.store(false, Ordering::Relaxed);
        let mut kept_mode = mode.clone();
        // The watchpoints of initializers' frames that returned.
        let mut left_scope: Vec<u32> = Vec::new();
        let watches = if resuming {
            self.active_watches()
        } else {
            Vec::new()
        };
        self.final_watch_events.clear();
        lock(&self.shared).unreported_reads.clear();
        // The reads that initializers' last `vm.return`s made, reported
        // with their watchpoints' end.
        let mut init_reads: Vec<WatchEvent> = Vec::new();
        let mut needed = self.attach(mode, skip_first, watches);
        lock(&self.shared).reason = None;
        let mut state = if resuming {
            self.ctx.resume()
        } else {
            self.ctx.keep_trap_frames(true);
            self.state = State::Paused;
            self.begin_next_call()
        };
        // A pause (or interrupt) that came between a yielding host call's
        // resumptions: no instruction runs there, so neither the loops nor
        // the observer read the flag; it is read here.
        let mut stopped_in_yield = false;
        loop {
            // A yield is not a stop: resume at once, in the same mode, as
            // often as the program yields (a loop, so any number of yields
            // works), unless a pause is asked for meanwhile.
            while let Ok(CallState::Yielded) = state {
                let watched = self.interruptible || needed;
                if watched && self.pause.flag.swap(false, Ordering::Relaxed) {
                    stopped_in_yield = true;
                    break;
                }
                state = self.ctx.resume();
            }
            if stopped_in_yield || !(self.in_init && matches!(state, Ok(CallState::Done(_)))) {
                break;
            }
            // An initializer ended: the next call goes on in the same
            // command. A step (or `start`) stops before its first
            // instruction, as stepping out of a function stops in its
            // caller; running goes on to a breakpoint.
            self.inits_done += 1;
            // Its frame returned: its watchpoints end, and the program
            // stops before the next call's first instruction to say so, as
            // it stops in the caller when a watched frame returns (disabled
            // ones end quietly). None is carried into the next call, whose
            // frame sits at the same depth.
            let ended = std::mem::take(&mut lock(&self.shared).watchpoints);
            left_scope.extend(ended.iter().filter(|w| w.enabled).map(|w| w.id));
            let entering = self.inits_done >= self.inits.len();
            let stop_first = !matches!(kept_mode, Mode::Run)
                || (entering && self.entry_stop)
                || !left_scope.is_empty();
            if entering && self.entry_stop {
                self.entry_stop = false;
                self.entry_stop_armed = true;
            }
            kept_mode = if stop_first {
                Mode::Instruction
            } else {
                Mode::Run
            };
            needed = self.attach(kept_mode.clone(), false, Vec::new());
            init_reads.append(&mut lock(&self.shared).unreported_reads);
            state = self.begin_next_call();
        }
        self.ctx.set_observer(None);
        // (Only a run that ended leaves reads no instruction came after:
        // at a stop, the one noted is the next instruction's, not run.)
        let unreported = std::mem::take(&mut lock(&self.shared).unreported_reads);

        self.ctx.set_pause_flag(None);
        self.pause.call.store(false, Ordering::Relaxed);
        self.selected = 0;
        let interrupted = self.pause.interrupt.swap(false, Ordering::Relaxed);
        let stop = match state {
            Ok(CallState::Paused) => {
                self.state = State::Paused;
                let mut reason = lock(&self.shared).reason.take();
                if !left_scope.is_empty() {
                    // The stop asked for at the next call's first
                    // instruction reports the watchpoints that ended; a
                    // pause or an interrupt that came meanwhile is answered
                    // by it (as a watchpoint's change goes before a pause
                    // in the observer), not left to lose them.
                    let left = || {
                        init_reads
                            .iter()
                            .cloned()
                            .chain(left_scope.iter().map(|&id| WatchEvent::LeftScope(id)))
                            .collect()
                    };
                    reason = match reason {
                        Some(Reason::Breakpoint(hit)) => Some(Reason::Watch(left(), Some(hit))),
                        Some(Reason::Step | Reason::Pause) | None => {
                            Some(Reason::Watch(left(), None))
                        }
                        other => other,
                    };
                }
                // Only the pause flag stops a program nothing observes.
                let paused = matches!(reason, Some(Reason::Pause)) || (reason.is_none() && !needed);
                if paused && interrupted {
                    self.interrupted = Some(kept_mode);
                    return Ok(Stop::Interrupted);
                }
                match reason {
                    Some(Reason::Breakpoint(hit)) => {
                        if hit.temporary {
                            let _ = self.delete_breakpoint(Some(hit.id));
                        }
                        // A client may find the breakpoint removed since
                        // (by another thread) and go on with the command.
                        self.interrupted = Some(kept_mode);
                        Stop::Breakpoint(hit)
                    }
                    Some(Reason::Pause) => Stop::Paused,
                    Some(Reason::Watch(events, breakpoint)) => {
                        let ended: Vec<u32> = events
                            .iter()
                            .filter_map(|e| match e {
                                WatchEvent::LeftScope(id) => Some(*id),
                                WatchEvent::Changed(_) | WatchEvent::Read(_) => None,
                            })
                            .collect();
                        lock(&self.shared)
                            .watchpoints
                            .retain(|w| !ended.contains(&w.id));
                        if let Some(hit) = &breakpoint {
                            if hit.temporary {
                                let _ = self.delete_breakpoint(Some(hit.id));
                            }
                            // As after a breakpoint's stop, a client may go
                            // on with the command.
                            self.interrupted = Some(kept_mode);
                        }
                        Stop::Watchpoints { events, breakpoint }
                    }
                    Some(Reason::Returned(values)) => Stop::Returned(values),
                    Some(Reason::Step) => Stop::Step,
                    // Only the pause flag stops a program nothing observes.
                    None if !needed => Stop::Paused,
                    None => Stop::Step,
                }
            }
            Ok(CallState::Yielded) if stopped_in_yield => {
                self.state = State::Paused;
                self.yielded = true;
                if !left_scope.is_empty() {
                    // The watchpoints of an initializer that returned (set
                    // aside above) are reported, as at an instruction.
                    Stop::Watchpoints {
                        events: init_reads
                            .iter()
                            .cloned()
                            .chain(left_scope.iter().map(|&id| WatchEvent::LeftScope(id)))
                            .collect(),
                        breakpoint: None,
                    }
                } else if interrupted {
                    self.interrupted = Some(kept_mode);
                    return Ok(Stop::Interrupted);
                } else {
                    Stop::Paused
                }
            }
            Ok(CallState::Yielded) => {
                self.state = State::Idle;
                lock(&self.shared).watchpoints.clear();
                return err("the program yielded and could not be resumed");
            }
            Ok(CallState::Done(values)) => {
                self.state = State::Idle;
                // Each watched a frame of the program that ended.
                lock(&self.shared).watchpoints.clear();
                // The entry frame's last `vm.return` read a watched
                // register: reported as the program ends, where no
                // instruction comes after it.
                self.final_watch_events = unreported;
                Stop::Finished(values)
            }
            Err(trap) => {
                let frames = self.ctx.take_trap_frames();
                if frames.is_empty() {
                    self.state = State::Idle;
                    lock(&self.shared).watchpoints.clear();
                    Stop::Failed(trap)
                } else {
                    self.state = State::Trapped {
                        trap: trap.clone(),
                        frames,
                    };
                    Stop::Exception(trap)
                }
            }
        };
        // The step stop that `start` asked for before the entry function's
        // first instruction is the entry; any other stop ends that wish.
        Ok(match stop {
            Stop::Step if std::mem::take(&mut self.entry_stop_armed) => Stop::Entry,
            other => {
                self.entry_stop_armed = false;
                other
            }
        })
    }

    fn restart(&mut self) {
        if matches!(self.state, State::Paused) {
            self.ctx.abandon();
        }
        self.state = State::Idle;
        if self.owns_inits && self.ran {
            // A fresh start: the globals as registered, before any
            // initializer ran, and every initializer to run again.
            self.ctx.reset_globals();
            self.inits_done = 0;
            self.ran = false;
        }
        self.in_init = false;
        self.entry_stop = false;
        self.entry_stop_armed = false;
        self.moved = false;
        self.yielded = false;
        // Each watches a frame of the program abandoned.
        lock(&self.shared).watchpoints.clear();
    }

    /// The watchpoints with their registers' values now (disabled ones
    /// too: they end with their frame, see [`ActiveWatch::enabled`]); those
    /// whose frame is gone are deleted.
    fn active_watches(&mut self) -> Vec<ActiveWatch> {
        let frames = self.ctx.frames();
        let mut out = Vec::new();
        let kept: Vec<Watchpoint> = lock(&self.shared).watchpoints.clone();
        let mut gone = Vec::new();
        for w in kept {
            let frame = frames
                .len()
                .checked_sub(w.depth)
                .and_then(|k| frames.get(k))
                .filter(|f| {
                    f.module_index == w.module_index && f.frame.ordinal == Some(w.function)
                });
            let Some(f) = frame else {
                gone.push(w.id);
                continue;
            };
            let banks = self.banks_for(f);
            let regs = RegisterFile {
                i32s: &f.i32s,
                refs: &f.ref_values,
                banks: &banks,
            };
            let Ok(value) = regs.read(w.register) else {
                gone.push(w.id);
                continue;
            };
            if let Some(k) = lock(&self.shared)
                .watchpoints
                .iter_mut()
                .find(|k| k.id == w.id)
            {
                k.value = value.clone();
            }
            // (Disabled ones too: they end with their frame.)
            out.push(ActiveWatch {
                id: w.id,
                register: w.register,
                kind: w.kind,
                pending_read: None,
                pending_read_holds: false,
                pending_write: false,
                depth: w.depth,
                condition: w.condition.clone(),
                value,
                enabled: w.enabled,
            });
        }
        lock(&self.shared)
            .watchpoints
            .retain(|w| !gone.contains(&w.id));
        out
    }

    /// The entry function's arguments from the next start on (`run`,
    /// `start`; DAP's `restart` with new `inputs`).
    pub fn set_arguments(&mut self, args: Vec<Value>) {
        self.args = args;
    }

    /// Starts the program (from the beginning; a running one is abandoned).
    pub fn run(&mut self) -> Result<Stop, DebugCommandError> {
        self.restart();
        self.go(Mode::Run)
    }

    /// Starts the program, stopping before its first instruction when
    /// `stop_on_entry` ([`Stop::Entry`]).
    pub fn start(&mut self, stop_on_entry: bool) -> Result<Stop, DebugCommandError> {
        if !stop_on_entry {
            return self.run();
        }
        self.restart();
        if self.inits_done < self.inits.len() {
            // The initializers run first; the stop is at the entry
            // function's first instruction (or wherever they stop).
            self.entry_stop = true;
            return Ok(match self.go(Mode::Run)? {
                Stop::Step => Stop::Entry,
                other => other,
            });
        }
        Ok(match self.go(Mode::Instruction)? {
            // Any stop before the first instruction is the entry.
            Stop::Step | Stop::Interrupted => Stop::Entry,
            other => other,
        })
    }

    /// Abandons the running program.
    pub fn kill(&mut self) {
        self.restart();
    }

    /// An error unless a program is running (or stopped at a trap).
    pub fn require_running_program(&self) -> Result<(), DebugCommandError> {
        self.require_running()
    }

    fn require_running(&self) -> Result<(), DebugCommandError> {
        if self.is_running() {
            Ok(())
        } else {
            err(NOT_RUNNING)
        }
    }

    /// Continues to the next breakpoint or the end.
    pub fn continue_(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        self.go(Mode::Run)
    }

    /// Executes one instruction.
    pub fn step_instruction(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        self.go(Mode::Instruction)
    }

    /// `nexti`: executes one instruction of the top frame, a call
    /// running to its return (breakpoints in it still stop).
    pub fn next_instruction(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let depth = self.frames().len();
        self.go(Mode::InstructionOver { depth })
    }

    /// (file, line) and offset of the top frame, and the depth.
    fn here(&self) -> (Option<(String, i32)>, u32, usize) {
        let depth = self.frames().len();
        match self.current() {
            Some((a, pos)) => (pos.map(|p| (p.file, p.line)), a.offset, depth),
            None => (None, 0, depth),
        }
    }

    /// Runs to the start of another source line, entering calls.
    pub fn step(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let (from, from_offset, depth) = self.here();
        self.go(Mode::Line {
            max_depth: usize::MAX,
            from,
            from_offset,
            from_depth: depth,
        })
    }

    /// `next`: runs to the start of another source line in this frame (or a
    /// caller), stepping over calls.
    pub fn step_over(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let (from, from_offset, depth) = self.here();
        self.go(Mode::Line {
            max_depth: depth,
            from,
            from_offset,
            from_depth: depth,
        })
    }

    /// `until`: like `next`, but never stops at a line before the current
    /// one in this frame (so a loop's back edge runs the loop to its end).
    pub fn until(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let (from, from_offset, depth) = self.here();
        self.go(Mode::Until {
            from,
            from_offset,
            depth,
        })
    }

    /// `advance LOCATION`: runs until the location is reached, or the
    /// selected frame returns.
    pub fn advance(&mut self, spec: &str) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let targets: HashSet<CodeAddress> = self.resolve_location(spec)?.into_iter().collect();
        let depth = self.frames().len().saturating_sub(self.selected);
        self.go(Mode::Advance {
            targets: Arc::new(targets),
            depth,
        })
    }

    /// Runs until the selected frame returns ([`Stop::Returned`] with its
    /// values; [`Stop::Finished`] for the entry function).
    pub fn finish(&mut self) -> Result<Stop, DebugCommandError> {
        self.finish_refusal()?;
        let frames = self.frames();
        let depth = frames.len().saturating_sub(self.selected);
        let (returns, kinds) = match frames.get(self.selected) {
            Some(f) => {
                let module = self.module_at(f.module_index)?;
                let function = f.frame.ordinal.unwrap_or(0);
                (
                    return_registers(module, function),
                    result_kinds(module, function),
                )
            }
            None => (HashMap::new(), Vec::new()),
        };
        self.go(Mode::Finish {
            depth,
            returns: Arc::new(returns),
            kinds: Arc::new(kinds),
        })
    }

    // ----------------------------------------------------------------------
    // Inspecting

    /// The frames of the stopped program, innermost first (at a trap, as
    /// they were when it trapped).
    pub fn frames(&self) -> Vec<FrameInfo> {
        match &self.state {
            State::Idle => Vec::new(),
            State::Paused => self.ctx.frames(),
            State::Trapped { frames, .. } => frames.clone(),
        }
    }

    /// The selected frame (0 = innermost; every stop selects 0).
    pub fn selected_frame(&self) -> usize {
        self.selected
    }

    /// Selects frame `n` (`frame N`, `up`, `down`).
    pub fn select_frame(&mut self, n: usize) -> Result<(), DebugCommandError> {
        let count = self.frames().len();
        if count == 0 {
            return err(NOT_RUNNING);
        }
        if n >= count {
            return err(format!("no frame {n} (the stack has {count} frames)"));
        }
        self.selected = n;
        Ok(())
    }

    fn address_of(f: &FrameInfo) -> Option<CodeAddress> {
        Some(CodeAddress {
            module: f.frame.module.clone(),
            module_index: f.module_index,
            function: f.frame.ordinal?,
            offset: f.frame.offset?,
        })
    }

    /// Where the program is stopped: address, and source position when the
    /// module has debug information.
    pub fn current(&self) -> Option<(CodeAddress, Option<SourcePosition>)> {
        self.frame_location(0)
    }

    /// Where frame `n` is (its call instruction for callers).
    pub fn frame_location(&self, n: usize) -> Option<(CodeAddress, Option<SourcePosition>)> {
        let frames = self.frames();
        let address = Self::address_of(frames.get(n)?)?;
        let pos = self.position_of(&address);
        Some((address, pos))
    }

    /// Where the selected frame is.
    pub fn selected_location(&self) -> Option<(CodeAddress, Option<SourcePosition>)> {
        self.frame_location(self.selected)
    }

    fn frame(&self, n: usize) -> Result<FrameInfo, DebugCommandError> {
        let mut frames = self.frames();
        if frames.is_empty() {
            return err(NOT_RUNNING);
        }
        if n >= frames.len() {
            return err(format!("no frame {n}"));
        }
        Ok(frames.swap_remove(n))
    }

    fn banks_for(&self, f: &FrameInfo) -> Arc<BTreeMap<u16, Bank>> {
        let function = f.frame.ordinal.unwrap_or(0);
        match self.module_at(f.module_index) {
            Ok(m) => cached_banks(&mut lock(&self.shared), m, f.module_index, function),
            Err(_) => Arc::new(BTreeMap::new()),
        }
    }

    /// The registers of frame `n`, typed by how the function uses them
    /// (pairs once, as `%iN:N+1`), then the refs.
    pub fn registers(&self, n: usize) -> Result<Vec<RegisterValue>, DebugCommandError> {
        let f = self.frame(n)?;
        let banks = self.banks_for(&f);
        let file = RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        };
        let mut out = Vec::new();
        let mut r = 0usize;
        while r < f.i32s.len() {
            let k = r as u16;
            let wide = matches!(banks.get(&k), Some(Bank::I64 | Bank::F64)) && r + 1 < f.i32s.len();
            let reg = if wide {
                RegisterRef::Pair(k)
            } else {
                RegisterRef::I32(k)
            };
            out.push((reg, file.read(reg)?));
            r += if wide { 2 } else { 1 };
        }
        for k in 0..f.ref_values.len() {
            let reg = RegisterRef::Ref(k as u16);
            out.push((reg, file.read(reg)?));
        }
        Ok(out)
    }

    /// The arguments of frame `n`'s function, where the calling convention
    /// put them (their registers may have been reused since).
    pub fn arguments(&self, n: usize) -> Result<Vec<RegisterValue>, DebugCommandError> {
        let f = self.frame(n)?;
        let m = self.module_at(f.module_index)?;
        let kinds = param_kinds(m, f.frame.ordinal.unwrap_or(0));
        let banks = self.banks_for(&f);
        let file = RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        };
        let mut out = Vec::new();
        for (k, reg) in argument_layout(&kinds) {
            let v = match (k, file.read(reg)?) {
                ('F', DebugValue::I64(bits)) => DebugValue::F64(f64::from_bits(bits as u64)),
                ('f', DebugValue::I32(bits)) => DebugValue::F32(f32::from_bits(bits as u32)),
                (_, v) => v,
            };
            out.push((reg, v));
        }
        Ok(out)
    }

    /// Evaluates an expression ([`Expr`]) in frame `n`; one without
    /// registers (`1 + 2`) needs no program.
    pub fn evaluate(&self, expr: &str, n: usize) -> Result<DebugValue, DebugCommandError> {
        self.evaluate_with(expr, n, &|_| None)
    }

    /// [`Debugger::evaluate`], with the values of `$` words (gdb's value
    /// history) from `values` ([`Expr::parse_with`]).
    pub fn evaluate_with(
        &self,
        expr: &str,
        n: usize,
        values: &NamedValues<'_>,
    ) -> Result<DebugValue, DebugCommandError> {
        self.evaluate_noting(expr, n, values, &mut Vec::new())
    }

    /// [`Debugger::evaluate_with`], adding to `warnings` the warnings gdb
    /// prints before the value ([`Expr::evaluate_noting`]).
    pub fn evaluate_noting(
        &self,
        expr: &str,
        n: usize,
        values: &NamedValues<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        let e = Expr::parse_with(expr, values)?;
        if e.is_constant() {
            return e.evaluate_constant_noting(warnings);
        }
        self.evaluate_expr(&e, n, warnings)
    }

    fn evaluate_expr(
        &self,
        e: &Expr,
        n: usize,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        let f = self.frame(n)?;
        let banks = self.banks_for(&f);
        let regs = RegisterFile {
            i32s: &f.i32s,
            refs: &f.ref_values,
            banks: &banks,
        };
        e.evaluate_noting(&regs, warnings)
    }

    /// A value as text: refs through [`describe_ref`] and the host-object
    /// renderer.
    pub fn format_value(&self, v: &DebugValue, format: Format) -> String {
        v.format(format, self.formatter.as_ref())
    }

    /// Adds an expression shown at every stop (`display`); returns its
    /// number.
    pub fn add_display(&mut self, expr: &str, format: Format) -> Result<u32, DebugCommandError> {
        let e = Expr::parse(expr)?;
        let id = self.next_display;
        self.next_display += 1;
        self.displays.push((id, e, format));
        Ok(id)
    }

    /// Removes display `id`, or all with `None`.
    pub fn remove_display(&mut self, id: Option<u32>) -> Result<(), DebugCommandError> {
        match id {
            None => self.displays.clear(),
            Some(id) => {
                let before = self.displays.len();
                self.displays.retain(|(d, _, _)| *d != id);
                if before == self.displays.len() {
                    return err(format!("no display number {id}"));
                }
            }
        }
        Ok(())
    }

    /// The displays evaluated in the selected frame: number, expression
    /// text, and its value as text (or why it cannot be evaluated).
    pub fn displays(&self) -> Vec<(u32, String, Format, Result<String, DebugCommandError>)> {
        self.displays
            .iter()
            .map(|(id, e, fmt)| {
                let v = self
                    .evaluate_expr(e, self.selected, &mut Vec::new())
                    .map(|v| self.format_value(&v, *fmt));
                (*id, e.text().to_string(), *fmt, v)
            })
            .collect()
    }

    // ----------------------------------------------------------------------
    // The modules' debug information (see [`DebugInfo`])

    /// The program's modules as a shareable, read-only [`DebugInfo`].
    pub fn debug_info(&self) -> &DebugInfo {
        &self.info
    }

    /// The breakpoints as a [`BreakpointTable`] another thread can edit.
    pub fn breakpoint_table(&self) -> BreakpointTable {
        self.table.clone()
    }

    /// The module a name reaches (the last registered of that name) and
    /// its place in the context.
    fn module(&self, name: &str) -> Result<(usize, &Module), DebugCommandError> {
        self.info.module(name)
    }

    /// The module at place `index` in the context.
    fn module_at(&self, index: usize) -> Result<&Module, DebugCommandError> {
        self.info.module_at(index)
    }

    fn resolve_function(&self, name: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        self.info.resolve_function(name)
    }

    /// The lines of `file` that have code (where line breakpoints stop).
    pub fn lines_with_code(&self, file: &str) -> BTreeSet<i32> {
        self.info
            .line_starts_where(|recorded| file_matches(recorded, file))
            .1
            .into_keys()
            .collect()
    }

    /// The source files named in the modules' debug information.
    pub fn source_files(&self) -> BTreeSet<String> {
        self.info.source_files()
    }

    /// The names of the bytecode functions.
    pub fn function_names(&self) -> BTreeSet<String> {
        self.info.function_names()
    }

    /// The source position of an address, if known.
    pub fn position_of(&self, a: &CodeAddress) -> Option<SourcePosition> {
        self.info.position_of(a)
    }

    /// The function name shown for an address.
    pub fn function_name(&self, a: &CodeAddress) -> String {
        self.info.function_name(a)
    }

    /// The register types of a function ([`DebugInfo::register_banks`]).
    pub fn register_banks(&self, module: usize, function: u32) -> BTreeMap<u16, Bank> {
        self.info.register_banks(module, function)
    }

    /// The registers the calling convention puts a function's arguments
    /// in, in order.
    pub fn argument_registers(&self, module: usize, function: u32) -> Vec<RegisterRef> {
        self.info.argument_registers(module, function)
    }

    /// A function's instructions: offset and text.
    pub fn disassemble(
        &self,
        module: usize,
        function: u32,
    ) -> Result<Vec<(u32, String)>, DebugCommandError> {
        self.info.disassemble(module, function)
    }

    /// The text of the instruction at an address.
    pub fn instruction_text(&self, a: &CodeAddress) -> Option<String> {
        self.info.instruction_text(a)
    }

    /// A number for an address ([`DebugInfo::address_reference`]).
    pub fn address_reference(&self, a: &CodeAddress) -> Option<u64> {
        self.info.address_reference(a)
    }

    /// Where a number [`Debugger::address_reference`] made falls
    /// ([`DebugInfo::reference_place`]).
    pub fn reference_place(&self, r: u64) -> Option<(CodeAddress, i64)> {
        self.info.reference_place(r)
    }

    /// The address of a number [`Debugger::address_reference`] made.
    pub fn address_from_reference(&self, r: u64) -> Option<CodeAddress> {
        self.info.address_from_reference(r)
    }

    /// The offsets of a function's instructions (block markers left out)
    /// and the length of its code.
    pub fn instruction_offsets(&self, module: usize, function: u32) -> (Vec<u32>, u32) {
        self.info.instruction_offsets(module, function)
    }

    /// The registers each instruction of a function writes
    /// ([`DebugInfo::register_writes`]).
    pub fn register_writes(&self, module: usize, function: u32) -> Vec<(u32, Vec<RegisterRef>)> {
        self.info.register_writes(module, function)
    }

    /// The source position of each instruction of a function that has one.
    pub fn instruction_positions(
        &self,
        module: usize,
        function: u32,
    ) -> BTreeMap<u32, SourcePosition> {
        self.info.instruction_positions(module, function)
    }

    /// Whether a function has source positions (debug information).
    pub fn has_positions(&self, module: usize, function: u32) -> bool {
        self.info.has_positions(module, function)
    }
}

/// A line number of decimal digits, wrapped to 32 bits as gdb's linespecs
/// wrap one (`99999999999` is 1215752191, `4294967299` is 3).
fn line_number(digits: &str) -> Option<i32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let wrapped = digits.bytes().fold(0u32, |n, d| {
        n.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
    });
    Some(wrapped as i32)
}

fn parse_line(spec: &str, line: &str) -> Result<i32, DebugCommandError> {
    line.trim().parse().map_err(|_| {
        DebugCommandError(format!(
            "bad breakpoint `{spec}`: `{line}` is not a line number"
        ))
    })
}

/// How a function uses its i32 registers (the first use decides).
fn banks_of(m: &Module, function: u32) -> BTreeMap<u16, Bank> {
    let mut banks = BTreeMap::new();
    let Some(code) = m.function_bytecode(function as usize) else {
        return banks;
    };
    for inst in Decoder::new(code, 0, code.len()).map_while(Result::ok) {
        if inst.op == Opcode::Block {
            continue;
        }
        for (field, operand) in inst.op.info().fields.iter().zip(&inst.operands) {
            if let (Field::Reg(bank, _), Operand::Reg(r)) = (field, operand) {
                if *bank != Bank::Ref {
                    banks.entry(r & I32_INDEX_MASK).or_insert(*bank);
                }
            }
        }
    }
    // Arguments the code never names still have their declared types.
    let (mut s, kinds) = (0u16, param_kinds(m, function));
    for k in kinds {
        match k {
            'i' => s += 1,
            'f' => {
                banks.entry(s).or_insert(Bank::F32);
                s += 1;
            }
            'I' | 'F' => {
                s = s.div_ceil(2) * 2;
                let bank = if k == 'I' { Bank::I64 } else { Bank::F64 };
                banks.entry(s).or_insert(bank);
                s += 2;
            }
            _ => {}
        }
    }
    banks
}

/// The calling convention's (parameter, result) letters of a function.
fn cconv_kinds(m: &Module, function: u32) -> (Vec<char>, Vec<char>) {
    let Some(cc) = m
        .function_signature(function as usize)
        .and_then(|s| s.calling_convention)
    else {
        return (Vec::new(), Vec::new());
    };
    let body = cc.strip_prefix('0').unwrap_or(cc);
    let (params, results) = body.split_once('_').unwrap_or((body, ""));
    let keep = |s: &str| {
        s.chars()
            .filter(|c| matches!(c, 'i' | 'I' | 'f' | 'F' | 'r'))
            .collect()
    };
    (keep(params), keep(results))
}

/// Where the calling convention puts arguments of these kinds: refs in
/// order, i32/f32 in the next slot, i64/f64 in the next even pair.
fn argument_layout(kinds: &[char]) -> Vec<(char, RegisterRef)> {
    let (mut s, mut r) = (0u16, 0u16);
    let mut out = Vec::new();
    for &k in kinds {
        let reg = match k {
            'r' => {
                r = r.saturating_add(1);
                RegisterRef::Ref(r - 1)
            }
            'I' | 'F' => {
                s = s.div_ceil(2).saturating_mul(2).saturating_add(2);
                RegisterRef::Pair(s - 2)
            }
            _ => {
                s = s.saturating_add(1);
                RegisterRef::I32(s - 1)
            }
        };
        out.push((k, reg));
    }
    out
}

fn param_kinds(m: &Module, function: u32) -> Vec<char> {
    cconv_kinds(m, function).0
}

fn result_kinds(m: &Module, function: u32) -> Vec<char> {
    cconv_kinds(m, function).1
}

/// The offsets of a function's `vm.return`s and their registers.
fn return_registers(m: &Module, function: u32) -> HashMap<u32, Vec<u16>> {
    let mut out = HashMap::new();
    let Some(code) = m.function_bytecode(function as usize) else {
        return out;
    };
    for inst in Decoder::new(code, 0, code.len()).map_while(Result::ok) {
        if inst.op != Opcode::Return {
            continue;
        }
        let regs = inst
            .operands
            .iter()
            .find_map(|o| match o {
                Operand::Regs(list) => Some(list.iter().collect()),
                _ => None,
            })
            .unwrap_or_default();
        out.insert(inst.offset as u32, regs);
    }
    out
}

/// Whether a recorded file name matches what the user typed (equal, or
/// ending in `/` + it).
fn file_matches(recorded: &str, typed: &str) -> bool {
    recorded == typed
        || recorded.ends_with(&format!("/{typed}"))
        || typed.ends_with(&format!("/{recorded}"))
}

/// Bytecode offsets of the instructions (not block markers) of a function.
fn instruction_offsets(module: &Module, function: u32) -> Vec<u32> {
    let Some(code) = module.function_bytecode(function as usize) else {
        return Vec::new();
    };
    Decoder::new(code, 0, code.len())
        .map_while(Result::ok)
        .filter(|i| i.op != Opcode::Block)
        .map(|i| i.offset as u32)
        .collect()
}
