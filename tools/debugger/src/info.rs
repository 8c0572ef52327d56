//! [`DebugInfo`]: what the debugger reads of the program's modules alone
//! (functions, instructions, line tables, disassembly, address numbers),
//! apart from the running context, so that another thread can read it
//! while the program runs (a front end answering requests inside a long
//! host call).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use irvm::bytecode::decode::{Decoder, Operand};
use irvm::bytecode::isa::{
    Access, Bank, Field, Opcode, I32_INDEX_MASK, REF_BANK_BIT, REF_INDEX_MASK,
};
use irvm::loader::SourcePosition;
use irvm::Module;

use super::{
    argument_layout, banks_of, err, function_name, instruction_offsets, param_kinds, CodeAddress,
    DebugCommandError, LineTable, RegisterRef, REFERENCE_OFFSET_BIAS,
};

/// The bytecode modules of a program, read-only and shared: cloning is
/// cheap, and it can be sent to and used on any thread.
///
/// A module is known by its place in the context (`module_index`, as
/// [`irvm::FrameInfo::module_index`] gives it), not by its name alone:
/// a later module registered under a name shadows the earlier one for
/// lookups by name, but the earlier one's code still runs (the modules
/// registered in between link to it), and its frames and breakpoints
/// use its own debug information.
#[derive(Clone)]
pub struct DebugInfo {
    /// (place in the context, registered name, module), in registration
    /// order.
    modules: Arc<[(usize, String, Module)]>,
}

impl DebugInfo {
    /// The debug side of these modules: each with its place in the context
    /// ([`irvm::Context::bytecode_modules`] lists them so) and registered
    /// name, in the context's order ([`DebugInfo::address_reference`]
    /// numbers them so).
    pub fn new(modules: Vec<(usize, String, Module)>) -> DebugInfo {
        DebugInfo {
            modules: modules.into(),
        }
    }

    /// Every module, shadowed ones included: place in the context, name
    /// and module.
    pub(crate) fn modules(&self) -> impl Iterator<Item = (usize, &str, &Module)> {
        self.modules.iter().map(|(i, n, m)| (*i, n.as_str(), m))
    }

    /// The module a name reaches, with its place in the context: of
    /// several registered under one name, the last, as the context
    /// resolves every lookup by name (imports, calls, exports).
    pub(crate) fn module(&self, name: &str) -> Result<(usize, &Module), DebugCommandError> {
        self.modules
            .iter()
            .rev()
            .find(|(_, n, _)| n == name)
            .map(|(i, _, m)| (*i, m))
            .ok_or_else(|| DebugCommandError(format!("no bytecode module `{name}`")))
    }

    /// The module at place `index` in the context.
    pub(crate) fn module_at(&self, index: usize) -> Result<&Module, DebugCommandError> {
        self.modules
            .iter()
            .find(|(i, _, _)| *i == index)
            .map(|(_, _, m)| m)
            .ok_or_else(|| DebugCommandError(format!("no bytecode module #{index}")))
    }

