//! A source-level debugger over a [`Context`]: breakpoints at source lines,
//! functions and bytecode offsets, and gdb's stepping commands (`stepi`,
//! `step`, `next`, `finish`, `continue`), built on the interpreter's
//! [`Observer`] hook and paused calls. `irvm dbg` is a command line around
//! it; embedders can drive it directly.
//!
//! Lines come from the modules' debug databases: a *line table* lists, per
//! function, the bytecode offsets where a new source line starts. Source
//! stepping stops at the first instruction of a different line (or of the
//! same line entered again from a later point, like the next iteration of a
//! one-line loop). Without debug information, `step` and `next` fall back to
//! instruction stepping.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::context::{CallState, Context, FrameInfo};
use crate::debug::{Control, ExecView, Observer};
use crate::decode::{Decoder, Operand};
use crate::func::Func;
use crate::isa::{Bank, Field, Opcode, I32_INDEX_MASK};
use crate::loader::{Module, SourcePosition};
use crate::trap::Trap;
use crate::value::Value;

/// Where execution stops: a bytecode module (by name), an internal
/// function ordinal and a bytecode offset.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeAddress {
    /// Module name.
    pub module: String,
    /// Internal function ordinal.
    pub function: u32,
    /// Bytecode offset of the instruction.
    pub offset: u32,
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
}

/// Why the program stopped.
#[derive(Debug)]
pub enum Stop {
    /// At a breakpoint (its id), before the instruction.
    Breakpoint(u32),
    /// A step command completed.
    Step,
    /// The entry function returned these values.
    Finished(Vec<Value>),
    /// The program failed.
    Trapped(Trap),
}

/// What the debugger's errors say (bad breakpoint specs, commands that need
/// a running program, ...).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DebugCommandError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, DebugCommandError> {
    Err(DebugCommandError(message.into()))
}

/// How the observer decides to pause.
#[derive(Clone, Debug, Default)]
enum Mode {
    /// Only at breakpoints.
    #[default]
    Run,
    /// Before the next instruction.
    Instruction,
    /// At the start of another source line, at any depth (`step`), or only
    /// at depth `<= max_depth` (`next`).
    Line {
        max_depth: usize,
        from: Option<(String, i32)>,
        from_offset: u32,
        from_depth: usize,
    },
    /// Once the frame at `depth` has returned.
    Finish { depth: usize },
}

/// State shared between the [`Debugger`] and its observer (which lives
/// inside the context while attached).
#[derive(Default)]
struct Shared {
    breakpoints: Vec<Breakpoint>,
    mode: Mode,
    hit: Option<u32>,
    /// (module, function) -> line table, filled lazily.
    lines: HashMap<(String, u32), Arc<LineTable>>,
}

/// Per function: offset -> source position, and which offsets start a line.
#[derive(Default)]
struct LineTable {
    positions: BTreeMap<u32, SourcePosition>,
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
        let mut previous: Option<(String, i32)> = None;
        for (offset, loc) in entries {
            let (Ok(offset), Some(pos)) = (u32::try_from(offset), db.source_position(loc as i64))
            else {
                continue;
            };
            let key = Some((pos.file.clone(), pos.line));
            if key != previous {
                table.starts.insert(offset, pos.clone());
            }
            previous = key;
            table.positions.insert(offset, pos);
        }
        table
    }

    /// The position of the instruction at `offset` (the entry at or before
    /// it: source maps list the first instruction of each location run).
    fn position(&self, offset: u32) -> Option<&SourcePosition> {
        self.positions.range(..=offset).next_back().map(|(_, p)| p)
    }
}

