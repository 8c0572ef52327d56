//! The disassembler: prints a module as the VM assembly text that IREE 3.13's
//! `iree-dump-module --output=disassembly` prints, byte for byte.
//!
//! Everything instruction-specific comes from the ISA table ([`crate::bytecode::isa`]):
//! the decoder yields each instruction's operands in field order, each
//! [`Field`] kind says how its operand is written (register names by bank,
//! constants, attributes, block references, lists), and the instruction's
//! [`InstrInfo::syntax`](crate::bytecode::isa::InstrInfo::syntax) template places the
//! operands when they are not a plain list. The rest of this file is the
//! module layout around the instructions:
//!
//! ```text
//! vm.module @name version 0
//! vm.type i32                                   one per named type
//! vm.import @m.f cconv "0i_i"                   one per import
//! vm.rodata[0] = 48656C6C6F                     one per rodata segment
//!                                               (blank line if any above)
//! vm.export @f                                  per export of the function
//! vm.func @f(%i0: i32, %i2:3: i64) -> (i32) {   signature from the cconv
//! ^bb0:                                         at every block marker
//!   %i0 = vm.add.i32 %i0, %i0                   two-space indent
//! }
//! ```
//!
//! Register names: `%iN` (i32/f32), `%iN:M` (i64/f64 pairs), `%rN` (refs),
//! `%RN` (a ref operand whose value is moved); inside variadic lists and
//! branch remaps every i32-bank register is a single `%iN`.

use std::fmt::Write as _;

use crate::bytecode::decode::{
    decode_at, DecodeError, Decoder, Instruction, Operand, RemapList, U16List,
};
use crate::bytecode::isa::{
    Access, Bank, Field, Opcode, I32_INDEX_MASK, IMPORT_ORDINAL_BIT, REF_BANK_BIT, REF_INDEX_MASK,
    REF_MOVE_BIT,
};
use crate::loader::{DebugDatabase, ExportDecl, ImportDecl, Module};
use crate::number_text::format_g_precision;

mod assembly;
mod names;

/// Which functions [`Disassembler::write_module`] prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FunctionFilter<'a> {
    /// Every internal function.
    #[default]
    All,
    /// Only the internal function with this ordinal.
    Ordinal(u32),
    /// Only the function printed under this name (its first export name,
    /// else its debug name, else `fnN`).
    Name(&'a str),
}

impl FunctionFilter<'_> {
    /// Whether the function of `ordinal`, printed under `name`, is one
    /// this filter selects.
    pub fn selects(&self, ordinal: usize, name: &str) -> bool {
        match *self {
            FunctionFilter::All => true,
            FunctionFilter::Ordinal(wanted) => usize::try_from(wanted) == Ok(ordinal),
            FunctionFilter::Name(wanted) => name == wanted,
        }
    }
}

/// Which text a [`Disassembler`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextForm {
    /// What `iree-dump-module --output=disassembly` prints, byte for byte:
    /// strings verbatim (up to a NUL), functions under their first export's
    /// or debug name (two functions may share one), and only what the
    /// reader needs to follow the code.
    #[default]
    Disassembly,
    /// Text `irvm::asm::assemble` reads back into a module that loads
    /// and runs identically: every function under a symbol of its own
    /// (a shared name gets a `.N` suffix), symbols and strings quoted with
    /// MLIR's escapes, and every table the disassembly leaves out
    /// (requirements, attributes, dependencies, descriptors' register
    /// counts and features, external rodata, module state, the debug
    /// database) as directives; `irvm dump --output=assembly` prints it.
    Assembly,
}

/// How to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DisasmOptions<'a> {
    /// Prefix every line of a function body with `[XXXXXXXX]`, the bytecode
    /// offset of the instruction (iree-dump-module's `--bytecode_offsets`).
    pub bytecode_offsets: bool,
    /// Which functions to print.
    pub filter: FunctionFilter<'a>,
    /// Which text to write.
    pub form: TextForm,
}