    /// The first instruction of every function called `name`
    /// (`MODULE.FUNCTION` or `FUNCTION`).
    pub fn resolve_function(&self, name: &str) -> Result<Vec<CodeAddress>, DebugCommandError> {
        let (want_module, local) = match name.rsplit_once('.') {
            Some((m, f)) => (Some(m), f),
            None => (None, name),
        };
        let mut found = Vec::new();
        for (index, mname, m) in self.modules() {
            if want_module.is_some_and(|w| w != mname) {
                continue;
            }
            for ordinal in 0..m.function_count() as u32 {
                if function_name(m, ordinal).as_deref() == Some(local) {
                    if let Some(&offset) = instruction_offsets(m, ordinal).first() {
                        found.push(CodeAddress {
                            module: mname.to_string(),
                            module_index: index,
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

    /// Every line start of the files `wanted` admits, by line; and whether
    /// any module has debug information.
    pub(crate) fn line_starts_where(
        &self,
        wanted: impl Fn(&str) -> bool,
    ) -> (bool, BTreeMap<i32, Vec<CodeAddress>>) {
        let mut lines: BTreeMap<i32, Vec<CodeAddress>> = BTreeMap::new();
        let mut any_debug_info = false;
        for (index, mname, m) in self.modules() {
            if m.debug_database().is_none() {
                continue;
            }
            any_debug_info = true;
            for ordinal in 0..m.function_count() as u32 {
                let table = LineTable::build(m, ordinal);
                for (&offset, pos) in &table.starts {
                    if wanted(&pos.file) {
                        lines.entry(pos.line).or_default().push(CodeAddress {
                            module: mname.to_string(),
                            module_index: index,
                            function: ordinal,
                            offset,
                        });
                    }
                }
            }
        }
        (any_debug_info, lines)
    }

    /// The source files named in the modules' debug information.
    pub fn source_files(&self) -> BTreeSet<String> {
        let mut files = BTreeSet::new();
        for (_, _, m) in self.modules() {
            for ordinal in 0..m.function_count() as u32 {
                for pos in LineTable::build(m, ordinal).starts.values() {
                    files.insert(pos.file.clone());
                }
            }
        }
        files
    }

    /// The lines of the files `files` (as recorded) where code starts.
    pub fn lines_with_code_in(&self, files: &BTreeSet<String>) -> BTreeSet<i32> {
        self.line_starts_where(|f| files.contains(f))
            .1
            .into_keys()
            .collect()
    }

    /// The bytecode modules by registered name, in registration order,
    /// each with whether it has debug information.
    pub fn module_list(&self) -> Vec<(String, bool)> {
        self.modules
            .iter()
            .map(|(_, n, m)| (n.to_string(), m.debug_database().is_some()))
            .collect()
    }

    /// The names of the bytecode functions.
    pub fn function_names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for (_, _, m) in self.modules() {
            for ordinal in 0..m.function_count() as u32 {
                if let Some(n) = function_name(m, ordinal) {
                    names.insert(n);
                }
            }
        }
        names
    }

    /// The source position of an address, if known.
    pub fn position_of(&self, a: &CodeAddress) -> Option<SourcePosition> {
        let m = self.module_at(a.module_index).ok()?;
        LineTable::build(m, a.function).position(a.offset).cloned()
    }

    /// The function name shown for an address.
    pub fn function_name(&self, a: &CodeAddress) -> String {
        self.module_at(a.module_index)
            .ok()
            .and_then(|m| function_name(m, a.function))
            .unwrap_or_else(|| format!("fn{}", a.function))
    }

    /// The register types of a function, inferred from how its
    /// instructions use each i32 register (i32, i64 pair, f32, f64 pair).
    pub fn register_banks(&self, module: usize, function: u32) -> BTreeMap<u16, Bank> {
        match self.module_at(module) {
            Ok(m) => banks_of(m, function),
            Err(_) => BTreeMap::new(),
        }
    }

    /// The registers the calling convention puts a function's arguments
    /// in, in order.
    pub fn argument_registers(&self, module: usize, function: u32) -> Vec<RegisterRef> {
        match self.module_at(module) {
            Ok(m) => argument_layout(&param_kinds(m, function))
                .into_iter()
                .map(|(_, r)| r)
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// A function's instructions: offset and text.
    pub fn disassemble(
        &self,
        module: usize,
        function: u32,
    ) -> Result<Vec<(u32, String)>, DebugCommandError> {
        let m = self.module_at(module)?;
        irvm::bytecode::disasm::Disassembler::new(m)
            .function_lines(function as usize, None)
            .map_err(|e| DebugCommandError(e.to_string()))
    }

    /// The text of the instruction at an address.
    pub fn instruction_text(&self, a: &CodeAddress) -> Option<String> {
        let m = self.module_at(a.module_index).ok()?;
        irvm::bytecode::disasm::Disassembler::new(m)
            .instruction_text(a.function as usize, a.offset, None)
            .ok()
    }

    /// A number for an address (DAP's memory references): the module's
    /// place among the bytecode modules (top byte), the function (next 24
    /// bits) and the offset plus [`REFERENCE_OFFSET_BIAS`] (low 32 bits),
    /// so that the numbers just before and after a function's code (a
    /// disassembly view's filler) still name the function.
    pub fn address_reference(&self, a: &CodeAddress) -> Option<u64> {
        let index = self
            .modules
            .iter()
            .position(|(i, _, _)| *i == a.module_index)?;
        if index > 0xFF || a.function > 0xFF_FFFF || u64::from(a.offset) >= REFERENCE_OFFSET_BIAS {
            return None;
        }
        Some(
            (index as u64) << 56
                | (a.function as u64) << 32
                | (u64::from(a.offset) + REFERENCE_OFFSET_BIAS),
        )
    }

    /// The function a number [`DebugInfo::address_reference`] made (or one
    /// near it) falls in, and its offset there (negative before the code,
    /// possibly past its end): `None` when it names no function.
    pub fn reference_place(&self, r: u64) -> Option<(CodeAddress, i64)> {
        let index = (r >> 56) as usize;
        let (module_index, name, m) = self.modules.get(index)?;
        let function = ((r >> 32) & 0xFF_FFFF) as u32;
        if function as usize >= m.function_count() {
            return None;
        }
        let offset = (r & 0xFFFF_FFFF) as i64 - REFERENCE_OFFSET_BIAS as i64;
        let address = CodeAddress {
            module: name.to_string(),
            module_index: *module_index,
            function,
            offset: u32::try_from(offset).unwrap_or(0),
        };
        Some((address, offset))
    }

    /// The address of a number [`DebugInfo::address_reference`] made.
    pub fn address_from_reference(&self, r: u64) -> Option<CodeAddress> {
        match self.reference_place(r)? {
            (a, offset) if offset >= 0 => Some(a),
            _ => None,
        }
    }

    /// The offsets of a function's instructions (block markers left out)
    /// and the length of its code.
    pub fn instruction_offsets(&self, module: usize, function: u32) -> (Vec<u32>, u32) {
        let Ok(m) = self.module_at(module) else {
            return (Vec::new(), 0);
        };
        let length = m
            .function_bytecode(function as usize)
            .map_or(0, |c| u32::try_from(c.len()).unwrap_or(u32::MAX));
        (instruction_offsets(m, function), length)
    }

    /// The registers each instruction of a function writes (its results),
    /// by instruction offset, in order: i64 and f64 results as pairs.
    pub fn register_writes(&self, module: usize, function: u32) -> Vec<(u32, Vec<RegisterRef>)> {
        match self.module_at(module) {
            Ok(m) => register_uses(m, function, Access::Write),
            Err(_) => Vec::new(),
        }
    }

    /// The registers each instruction of a function reads (its operands,
    /// call arguments and branch operands), by instruction offset, in
    /// order: what read and access watchpoints watch for.
    pub fn register_reads(&self, module: usize, function: u32) -> Vec<(u32, Vec<RegisterRef>)> {
        match self.module_at(module) {
            Ok(m) => register_uses(m, function, Access::Read),
            Err(_) => Vec::new(),
        }
    }

    /// The source position of each instruction of a function that has one
    /// (one pass over its line table, for front ends that need many).
    pub fn instruction_positions(
        &self,
        module: usize,
        function: u32,
    ) -> BTreeMap<u32, SourcePosition> {
        let Ok(m) = self.module_at(module) else {
            return BTreeMap::new();
        };
        let table = LineTable::build(m, function);
        instruction_offsets(m, function)
            .into_iter()
            .filter_map(|o| Some((o, table.position(o)?.clone())))
            .collect()
    }

    /// Whether a function has source positions (debug information).
    pub fn has_positions(&self, module: usize, function: u32) -> bool {
        self.module_at(module)
            .is_ok_and(|m| !LineTable::build(m, function).positions.is_empty())
    }
}

/// The registers one instruction reads: those it reads whichever way it
/// goes, and a branch's block-argument sources, which it reads only on the
/// way it goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct InstructionReads {
    /// Read whichever way the instruction goes (operands, call arguments,
    /// a branch's condition or index).
    pub always: Vec<RegisterRef>,
    /// Each way's block-argument sources, in operand order: `cond_br`'s
    /// true then false target; `br_table`'s default then case 0, 1, ...;
    /// the one target of `br`, `yield` and the debug branches.
    pub ways: Vec<Vec<RegisterRef>>,
    /// What picks the way, when there are several.
    pub chooser: Option<WayChooser>,
    /// Written whichever way the instruction goes: its results (a call's
    /// when its callee returns), from the instruction table's operand
    /// roles.
    pub writes: Vec<RegisterRef>,
    /// Each way's block-argument destinations, in the order of `ways`:
    /// written as the branch lands, on the way it goes only.
    pub way_writes: Vec<Vec<RegisterRef>>,
}

/// The i32 register whose value picks the way a branch goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WayChooser {
    /// `cond_br`: non-zero the first way, zero the second.
    Condition(u16),
    /// `br_table`: a case's index (0 to cases - 1) its case's way, any
    /// other value (as a signed i32) the default's.
    Index(u16),
}

impl InstructionReads {
    /// The registers it reads with these i32 registers (the way a branch
    /// goes is the one they pick).
    pub(crate) fn read_with(&self, i32s: &[u32]) -> Vec<RegisterRef> {
        Self::taken(&self.always, &self.ways, self.way(i32s))
    }

    /// The registers it writes with these i32 registers (a branch writes
    /// the block arguments of the way they pick): what access watchpoints
    /// see written, the same value or not, as gdb's `awatch` sees a store.
    pub(crate) fn written_with(&self, i32s: &[u32]) -> Vec<RegisterRef> {
        Self::taken(&self.writes, &self.way_writes, self.way(i32s))
    }

    /// `always`, and those of `ways` the way `way` goes (all of them when
    /// there is no choice).
    fn taken(
        always: &[RegisterRef],
        ways: &[Vec<RegisterRef>],
        way: Option<usize>,
    ) -> Vec<RegisterRef> {
        let mut out = always.to_vec();
        for (k, registers) in ways.iter().enumerate() {
            if way.is_none_or(|w| w == k) {
                out.extend(registers);
            }
        }
        out
    }

    /// The way these i32 registers pick, when there are several.
    fn way(&self, i32s: &[u32]) -> Option<usize> {
        let value = |r: u16| i32s.get(r as usize).copied().unwrap_or(0);
        match self.chooser {
            None => None,
            Some(WayChooser::Condition(r)) => Some(if value(r) != 0 { 0 } else { 1 }),
            Some(WayChooser::Index(r)) => {
                let cases = self.ways.len().saturating_sub(1);
                Some(match usize::try_from(value(r) as i32) {
                    Ok(k) if k < cases => k + 1,
                    _ => 0,
                })
            }
        }
    }

    /// Every register it may read, in operand order.
    fn all(self) -> Vec<RegisterRef> {
        let mut out = self.always;
        out.extend(self.ways.into_iter().flatten());
        out
    }
}

/// The registers each instruction of function `function` of `m` reads
/// ([`InstructionReads`]: operands, call arguments, and branch operands by
/// the way the branch goes), by instruction offset, from the instruction
/// table's operand roles: i64 and f64 registers as pairs.
pub(crate) fn instruction_reads(m: &Module, function: u32) -> Vec<(u32, InstructionReads)> {
    let Some(code) = m.function_bytecode(function as usize) else {
        return Vec::new();
    };
    let register = register_of(banks_of(m, function));
    let mut out = Vec::new();
    for inst in Decoder::new(code, 0, code.len()).map_while(Result::ok) {
        let mut reads = InstructionReads::default();
        for (field, operand) in inst.op.info().fields.iter().zip(&inst.operands) {
            match (field, operand) {
                (Field::Reg(bank, Access::Read), Operand::Reg(r)) => {
                    reads.always.push(register(*r, Some(*bank)));
                }
                (Field::RefMove(Access::Read), Operand::Reg(r)) => {
                    reads.always.push(register(*r, Some(Bank::Ref)));
                }
                (Field::Reg(bank, Access::Write), Operand::Reg(r)) => {
                    reads.writes.push(register(*r, Some(*bank)));
                }
                (Field::RefMove(Access::Write), Operand::Reg(r)) => {
                    reads.writes.push(register(*r, Some(Bank::Ref)));
                }
                (Field::Operands(_), Operand::Regs(list)) => {
                    reads.always.extend(list.iter().map(|r| register(r, None)));
                }
                (Field::Results(_), Operand::Regs(list)) => {
                    reads.writes.extend(list.iter().map(|r| register(r, None)));
                }
                // A branch reads the sources of its block arguments on the
                // way it goes (the destinations are written as it lands:
                // the next instruction's values, which `watch` sees
                // changed).
                (Field::BranchOperands, Operand::Remap(remap)) => {
                    reads
                        .ways
                        .push(remap.iter().map(|(from, _)| register(from, None)).collect());
                    reads
                        .way_writes
                        .push(remap.iter().map(|(_, to)| register(to, None)).collect());
                }
                (Field::BranchTableCases, Operand::Cases(cases)) => {
                    for (_, remap) in cases {
                        reads
                            .ways
                            .push(remap.iter().map(|(from, _)| register(from, None)).collect());
                        reads
                            .way_writes
                            .push(remap.iter().map(|(_, to)| register(to, None)).collect());
                    }
                }
                _ => {}
            }
        }
        let chooser = match (inst.op, inst.operands.first()) {
            (Opcode::CondBr, Some(Operand::Reg(r))) => {
                Some(WayChooser::Condition(r & I32_INDEX_MASK))
            }
            (Opcode::BrTable, Some(Operand::Reg(r))) => Some(WayChooser::Index(r & I32_INDEX_MASK)),
            _ => None,
        };
        reads.chooser = chooser;
        let any = |v: &Vec<Vec<RegisterRef>>| v.iter().any(|w| !w.is_empty());
        if !reads.always.is_empty()
            || any(&reads.ways)
            || !reads.writes.is_empty()
            || any(&reads.way_writes)
        {
            out.push((inst.offset as u32, reads));
        }
    }
    out
}

/// How a register operand of a function with these register banks is
/// named: by its bank when the operand's field gives it, else by the bank
/// the function uses it as.
fn register_of(banks: BTreeMap<u16, Bank>) -> impl Fn(u16, Option<Bank>) -> RegisterRef {
    move |r: u16, bank: Option<Bank>| {
        if r & REF_BANK_BIT != 0 || bank == Some(Bank::Ref) {
            return RegisterRef::Ref(r & REF_INDEX_MASK);
        }
        let k = r & I32_INDEX_MASK;
        match bank.or_else(|| banks.get(&k).copied()) {
            Some(Bank::I64 | Bank::F64) => RegisterRef::Pair(k),
            _ => RegisterRef::I32(k),
        }
    }
}

/// The registers each instruction of function `function` of `m` reads
/// (`Access::Read`: its operands, call arguments and branch operands, every
/// way a branch may go) or writes (`Access::Write`: its results), by
/// instruction offset, from the instruction table's operand roles: i64 and
/// f64 registers as pairs.
pub(crate) fn register_uses(
    m: &Module,
    function: u32,
    access: Access,
) -> Vec<(u32, Vec<RegisterRef>)> {
    if access == Access::Read {
        return instruction_reads(m, function)
            .into_iter()
            .map(|(offset, reads)| (offset, reads.all()))
            .filter(|(_, read)| !read.is_empty())
            .collect();
    }
    let Some(code) = m.function_bytecode(function as usize) else {
        return Vec::new();
    };
    let register = register_of(banks_of(m, function));
    let mut out = Vec::new();
    for inst in Decoder::new(code, 0, code.len()).map_while(Result::ok) {
        let mut used = Vec::new();
        for (field, operand) in inst.op.info().fields.iter().zip(&inst.operands) {
            match (field, operand) {
                (Field::Reg(bank, a), Operand::Reg(r)) if *a == access => {
                    used.push(register(*r, Some(*bank)));
                }
                (Field::RefMove(a), Operand::Reg(r)) if *a == access => {
                    used.push(register(*r, Some(Bank::Ref)));
                }
                (Field::Results(_), Operand::Regs(list)) => {
                    used.extend(list.iter().map(|r| register(r, None)));
                }
                _ => {}
            }
        }
        if !used.is_empty() {
            out.push((inst.offset as u32, used));
        }
    }
    out
}