/// The name a function's source map is keyed by: its export name or the
/// debug database's own name for it.
fn function_name(module: &Module, function: u32) -> Option<String> {
    let from_db = module
        .debug_database()
        .and_then(|db| db.source_map(function as usize))
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

struct StopObserver {
    shared: Arc<Mutex<Shared>>,
}

impl Observer for StopObserver {
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control {
        let mut shared = lock(&self.shared);
        let here = (view.module_name, view.function, view.offset);
        if let Some(b) = shared.breakpoints.iter().find(|b| {
            b.addresses
                .iter()
                .any(|a| (a.module.as_str(), a.function, a.offset) == here)
        }) {
            shared.hit = Some(b.id);
            return Control::Pause;
        }
        let pause = match shared.mode.clone() {
            Mode::Run => false,
            Mode::Instruction => true,
            Mode::Finish { depth } => view.depth < depth,
            Mode::Line {
                max_depth,
                from,
                from_offset,
                from_depth,
            } => {
                if view.depth > max_depth {
                    false
                } else if view.depth < from_depth {
                    // Returned to a caller: stop at once.
                    true
                } else {
                    let key = (view.module_name.to_string(), view.function);
                    let table = shared
                        .lines
                        .entry(key)
                        .or_insert_with(|| Arc::new(LineTable::build(view.module, view.function)))
                        .clone();
                    match (table.starts.get(&view.offset), &from) {
                        // No line information at all: behave like stepi.
                        _ if table.positions.is_empty() => true,
                        (Some(start), Some((file, line))) => {
                            (&start.file, start.line) != (file, *line)
                                || view.depth != from_depth
                                || view.offset <= from_offset
                        }
                        (Some(_), None) => true,
                        (None, _) => false,
                    }
                }
            }
        };
        if pause {
            shared.hit = None;
            Control::Pause
        } else {
            Control::Continue
        }
    }
}

/// A program under the debugger: a context, the function to run and its
/// arguments.
pub struct Debugger {
    ctx: Context,
    entry: Func,
    args: Vec<Value>,
    shared: Arc<Mutex<Shared>>,
    running: bool,
    next_id: u32,
}

impl Debugger {
    /// Prepares to debug `entry(args)` in `ctx` (attaches the observer).
    pub fn new(mut ctx: Context, entry: Func, args: Vec<Value>) -> Debugger {
        let shared = Arc::new(Mutex::new(Shared::default()));
        ctx.set_observer(Some(Box::new(StopObserver {
            shared: shared.clone(),
        })));
        Debugger {
            ctx,
            entry,
            args,
            shared,
            running: false,
            next_id: 1,
        }
    }

    /// Whether the program has been started and has not finished.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The context (for inspection).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The breakpoints, in creation order.
    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        lock(&self.shared).breakpoints.clone()
    }

    /// Sets a breakpoint from a gdb-style spec: `FILE:LINE` (every function
    /// with code on that line of a file whose name ends with FILE),
    /// `FUNCTION` (its first instruction), or `*OFFSET` (a bytecode offset,
    /// decimal or 0x-hex, in the current function or else the entry
    /// function).
    pub fn set_breakpoint(&mut self, spec: &str) -> Result<Breakpoint, DebugCommandError> {
        let spec = spec.trim();
        let addresses = if let Some(off) = spec.strip_prefix('*') {
            self.resolve_offset(off)?
        } else if let Some((file, line)) = spec.rsplit_once(':') {
            let line: i32 = line.parse().map_err(|_| {
                DebugCommandError(format!(
                    "bad breakpoint `{spec}`: `{line}` is not a line number"
                ))
            })?;
            self.resolve_line(file, line)?
        } else if !spec.is_empty() {
            self.resolve_function(spec)?
        } else {
            return err("break needs a location: FILE:LINE, FUNCTION or *OFFSET");
        };
        let b = Breakpoint {
            id: self.next_id,
            spec: spec.to_string(),
            addresses,
        };
        self.next_id += 1;
        lock(&self.shared).breakpoints.push(b.clone());
        Ok(b)
    }

    /// Deletes breakpoint `id`, or all with `None`.
    pub fn delete_breakpoint(&mut self, id: Option<u32>) -> Result<(), DebugCommandError> {
        let mut shared = lock(&self.shared);
        match id {
            None => shared.breakpoints.clear(),
            Some(id) => {
                let before = shared.breakpoints.len();
                shared.breakpoints.retain(|b| b.id != id);
                if shared.breakpoints.len() == before {
                    return err(format!("no breakpoint number {id}"));
                }
            }
        }
        Ok(())
    }

    fn resolve_offset(&self, text: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        let t = text.trim();
        let offset = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
        .ok_or_else(|| DebugCommandError(format!("bad breakpoint `*{text}`: not an offset")))?;
        let (module, function) = match self.ctx.frames().first() {
            Some(f) => (f.frame.module.clone(), f.frame.ordinal.unwrap_or(0)),
            None => self.entry_address()?,
        };
        let m = self.module(&module)?;
        let starts = instruction_offsets(m, function);
        if !starts.contains(&offset) {
            return err(format!(
                "bad breakpoint `*{text}`: no instruction starts at offset {offset:#x} of {module}.{}",
                function_name(m, function).unwrap_or_else(|| format!("fn{function}"))
            ));
        }
        Ok(vec![CodeAddress {
            module,
            function,
            offset,
        }])
    }

    fn entry_address(&self) -> Result<(String, u32), DebugCommandError> {
        let (module, local) = self
            .entry
            .name()
            .rsplit_once('.')
            .unwrap_or(("", self.entry.name()));
        let m = self.module(module)?;
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
        Ok((module.to_string(), e.internal_ordinal as u32))
    }

    fn module(&self, name: &str) -> Result<&Module, DebugCommandError> {
        self.ctx
            .bytecode_modules()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m)
            .ok_or_else(|| DebugCommandError(format!("no bytecode module `{name}`")))
    }

    fn resolve_function(&self, name: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        let (want_module, local) = match name.rsplit_once('.') {
            Some((m, f)) => (Some(m), f),
            None => (None, name),
        };
        let mut found = Vec::new();
        for (mname, m) in self.ctx.bytecode_modules() {
            if want_module.is_some_and(|w| w != mname) {
                continue;
            }
            for ordinal in 0..m.function_count() as u32 {
                if function_name(m, ordinal).as_deref() == Some(local) {
                    if let Some(&offset) = instruction_offsets(m, ordinal).first() {
                        found.push(CodeAddress {
                            module: mname.to_string(),
                            function: ordinal,
                            offset,
                        });
                    }
                }
            }
        }
        if found.is_empty() {
            return err(format!("bad breakpoint `{name}`: no function of that name"));
        }
        Ok(found)
    }

    fn resolve_line(&self, file: &str, line: i32) -> Result<Vec<CodeAddress>, DebugCommandError> {
        let mut found = Vec::new();
        let mut any_debug_info = false;
        for (mname, m) in self.ctx.bytecode_modules() {
            if m.debug_database().is_none() {
                continue;
            }
            any_debug_info = true;
            for ordinal in 0..m.function_count() as u32 {
                let table = LineTable::build(m, ordinal);
                for (&offset, pos) in &table.starts {
                    if pos.line == line && file_matches(&pos.file, file) {
                        found.push(CodeAddress {
                            module: mname.to_string(),
                            function: ordinal,
                            offset,
                        });
                    }
                }
            }
        }
        if !any_debug_info {
            return err(format!(
                "bad breakpoint `{file}:{line}`: no module has debug information (use FUNCTION or *OFFSET)"
            ));
        }
        if found.is_empty() {
            return err(format!(
                "bad breakpoint `{file}:{line}`: no code at that line"
            ));
        }
        Ok(found)
    }

    fn go(&mut self, mode: Mode) -> Result<Stop, DebugCommandError> {
        lock(&self.shared).mode = mode;
        let mut state = if self.running {
            self.ctx.resume()
        } else {
            self.running = true;
            self.ctx.begin_call(&self.entry, &self.args)
        };
        // A yield is not a stop: resume at once, in the same mode, as often
        // as the program yields (a loop, so any number of yields works).
        while let Ok(CallState::Yielded) = state {
            state = self.ctx.resume();
        }
        lock(&self.shared).mode = Mode::Run;
        Ok(match state {
            Ok(CallState::Paused) => match lock(&self.shared).hit.take() {
                Some(id) => Stop::Breakpoint(id),
                None => Stop::Step,
            },
            Ok(CallState::Yielded) => unreachable!("yields are resumed above"),
            Ok(CallState::Done(values)) => {
                self.running = false;
                Stop::Finished(values)
            }
            Err(trap) => {
                self.running = false;
                Stop::Trapped(trap)
            }
        })
    }

    /// Starts the program (from the beginning; a running one is abandoned).
    pub fn run(&mut self) -> Result<Stop, DebugCommandError> {
        if self.running {
            self.ctx.abandon();
            self.running = false;
        }
        self.go(Mode::Run)
    }

    fn require_running(&self) -> Result<(), DebugCommandError> {
        if self.running {
            Ok(())
        } else {
            err("the program is not being run (use `run`)")
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

    fn line_mode(&self, over: bool) -> Mode {
        let frames = self.ctx.frames();
        let depth = frames.len();
        let (from, from_offset) = match self.current() {
            Some((a, pos)) => (pos.map(|p| (p.file, p.line)), a.offset),
            None => (None, 0),
        };
        Mode::Line {
            max_depth: if over { depth } else { usize::MAX },
            from,
            from_offset,
            from_depth: depth,
        }
    }

    /// Runs to the start of another source line, entering calls.
    pub fn step(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let mode = self.line_mode(false);
        self.go(mode)
    }

    /// `next`: runs to the start of another source line in this frame (or a
    /// caller), stepping over calls.
    pub fn step_over(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let mode = self.line_mode(true);
        self.go(mode)
    }

    /// Runs until the current function returns.
    pub fn finish(&mut self) -> Result<Stop, DebugCommandError> {
        self.require_running()?;
        let depth = self.ctx.frames().len();
        self.go(Mode::Finish { depth })
    }

    /// The frames of the stopped program, innermost first.
    pub fn frames(&self) -> Vec<FrameInfo> {
        if self.running {
            self.ctx.frames()
        } else {
            Vec::new()
        }
    }

    /// Where the program is stopped: address, and source position when the
    /// module has debug information.
    pub fn current(&self) -> Option<(CodeAddress, Option<SourcePosition>)> {
        let top = self.frames().into_iter().next()?;
        let address = CodeAddress {
            module: top.frame.module.clone(),
            function: top.frame.ordinal?,
            offset: top.frame.offset?,
        };
        let pos = self.position_of(&address);
        Some((address, pos))
    }

    /// The source position of an address, if known.
    pub fn position_of(&self, a: &CodeAddress) -> Option<SourcePosition> {
        let m = self.module(&a.module).ok()?;
        LineTable::build(m, a.function).position(a.offset).cloned()
    }

    /// The function name shown for an address.
    pub fn function_name(&self, a: &CodeAddress) -> String {
        self.module(&a.module)
            .ok()
            .and_then(|m| function_name(m, a.function))
            .unwrap_or_else(|| format!("fn{}", a.function))
    }

    /// The register types of a function, inferred from how its
    /// instructions use each i32 register (i32, i64 pair, f32, f64 pair).
    pub fn register_banks(&self, module: &str, function: u32) -> BTreeMap<u16, Bank> {
        let mut banks = BTreeMap::new();
        let Ok(m) = self.module(module) else {
            return banks;
        };
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
        banks
    }
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