/// Why a function could not be disassembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisasmError {
    /// The module has no function with this ordinal.
    #[error("function ordinal {ordinal} out of range (module has {count} functions)")]
    NoSuchFunction {
        /// The requested ordinal.
        ordinal: usize,
        /// Number of internal functions.
        count: usize,
    },
    /// The bytecode does not decode.
    #[error("function @{function}: {source}")]
    Decode {
        /// The function's printed name.
        function: String,
        /// The decoder's error.
        #[source]
        source: DecodeError,
    },
    /// The number of block markers differs from the descriptor's count.
    #[error(
        "function @{function}: invalid descriptor block count {declared}; found {found} blocks"
    )]
    BlockCount {
        /// The function's printed name.
        function: String,
        /// `block_count` of the function descriptor.
        declared: u16,
        /// Block markers found in the bytecode.
        found: usize,
    },
    /// A block marker is the last byte of the function.
    #[error("function @{function}: block at pc {offset:08X} is at the end of the bytecode")]
    BlockAtEnd {
        /// The function's printed name.
        function: String,
        /// Offset of the marker.
        offset: usize,
    },
    /// A branch names an offset that is not a block marker.
    #[error(
        "function @{function}: instruction at {offset:08X} branches to {target:08X}, which is not a block"
    )]
    UndefinedBlock {
        /// The function's printed name.
        function: String,
        /// Offset of the branching instruction.
        offset: usize,
        /// The branch target.
        target: u32,
    },
    /// A type operand names no entry of the type table.
    #[error(
        "function @{function}: instruction at {offset:08X} uses type {type_id}, but the module has {count} types"
    )]
    TypeOutOfRange {
        /// The function's printed name.
        function: String,
        /// Offset of the instruction.
        offset: usize,
        /// The type ordinal.
        type_id: u32,
        /// Size of the type table.
        count: usize,
    },
    /// A rodata operand names no segment.
    #[error(
        "function @{function}: instruction at {offset:08X} uses rodata {ordinal}, but the module has {count} segments"
    )]
    RodataOutOfRange {
        /// The function's printed name.
        function: String,
        /// Offset of the instruction.
        offset: usize,
        /// The segment ordinal.
        ordinal: u32,
        /// Number of rodata segments.
        count: usize,
    },
    /// Something the module holds that the assembly form has no syntax
    /// for (rather than leave it out silently).
    #[error("the assembly form cannot write {what}")]
    NotExpressible {
        /// What it is.
        what: String,
    },
    /// A debug database entry the assembly form cannot print.
    #[error("debug database: {0}")]
    DebugDatabase(#[source] crate::loader::DebugError),
    /// A calling convention this printer (like IREE's) cannot spell.
    #[error("function @{function}: calling convention {cconv:?}: {problem}")]
    CallingConvention {
        /// The function's printed name.
        function: String,
        /// The calling convention string.
        cconv: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Prints one module. Cheap to create; holds the module's import, export
/// and type tables.
pub struct Disassembler<'m> {
    module: &'m Module,
    types: Vec<&'m str>,
    imports: Vec<ImportDecl<'m>>,
    exports: Vec<ExportDecl<'m>>,
    debug: Option<DebugDatabase<'m>>,
    /// In the assembly form: each internal function's own symbol
    /// ([`names::unique_function_names`]), which calls print.
    unique_names: Option<Vec<String>>,
}

/// The bytecode offsets of a function's block markers, ascending; a block's
/// position in this list is its `^bbN` number.
#[derive(Default)]
struct BlockList {
    offsets: Vec<u32>,
}

impl BlockList {
    fn ordinal(&self, offset: u32) -> Option<usize> {
        self.offsets.binary_search(&offset).ok()
    }
}

/// One internal function's bytecode as the printers take it.
struct FunctionCode<'m> {
    code: &'m [u8],
    /// Blocks its descriptor declares.
    block_count: u16,
    /// The name it is printed under ([`Disassembler::function_name`]).
    name: String,
}

impl<'m> FunctionCode<'m> {
    /// A decoding failure, reported against this function.
    fn decode_error(&self, source: DecodeError) -> DisasmError {
        DisasmError::Decode {
            function: self.name.clone(),
            source,
        }
    }

    /// Every instruction, and the blocks (checked against the descriptor).
    fn decode_all(&self) -> Result<(Vec<Instruction<'m>>, BlockList), DisasmError> {
        let instructions = Decoder::new(self.code, 0, self.code.len())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| self.decode_error(source))?;
        let blocks = find_blocks(&instructions, self.block_count, self.code.len(), &self.name)?;
        Ok((instructions, blocks))
    }
}

/// What the operand printer needs to know about the instruction at hand.
struct Site<'a> {
    function: &'a str,
    offset: usize,
    blocks: &'a BlockList,
    /// When tracing: the current value of a read register, shown after it
    /// as `%i0(40)`.
    values: Option<&'a RegisterValues<'a>>,
}

