//! [`BreakpointTable`]: the debugger's breakpoints, which any thread can
//! edit, even while the program runs (a front end answering a request
//! inside a long host call). A change takes effect when the command in
//! progress next starts running the program: at once for a stopped one,
//! after an interrupt ([`crate::PauseHandle::interrupt`]) and
//! [`crate::Debugger::resume`] for a running one.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::{
    err, file_matches, instruction_offsets, lock, parse_line, Breakpoint, BreakpointRequest,
    CodeAddress, DebugCommandError, DebugInfo, Expr, HitCondition, LogMessage, Shared, Watchpoint,
};

/// The breakpoints of a [`crate::Debugger`] ([`crate::Debugger::breakpoint_table`]),
/// resolved against its [`DebugInfo`]. Cloning is cheap; clones edit the
/// same breakpoints.
#[derive(Clone)]
pub struct BreakpointTable {
    pub(crate) info: DebugInfo,
    pub(crate) shared: Arc<Mutex<Shared>>,
}

impl BreakpointTable {
    /// The breakpoints, in creation order.
    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        lock(&self.shared).breakpoints.clone()
    }

    /// Sets a breakpoint from a spec that needs no stopped program:
    /// `FILE:LINE` (every function with code on that line of a file whose
    /// name ends with FILE, or on the next line that has code) or
    /// `FUNCTION` (its first instruction).
    pub fn add_breakpoint(&self, req: BreakpointRequest) -> Result<Breakpoint, DebugCommandError> {
        let spec = req.spec.trim();
        if spec.is_empty() {
            return err("break needs a location: FILE:LINE or FUNCTION");
        }
        if spec.starts_with('*') || spec.bytes().all(|b| b.is_ascii_digit()) {
            return err(format!(
                "bad breakpoint `{spec}`: an offset or a bare line needs a stopped program (use FILE:LINE or FUNCTION)"
            ));
        }
        match spec.rsplit_once(':') {
            Some((file, line)) => {
                let line = parse_line(spec, line)?;
                let (addresses, at) = self.resolve_line(file, line, &format!("file \"{file}\""))?;
                self.add_resolved(&req, addresses, Some(at))
            }
            None => {
                let addresses = self.info.resolve_function(spec)?;
                self.add_resolved(&req, addresses, None)
            }
        }
    }

    /// The addresses of `file`'s `line` (or the next line with code), and
    /// that line. A line before the first (0 or negative) or past the last
    /// with code is gdb's `No line N in the current file.` (`in file
    /// "FILE"`): `named` is how that message names the file.
    pub(crate) fn resolve_line(
        &self,
        file: &str,
        line: i32,
        named: &str,
    ) -> Result<(Vec<CodeAddress>, i32), DebugCommandError> {
        let (any_debug_info, lines) = self
            .info
            .line_starts_where(|recorded| file_matches(recorded, file));
        if !any_debug_info {
            return err(format!(
                "bad breakpoint `{file}:{line}`: no module has debug information (use FUNCTION or *OFFSET)"
            ));
        }
        if lines.is_empty() {
            // gdb's words for a file it has no line table of.
            return err(format!("No source file named {file}."));
        }
        match lines.range(line..).next() {
            Some((&l, addresses)) if line > 0 => Ok((addresses.clone(), l)),
            _ => err(format!("No line {line} in {named}.")),
        }
    }

    /// Sets a breakpoint at `line` (or the next line with code) of the
    /// source files `files`, named exactly as the debug information records
    /// them ([`DebugInfo::source_files`]); `req.spec` is only its label.
    /// Front ends that know which file the user means (DAP's absolute
    /// paths) use this instead of `FILE:LINE`'s suffix match.
    pub fn add_line_breakpoint(
        &self,
        files: &BTreeSet<String>,
        line: i32,
        req: BreakpointRequest,
    ) -> Result<Breakpoint, DebugCommandError> {
        let spec = req.spec.trim();
        let (any_debug_info, lines) = self.info.line_starts_where(|f| files.contains(f));
        if !any_debug_info {
            return err(format!(
                "bad breakpoint `{spec}`: no module has debug information (use FUNCTION or *OFFSET)"
            ));
        }
        if lines.is_empty() {
            return err(format!(
                "bad breakpoint `{spec}`: the debug information has no code from this file"
            ));
        }
        let Some((&at, addresses)) = lines.range(line..).next() else {
            return err(format!(
                "bad breakpoint `{spec}`: no code at or after line {line}"
            ));
        };
        let addresses = addresses.clone();
        self.add_resolved(&req, addresses, Some(at))
    }

    /// Sets a breakpoint at these addresses (the line they resolved to,
    /// if any).
    pub(crate) fn add_resolved(
        &self,
        req: &BreakpointRequest,
        addresses: Vec<CodeAddress>,
        line: Option<i32>,
    ) -> Result<Breakpoint, DebugCommandError> {
        let condition = req
            .condition
            .as_deref()
            .filter(|c| !c.trim().is_empty())
            .map(Expr::parse)
            .transpose()?;
        let hit_condition = req
            .hit_condition
            .as_deref()
            .filter(|c| !c.trim().is_empty())
            .map(HitCondition::parse)
            .transpose()?;
        Ok(self.insert(Breakpoint {
            id: 0,
            spec: req.spec.trim().to_string(),
            addresses,
            line,
            enabled: true,
            temporary: req.temporary,
            condition,
            hit_condition,
            ignore_count: 0,
            hits: 0,
            log_message: None,
        }))
    }

    /// Sets a breakpoint at one instruction (DAP's instruction
    /// breakpoints).
    pub fn add_address_breakpoint(
        &self,
        address: CodeAddress,
        condition: Option<&str>,
    ) -> Result<Breakpoint, DebugCommandError> {
        let m = self.info.module_at(address.module_index)?;
        if !instruction_offsets(m, address.function).contains(&address.offset) {
            return err(format!(
                "no instruction starts at offset {:#x} of {}.{}",
                address.offset,
                address.module,
                self.info.function_name(&address)
            ));
        }
        let condition = condition
            .filter(|c| !c.trim().is_empty())
            .map(Expr::parse)
            .transpose()?;
        let spec = format!(
            "*{}.{}+{:#x}",
            address.module,
            self.info.function_name(&address),
            address.offset
        );
        Ok(self.insert(Breakpoint {
            id: 0,
            spec,
            addresses: vec![address],
            line: None,
            enabled: true,
            temporary: false,
            condition,
            hit_condition: None,
            ignore_count: 0,
            hits: 0,
            log_message: None,
        }))
    }

    fn insert(&self, mut b: Breakpoint) -> Breakpoint {
        let mut shared = lock(&self.shared);
        shared.next_id += 1;
        b.id = shared.next_id;
        shared.breakpoints.push(b.clone());
        b
    }

    pub(crate) fn with_breakpoint<T>(
        &self,
        id: u32,
        f: impl FnOnce(&mut Breakpoint) -> T,
    ) -> Result<T, DebugCommandError> {
        let mut shared = lock(&self.shared);
        match shared.breakpoints.iter_mut().find(|b| b.id == id) {
            Some(b) => Ok(f(b)),
            None => err(format!("no breakpoint number {id}")),
        }
    }

    /// Deletes breakpoint or watchpoint `id`, or all of both with `None`.
    pub fn delete_breakpoint(&self, id: Option<u32>) -> Result<(), DebugCommandError> {
        let mut shared = lock(&self.shared);
        match id {
            None => {
                shared.breakpoints.clear();
                shared.watchpoints.clear();
            }
            Some(id) => {
                let before = shared.breakpoints.len() + shared.watchpoints.len();
                shared.breakpoints.retain(|b| b.id != id);
                shared.watchpoints.retain(|w| w.id != id);
                if shared.breakpoints.len() + shared.watchpoints.len() == before {
                    return err(format!("no breakpoint number {id}"));
                }
            }
        }
        Ok(())
    }

    /// Sets (or with `None`/empty removes) the condition of breakpoint or
    /// watchpoint `id`.
    pub fn set_condition(&self, id: u32, condition: Option<&str>) -> Result<(), DebugCommandError> {
        let parsed = condition
            .filter(|c| !c.trim().is_empty())
            .map(Expr::parse)
            .transpose()?;
        if let Some(w) = lock(&self.shared)
            .watchpoints
            .iter_mut()
            .find(|w| w.id == id)
        {
            w.condition = parsed;
            return Ok(());
        }
        self.with_breakpoint(id, |b| b.condition = parsed)
    }

    /// The watchpoints, in creation order.
    pub fn watchpoints(&self) -> Vec<Watchpoint> {
        lock(&self.shared).watchpoints.clone()
    }

    /// Makes breakpoint `id` a logpoint with this message ([`LogMessage`]),
    /// or (`None`) a breakpoint that stops again.
    pub fn set_log_message(&self, id: u32, message: Option<&str>) -> Result<(), DebugCommandError> {
        let parsed = message.map(LogMessage::parse).transpose()?;
        self.with_breakpoint(id, |b| b.log_message = parsed)
    }
}
