//! Watching and bounding execution: the [`Observer`] hook that the debugger
//! (`irvm dbg`) and the tracer (`irvm run --trace-execution`) attach to a
//! [`crate::Context`], the [`ExecView`] they see before each instruction,
//! and the [`InterruptHandle`] an embedder can trigger from another thread.
//!
//! The interpreter has two compiled copies of its loop (see
//! `vm/exec/dispatch.rs`): the plain one, used while no observer, fuel
//! budget, deadline or interrupt handle is set, has no per-instruction hook
//! at all; the hooked one charges fuel, polls the interrupt flag and the
//! deadline, and asks the observer whether to pause.

use std::io::Write as _;
use std::sync::Arc;

use crate::loader::Module;
use crate::values::Ref;

/// What the interpreter does after asking an [`Observer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Execute the instruction.
    Continue,
    /// Stop before the instruction: the call returns
    /// [`crate::CallState::Paused`], and [`crate::Context::resume`] executes
    /// it (without asking the observer about it again).
    Pause,
}

/// Called before every instruction while attached (see
/// [`crate::Context::set_observer`]).
pub trait Observer: Send {
    /// Looks at the instruction about to execute.
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control;
}

/// The state of the top frame just before an instruction executes.
pub struct ExecView<'a> {
    /// The frame's module.
    pub module: &'a Module,
    /// Its name in the context.
    pub module_name: &'a str,
    /// Its place in the context, in registration order (see
    /// [`crate::FrameInfo::module_index`]): of modules registered under
    /// one name, which one.
    pub module_index: usize,
    /// Internal function ordinal.
    pub function: u32,
    /// Bytecode offset of the instruction, relative to the function.
    pub offset: u32,
    /// Number of frames on the stack (1 = the entry function).
    pub depth: usize,
    pub(crate) i32s: &'a [u32],
    pub(crate) refs: &'a [Ref],
}

impl ExecView<'_> {
    /// The i32 register file of the frame (i64/f64 values span two slots).
    pub fn i32_registers(&self) -> &[u32] {
        self.i32s
    }

    /// The ref register file of the frame.
    pub fn ref_registers(&self) -> &[Ref] {
        self.refs
    }
}

/// Stops a running (or the next) invocation of a context from any thread:
/// the interpreter or compiled code ends it with `CANCELLED` at the next
/// loop back edge or call. Obtained from
/// [`crate::Context::interrupt_handle`].
#[derive(Clone, Debug)]
pub struct InterruptHandle {
    pub(crate) stop: Arc<crate::stop::StopWord>,
}

impl InterruptHandle {
    /// Requests the interruption.
    pub fn interrupt(&self) {
        self.stop.interrupt();
    }

    /// Whether an interruption is pending.
    pub fn is_interrupted(&self) -> bool {
        self.stop.interrupt_pending()
    }

    /// Withdraws an interruption no invocation has seen yet (one requested
    /// just as the call it was meant for returned), so that it does not
    /// cancel the next call; returns whether one was pending.
    pub fn clear(&self) -> bool {
        self.stop.take_interrupt()
    }
}

impl ExecView<'_> {
    /// The source position of the instruction, from the module's debug
    /// database (matched to the function by name, see `SourceMap`).
    pub fn source_position(&self) -> Option<crate::loader::SourcePosition> {
        let db = self.module.debug_database()?;
        let loc = db.location_index(self.function, self.offset, &[])?;
        db.source_position(loc)
    }

    /// The value of a register as a trace shows it: i32 and i64 as signed
    /// integers, f32/f64 like `%g`, refs by type and size.
    pub fn register_text(&self, bank: crate::bytecode::isa::Bank, reg: u16) -> Option<String> {
        use crate::bytecode::isa::{Bank, I32_INDEX_MASK, REF_INDEX_MASK};
        let slot = |k: usize| self.i32s.get(k).copied();
        let r = (reg & I32_INDEX_MASK) as usize;
        let wide = || Some(slot(r)? as u64 | (slot(r + 1)? as u64) << 32);
        Some(match bank {
            Bank::I32 => (slot(r)? as i32).to_string(),
            Bank::F32 => crate::number_text::format_g(f32::from_bits(slot(r)?) as f64),
            Bank::I64 => (wide()? as i64).to_string(),
            Bank::F64 => crate::number_text::format_g(f64::from_bits(wide()?)),
            Bank::Ref => self.refs.get((reg & REF_INDEX_MASK) as usize)?.to_string(),
        })
    }
}

/// An [`Observer`] that writes every executed instruction, with the values
/// of the registers it reads, in the format IREE's execution tracing uses:
/// `[module.function+0000001C]    %i0 = vm.add.i32 %i0(40), %i1(1)`,
/// followed by `  // file:line:col` when the source position is known.
pub struct ExecutionTracer {
    out: Box<dyn std::io::Write + Send>,
}

impl ExecutionTracer {
    /// A tracer writing to `out` (e.g. `std::io::stderr()`).
    pub fn new(out: Box<dyn std::io::Write + Send>) -> ExecutionTracer {
        ExecutionTracer { out }
    }
}

impl Observer for ExecutionTracer {
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control {
        let dis = crate::bytecode::disasm::Disassembler::new(view.module);
        let name = dis.function_name(view.function as usize);
        let values = |bank, reg| view.register_text(bank, reg);
        let text = dis
            .instruction_text(view.function as usize, view.offset, Some(&values))
            .unwrap_or_else(|e| format!("<{e}>"));
        let loc = view
            .source_position()
            .map(|p| format!("  // {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            self.out,
            "[{}.{}+{:08X}]    {text}{loc}",
            view.module_name, name, view.offset
        );
        Control::Continue
    }
}