/// Renders the value of a register (`bank`, ordinal) for traces, or `None`
/// when it is out of range.
pub type RegisterValues<'a> = dyn Fn(Bank, u16) -> Option<String> + 'a;

impl<'m> Disassembler<'m> {
    /// Prepares to print `module`.
    pub fn new(module: &'m Module) -> Self {
        Disassembler {
            module,
            types: module.types(),
            imports: module.imports(),
            exports: module.exports(),
            debug: module.debug_database(),
            unique_names: None,
        }
    }

    /// Writes the whole listing (header, directives, and the functions
    /// `options.filter` selects) to `out` and returns how many functions it
    /// printed. On error, `out` keeps the text printed before the failure,
    /// as iree-dump-module prints it.
    pub fn write_module(
        &self,
        options: &DisasmOptions<'_>,
        out: &mut String,
    ) -> Result<usize, DisasmError> {
        if options.form == TextForm::Assembly {
            return self.write_assembly(options, out);
        }
        let start = out.len();
        let _ = writeln!(
            out,
            "vm.module @{} version {}",
            self.module.name(),
            self.module.version()
        );
        self.write_directives(out);
        let mut printed = 0;
        for ordinal in 0..self.module.function_count() {
            let name = self.function_name(ordinal);
            if !options.filter.selects(ordinal, name.as_str()) {
                continue;
            }
            separate_top_level_item(out, start);
            for export in self
                .exports
                .iter()
                .filter(|e| e.internal_ordinal == ordinal)
            {
                if export.local_name == name {
                    let _ = writeln!(out, "vm.export @{}", export.local_name);
                } else {
                    let _ = writeln!(out, "vm.export @{} = @{name}", export.local_name);
                }
            }
            let _ = write!(out, "vm.func @{name}");
            let cconv = self
                .module
                .function_signature(ordinal)
                .and_then(|s| s.calling_convention);
            write_signature(out, cconv).map_err(|problem| DisasmError::CallingConvention {
                function: name.clone(),
                cconv: cconv.unwrap_or("").to_string(),
                problem,
            })?;
            out.push_str(" {\n");
            self.write_function_body(ordinal, options.bytecode_offsets, out)?;
            out.push_str("}\n");
            printed += 1;
        }
        Ok(printed)
    }

    /// The name a function is printed under: its first export's name, else
    /// its name in the debug database, else `fnN`.
    pub fn function_name(&self, ordinal: usize) -> String {
        if let Some(name) = self.unique_names.as_ref().and_then(|n| n.get(ordinal)) {
            return name.clone();
        }
        self.exports
            .iter()
            .find(|e| e.internal_ordinal == ordinal)
            .map(|e| e.local_name.to_string())
            .or_else(|| self.debug_name(ordinal).map(str::to_string))
            .unwrap_or_else(|| format!("fn{ordinal}"))
    }

    /// Writes the instructions of internal function `ordinal`, one per line
    /// (block labels unindented, instructions indented by two spaces).
    pub fn write_function_body(
        &self,
        ordinal: usize,
        bytecode_offsets: bool,
        out: &mut String,
    ) -> Result<(), DisasmError> {
        let body = self.function_code(ordinal)?;
        let (instructions, blocks) = body.decode_all()?;
        for inst in &instructions {
            let indent = if inst.op == Opcode::Block { "" } else { "  " };
            if bytecode_offsets {
                let _ = write!(out, "[{:08X}]", inst.offset);
            }
            out.push_str(indent);
            let site = Site {
                function: &body.name,
                offset: inst.offset,
                blocks: &blocks,
                values: None,
            };
            self.write_instruction(inst, &site, out)?;
            out.push('\n');
        }
        Ok(())
    }

    /// The instructions of internal function `ordinal` (block labels
    /// included) as `(bytecode offset, text)` pairs, for debuggers and
    /// tracers. With `values`, read registers show their values.
    pub fn function_lines(
        &self,
        ordinal: usize,
        values: Option<&RegisterValues<'_>>,
    ) -> Result<Vec<(u32, String)>, DisasmError> {
        let body = self.function_code(ordinal)?;
        let (instructions, blocks) = body.decode_all()?;
        let mut lines = Vec::with_capacity(instructions.len());
        for inst in &instructions {
            let text = self.instruction_line(inst, &body, &blocks, values)?;
            lines.push((inst.offset as u32, text));
        }
        Ok(lines)
    }

    /// The text of the one instruction at bytecode `offset` of internal
    /// function `ordinal`, with register values when `values` is given.
    pub fn instruction_text(
        &self,
        ordinal: usize,
        offset: u32,
        values: Option<&RegisterValues<'_>>,
    ) -> Result<String, DisasmError> {
        let body = self.function_code(ordinal)?;
        let inst = decode_at(body.code, offset as usize).map_err(|e| body.decode_error(e))?;
        // Branch labels need the block list of the whole function.
        let blocks = if inst
            .operands
            .iter()
            .any(|o| matches!(o, Operand::Target(_) | Operand::Cases(_)))
        {
            body.decode_all()?.1
        } else {
            BlockList::default()
        };
        self.instruction_line(&inst, &body, &blocks, values)
    }

    /// The text of instruction `inst` of function `body`, without indent
    /// or line end.
    fn instruction_line(
        &self,
        inst: &Instruction<'_>,
        body: &FunctionCode<'_>,
        blocks: &BlockList,
        values: Option<&RegisterValues<'_>>,
    ) -> Result<String, DisasmError> {
        let site = Site {
            function: &body.name,
            offset: inst.offset,
            blocks,
            values,
        };
        let mut text = String::new();
        self.write_instruction(inst, &site, &mut text)?;
        Ok(text)
    }

    /// The bytecode of internal function `ordinal`, with what printing it
    /// needs of its descriptor and its printed name.
    fn function_code(&self, ordinal: usize) -> Result<FunctionCode<'m>, DisasmError> {
        let count = self.module.function_count();
        let no_such_function = DisasmError::NoSuchFunction { ordinal, count };
        let descriptor = self
            .module
            .function_descriptor(ordinal)
            .ok_or(no_such_function.clone())?;
        let code = self
            .module
            .function_bytecode(ordinal)
            .ok_or(no_such_function)?;
        Ok(FunctionCode {
            code,
            block_count: descriptor.block_count,
            name: self.function_name(ordinal),
        })
    }

    /// `vm.type`, `vm.import` and `vm.rodata` lines, then a blank line if
    /// the module has any types, imports or rodata.
    fn write_directives(&self, out: &mut String) {
        for name in self.types.iter().filter(|n| !n.is_empty()) {
            let _ = writeln!(out, "vm.type {name}");
        }
        for import in &self.imports {
            let _ = writeln!(
                out,
                "vm.import {}@{} cconv \"{}\"",
                if import.optional { "optional " } else { "" },
                import.full_name,
                import.calling_convention.unwrap_or("")
            );
        }
        let rodata_count = self.module.rodata_count();
        for index in 0..rodata_count {
            let _ = write!(out, "vm.rodata[{index}] = ");
            // Every segment was bounds-checked at load, so this is present.
            for byte in self.module.rodata(index).unwrap_or_default() {
                let _ = write!(out, "{byte:02X}");
            }
            out.push('\n');
        }
        if !self.types.is_empty() || !self.imports.is_empty() || rodata_count > 0 {
            out.push('\n');
        }
    }

    /// Name of internal function `ordinal` in the debug database (matched by
    /// position, as IREE does), if it has a non-empty one.
    fn debug_name(&self, ordinal: usize) -> Option<&'m str> {
        let name = self.debug?.source_map(ordinal)?.local_name();
        (!name.is_empty()).then_some(name)
    }

    /// How a call names function `ordinal` (bit 31: an import): the
    /// import's full name, `module.debug_name`, or `module:N`/`import:N`.
    fn callee_name(&self, ordinal: u32) -> String {
        if self.unique_names.is_some() {
            return self.assembly_callee_name(ordinal);
        }
        // IREE keeps function ordinals in 16 bits here.
        if ordinal & IMPORT_ORDINAL_BIT != 0 {
            let index = (ordinal & !IMPORT_ORDINAL_BIT) as u16;
            match self.imports.get(usize::from(index)) {
                Some(import) if !import.full_name.is_empty() => import.full_name.to_string(),
                _ => format!("import:{index}"),
            }
        } else {
            let index = ordinal as u16;
            match self.debug_name(usize::from(index)) {
                Some(name) => format!("{}.{name}", self.module.name()),
                None => format!("{}:{index}", self.module.name()),
            }
        }
    }

    /// One instruction without indent or newline.
    fn write_instruction(
        &self,
        inst: &Instruction<'_>,
        site: &Site<'_>,
        out: &mut String,
    ) -> Result<(), DisasmError> {
        if inst.op == Opcode::Block {
            let label = block_label(site, inst.offset as u32)?;
            let _ = write!(out, "{label}:");
            return Ok(());
        }
        let info = inst.op.info();
        let fields_and_operands = || info.fields.iter().zip(&inst.operands).enumerate();
        let in_template = template_fields(info.syntax);
        let mut results = Vec::new();
        for (i, (field, operand)) in fields_and_operands() {
            if is_result(field) && !in_template.contains(&i) {
                let text = self.operand_text(field, operand, site)?;
                if !text.is_empty() {
                    results.push(text);
                }
            }
        }
        if !results.is_empty() {
            let _ = write!(out, "{} = ", results.join(", "));
        }
        let _ = write!(out, "vm.{}", info.mnemonic);
        let operands = if info.syntax.is_empty() {
            let mut parts = Vec::new();
            for (_, (field, operand)) in fields_and_operands().filter(|(_, (f, _))| !is_result(f)) {
                let text = self.operand_text(field, operand, site)?;
                if !text.is_empty() {
                    parts.push(text);
                }
            }
            parts.join(", ")
        } else {
            self.expand_template(info.syntax, inst, site)?
        };
        if !operands.is_empty() {
            let _ = write!(out, " {operands}");
        }
        Ok(())
    }

    /// Fills an [`InstrInfo::syntax`](crate::bytecode::isa::InstrInfo::syntax)
    /// template with the instruction's operands.
    fn expand_template(
        &self,
        template: &str,
        inst: &Instruction<'_>,
        site: &Site<'_>,
    ) -> Result<String, DisasmError> {
        let fields = inst.op.info().fields;
        let mut text = String::new();
        for piece in TemplatePieces::new(template) {
            match piece {
                TemplatePiece::Text(s) => text.push_str(s),
                TemplatePiece::Field(i) => {
                    if let (Some(field), Some(operand)) = (fields.get(i), inst.operands.get(i)) {
                        text.push_str(&self.operand_text(field, operand, site)?);
                    }
                }
            }
        }
        Ok(text)
    }

    /// How one operand is written, given the field it was decoded from.
    fn operand_text(
        &self,
        field: &Field,
        operand: &Operand<'_>,
        site: &Site<'_>,
    ) -> Result<String, DisasmError> {
        let value = |bank: Bank, reg: u16| -> String {
            site.values
                .and_then(|v| v(bank, reg))
                .map(|v| format!("({v})"))
                .unwrap_or_default()
        };
        let list_bank = |reg: u16| {
            if reg & REF_BANK_BIT != 0 {
                Bank::Ref
            } else {
                Bank::I32
            }
        };
        Ok(match operand {
            Operand::Reg(reg) => match field {
                Field::Reg(bank, Access::Read) => {
                    format!("{}{}", register_name(*bank, *reg), value(*bank, *reg))
                }
                Field::Reg(bank, _) => register_name(*bank, *reg),
                Field::RefMove(Access::Read) => {
                    format!("{}{}", ref_name(*reg), value(Bank::Ref, *reg))
                }
                Field::RefMove(_) => ref_name(*reg),
                _ => list_register_name(*reg),
            },
            Operand::Regs(list) if site.values.is_some() && !is_result(field) => join(
                list.iter()
                    .map(|r| format!("{}{}", list_register_name(r), value(list_bank(r), r))),
            ),
            Operand::I16(value) => value.to_string(),
            Operand::I32(bits) => match field {
                Field::Const(Bank::F32) => format_g_precision(f64::from(f32::from_bits(*bits)), 9),
                _ => format!("{}  // 0x{bits:08X}", *bits as i32),
            },
            Operand::I64(bits) => match field {
                Field::Const(Bank::F64) => format_g_precision(f64::from_bits(*bits), 17),
                _ => format!("{}  // 0x{bits:016X}", *bits as i64),
            },
            Operand::Global(offset) => offset.to_string(),
            Operand::Func(ordinal) => format!("@{}", self.callee_name(*ordinal)),
            Operand::Rodata(ordinal) => {
                let count = self.module.rodata_count();
                let size = usize::try_from(*ordinal)
                    .ok()
                    .and_then(|i| self.module.rodata(i))
                    .map(<[u8]>::len)
                    .ok_or_else(|| DisasmError::RodataOutOfRange {
                        function: site.function.to_string(),
                        offset: site.offset,
                        ordinal: *ordinal,
                        count,
                    })?;
                format!("{ordinal}  // {size}b")
            }
            Operand::Type(type_id) => usize::try_from(*type_id)
                .ok()
                .and_then(|i| self.types.get(i))
                .map(|name| name.to_string())
                .ok_or_else(|| DisasmError::TypeOutOfRange {
                    function: site.function.to_string(),
                    offset: site.offset,
                    type_id: *type_id,
                    count: self.types.len(),
                })?,
            // The assembly form escapes the whole string.
            Operand::Str(s) if self.unique_names.is_some() => names::quoted_bytes(s),
            // Printed like C's "%.*s": the text stops at a NUL byte (bytes
            // that are not UTF-8 print as U+FFFD: the text is a `String`).
            Operand::Str(s) => {
                let text = s.split(|&b| b == 0).next().unwrap_or_default();
                format!("\"{}\"", String::from_utf8_lossy(text))
            }
            Operand::Regs(list) => join_list_registers(list),
            Operand::Sizes(list) => join(list.iter().map(|n| n.to_string())),
            Operand::Target(target) => block_label(site, *target)?,
            Operand::Remap(remap) => remap_text(remap),
            Operand::Cases(cases) => {
                let mut text = String::new();
                for (i, (target, remap)) in cases.iter().enumerate() {
                    let label = block_label(site, *target)?;
                    let _ = write!(text, ", {i}: {label}({})", remap_text(remap));
                }
                text
            }
        })
    }
}

/// Prints `module` as iree-dump-module's disassembly does.
///
/// ```no_run
/// use irvm::bytecode::disasm::{disassemble_module, DisasmOptions};
/// let module = irvm::Module::from_file("fib.vmfb")?;
/// print!("{}", disassemble_module(&module, &DisasmOptions::default())?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn disassemble_module(
    module: &Module,
    options: &DisasmOptions<'_>,
) -> Result<String, DisasmError> {
    let mut out = String::new();
    Disassembler::new(module).write_module(options, &mut out)?;
    Ok(out)
}

/// Ensures the text written since `start` ends in exactly one blank line
/// before the next top-level item (nothing when no text was written).
fn separate_top_level_item(out: &mut String, start: usize) {
    let written = &out[start..];
    if written.is_empty() || written.ends_with("\n\n") {
        return;
    }
    if written.ends_with('\n') {
        out.push('\n');
    } else {
        out.push_str("\n\n");
    }
}

/// Writes `(%i0: i32, %i2:3: i64, %r0: !vm.ref<?>) -> (i32)` for the
/// calling convention `cconv` (no convention: `() -> ()`). On an
/// unsupported kind the text written so far stays in `out`.
fn write_signature(out: &mut String, cconv: Option<&str>) -> Result<(), String> {
    let (arguments, results) = cconv_fragments(cconv.unwrap_or(""))?;
    out.push('(');
    let (mut i32_ordinal, mut ref_ordinal) = (0u32, 0u32);
    let mut first = true;
    for kind in arguments.chars().filter(|&c| c != 'v') {
        if !first {
            out.push_str(", ");
        }
        first = false;
        match kind {
            'i' | 'f' => {
                let _ = write!(out, "%i{i32_ordinal}: {}", cconv_type_name(kind)?);
                i32_ordinal += 1;
            }
            'I' | 'F' => {
                // At the next even slot, where the runtime puts it.
                i32_ordinal = i32_ordinal.div_ceil(2) * 2;
                let _ = write!(
                    out,
                    "%i{i32_ordinal}:{}: {}",
                    i32_ordinal + 1,
                    cconv_type_name(kind)?
                );
                i32_ordinal += 2;
            }
            'r' => {
                let _ = write!(out, "%r{ref_ordinal}: {}", cconv_type_name(kind)?);
                ref_ordinal += 1;
            }
            other => return Err(format!("unsupported cconv argument type '{other}'")),
        }
    }
    out.push_str(") -> (");
    let mut first = true;
    for kind in results.chars().filter(|&c| c != 'v') {
        if !first {
            out.push_str(", ");
        }
        first = false;
        out.push_str(cconv_type_name(kind)?);
    }
    out.push(')');
    Ok(())
}

/// Splits `0args_results` into its argument and result kinds; a lone `v`
/// stands for none, and an empty string is `() -> ()`.
pub fn cconv_fragments(cconv: &str) -> Result<(&str, &str), String> {
    let Some(body) = cconv.strip_prefix('0') else {
        return match cconv.chars().next() {
            None => Ok(("", "")),
            Some(version) => Err(format!("unsupported cconv version {version}")),
        };
    };
    let (arguments, results) = body.split_once('_').unwrap_or((body, ""));
    let arguments = if arguments == "v" { "" } else { arguments };
    let results = if results == "v" { "" } else { results };
    Ok((arguments, results))
}

/// The type a calling-convention kind is printed as in a signature.
fn cconv_type_name(kind: char) -> Result<&'static str, String> {
    Ok(match kind {
        'i' => "i32",
        'I' => "i64",
        'f' => "f32",
        'F' => "f64",
        'r' => "!vm.ref<?>",
        other => return Err(format!("unsupported cconv type '{other}'")),
    })
}

/// Finds the block markers of a decoded function and checks them against
/// the descriptor, as IREE's block list does.
fn find_blocks(
    instructions: &[Instruction<'_>],
    declared: u16,
    code_len: usize,
    function: &str,
) -> Result<BlockList, DisasmError> {
    let offsets: Vec<u32> = instructions
        .iter()
        .filter(|i| i.op == Opcode::Block)
        .map(|i| i.offset as u32)
        .collect();
    if offsets.len() != usize::from(declared) {
        return Err(DisasmError::BlockCount {
            function: function.to_string(),
            declared,
            found: offsets.len(),
        });
    }
    if let Some(&last) = offsets.iter().find(|&&o| o as usize + 1 >= code_len) {
        return Err(DisasmError::BlockAtEnd {
            function: function.to_string(),
            offset: last as usize,
        });
    }
    Ok(BlockList { offsets })
}

/// `^bbN` for the block at bytecode offset `target`.
fn block_label(site: &Site<'_>, target: u32) -> Result<String, DisasmError> {
    site.blocks
        .ordinal(target)
        .map(|n| format!("^bb{n}"))
        .ok_or_else(|| DisasmError::UndefinedBlock {
            function: site.function.to_string(),
            offset: site.offset,
            target,
        })
}

/// Whether a field is written by the instruction (printed before ` = `).
pub(crate) fn is_result(field: &Field) -> bool {
    matches!(
        field,
        Field::Reg(_, Access::Write) | Field::RefMove(Access::Write) | Field::Results(_)
    )
}

/// A register operand of a known bank.
fn register_name(bank: Bank, reg: u16) -> String {
    match bank {
        Bank::I32 | Bank::F32 => format!("%i{}", reg & I32_INDEX_MASK),
        Bank::I64 | Bank::F64 => {
            let first = reg & I32_INDEX_MASK;
            format!("%i{first}:{}", u32::from(first) + 1)
        }
        Bank::Ref => format!("%r{}", reg & REF_INDEX_MASK),
    }
}

/// A ref register that may be moved: `%R` when the move bit is set.
fn ref_name(reg: u16) -> String {
    let prefix = if reg & REF_MOVE_BIT != 0 { 'R' } else { 'r' };
    format!("%{prefix}{}", reg & REF_INDEX_MASK)
}

/// A register in a variadic list or remap: the ref bit picks the bank.
fn list_register_name(reg: u16) -> String {
    if reg & REF_BANK_BIT != 0 {
        ref_name(reg)
    } else {
        format!("%i{}", reg & I32_INDEX_MASK)
    }
}

fn join_list_registers(list: &U16List<'_>) -> String {
    join(list.iter().map(list_register_name))
}

/// `%i0->%i2, %r1->%r0`.
fn remap_text(remap: &RemapList<'_>) -> String {
    join(
        remap
            .iter()
            .map(|(src, dst)| format!("{}->{}", list_register_name(src), list_register_name(dst))),
    )
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// A piece of a syntax template.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TemplatePiece<'t> {
    /// Literal text.
    Text(&'t str),
    /// `{N}`: the operand of field `N`.
    Field(usize),
}

/// Splits a syntax template into text and field references (`{{` and `}}`
/// are literal braces).
pub(crate) struct TemplatePieces<'t> {
    rest: &'t str,
}

impl<'t> TemplatePieces<'t> {
    pub(crate) fn new(template: &'t str) -> Self {
        TemplatePieces { rest: template }
    }
}

impl<'t> Iterator for TemplatePieces<'t> {
    type Item = TemplatePiece<'t>;
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        for escaped in ["{{", "}}"] {
            if let Some(after) = rest.strip_prefix(escaped) {
                self.rest = after;
                return Some(TemplatePiece::Text(&escaped[..1]));
            }
        }
        if let Some(inner) = rest.strip_prefix('{') {
            if let Some((digits, after)) = inner.split_once('}') {
                if let Ok(index) = digits.parse() {
                    self.rest = after;
                    return Some(TemplatePiece::Field(index));
                }
            }
        }
        let end = rest[1..].find(['{', '}']).map_or(rest.len(), |i| i + 1);
        self.rest = &rest[end..];
        Some(TemplatePiece::Text(&rest[..end]))
    }
}

/// The field indices a template mentions.
fn template_fields(template: &str) -> Vec<usize> {
    TemplatePieces::new(template)
        .filter_map(|piece| match piece {
            TemplatePiece::Field(i) => Some(i),
            TemplatePiece::Text(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::isa::{OpcodeSet, INSTRUCTIONS};

    #[test]
    fn templates_split_into_text_and_fields() {
        let pieces: Vec<_> = TemplatePieces::new("{0} {{ default: {1}({2}){4} }}").collect();
        use TemplatePiece::*;
        assert_eq!(
            pieces,
            vec![
                Field(0),
                Text(" "),
                Text("{"),
                Text(" default: "),
                Field(1),
                Text("("),
                Field(2),
                Text(")"),
                Field(4),
                Text(" "),
                Text("}"),
            ]
        );
    }

    #[test]
    fn every_template_names_existing_fields_and_all_operands() {
        for info in INSTRUCTIONS.iter().filter(|i| !i.syntax.is_empty()) {
            let named = template_fields(info.syntax);
            for &i in &named {
                assert!(i < info.fields.len(), "vm.{}: {{{i}}}", info.mnemonic);
            }
            // Every operand (non-result) field appears, except the ones the
            // reference printer leaves out: a branch table's size (implied
            // by its cases) and switch.ref's type.
            for (i, field) in info.fields.iter().enumerate() {
                let implied = matches!(field, Field::ConstI16)
                    || (info.op == Opcode::SwitchRef && matches!(field, Field::TypeId));
                if !is_result(field) && !implied {
                    assert!(named.contains(&i), "vm.{} omits field {i}", info.mnemonic);
                }
            }
        }
        assert!(INSTRUCTIONS
            .iter()
            .filter(|i| i.set == OpcodeSet::Internal)
            .all(|i| i.syntax.is_empty()));
    }

    #[test]
    fn register_names_follow_banks_and_move_bits() {
        assert_eq!(register_name(Bank::I32, 3), "%i3");
        assert_eq!(register_name(Bank::F64, 4), "%i4:5");
        assert_eq!(register_name(Bank::Ref, REF_BANK_BIT | 2), "%r2");
        assert_eq!(ref_name(REF_BANK_BIT | REF_MOVE_BIT | 2), "%R2");
        assert_eq!(list_register_name(7), "%i7");
        assert_eq!(list_register_name(REF_BANK_BIT | 1), "%r1");
        assert_eq!(list_register_name(REF_BANK_BIT | REF_MOVE_BIT | 1), "%R1");
    }

    #[test]
    fn signatures_follow_calling_conventions() {
        let sig = |cconv| {
            let mut out = String::new();
            write_signature(&mut out, cconv).map(|()| out)
        };
        assert_eq!(sig(None).unwrap(), "() -> ()");
        assert_eq!(sig(Some("0v_v")).unwrap(), "() -> ()");
        assert_eq!(
            sig(Some("0iIrf_Fr")).unwrap(),
            "(%i0: i32, %i2:3: i64, %r0: !vm.ref<?>, %i4: f32) -> (f64, !vm.ref<?>)"
        );
        assert_eq!(sig(Some("0i")).unwrap(), "(%i0: i32) -> ()");
        assert!(sig(Some("0CiD_v")).unwrap_err().contains("'C'"));
        assert!(sig(Some("1i_i")).unwrap_err().contains("version 1"));
    }

    #[test]
    fn top_level_items_are_separated_by_one_blank_line() {
        let mut out = String::from("x");
        separate_top_level_item(&mut out, 1);
        assert_eq!(out, "x");
        out.push('a');
        separate_top_level_item(&mut out, 1);
        assert_eq!(out, "xa\n\n");
        separate_top_level_item(&mut out, 1);
        assert_eq!(out, "xa\n\n");
        out.push_str("b\n");
        separate_top_level_item(&mut out, 1);
        assert_eq!(out, "xa\n\nb\n\n");
    }
}
