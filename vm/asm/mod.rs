//! The assembler: VM assembly text (`.vmasm`, the language
//! `iree-dump-module --output=disassembly` prints and `iree-as-module`
//! reads) to a `.vmfb` module.
//!
//! ```text
//! source ──lines──▶ directives (this file) ──▶ ModuleDraft ──emit.rs──▶ FlatBuffer bytes
//!                   instructions (instr.rs, from the ISA table)
//!                   trailing loc(...) (loc.rs) ──▶ debug database
//! ```
//!
//! The output is laid out as the reference assembler lays it out: each
//! function starts with a block marker and is padded to 8 bytes; register
//! counts are the highest register the body or the arguments name;
//! module state is sized by the highest `.rwdata[N]`/`.refs[N]` accessed.
//! Every problem is an [`AsmError`] naming file, line and column; the
//! assembler reports every error it finds, not just the first.
//!
//! It also reads the assembly form `irvm dump --output=assembly` prints
//! (`directives.rs`): quoted symbols, escaped strings, and the tables the
//! disassembly leaves out, which then replace what would be derived.
//!
//! ```
//! let bytes = irvm::asm::assemble(
//!     "vm.module @m version 0\nvm.export @one\nvm.func @one() -> (i32) {\n^bb0:\n  %i0 = vm.const.i32 1\n  vm.return %i0\n}\n",
//!     "m.vmasm",
//! )?;
//! let module = irvm::Module::from_bytes(bytes)?;
//! assert_eq!(module.name(), "m");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod calls;
mod directives;
mod emit;
mod instr;
mod loc;
mod text;

use std::borrow::Cow;
use std::fmt;

use crate::loader::schema::FeatureBits;

use self::loc::{split_trailing_loc, LocationTable};
use self::text::{
    column_of, parse_int, parse_quoted, parse_uint, split_commas, strip_comment, take_symbol,
};

/// Errors beyond this many stop the assembler.
const MAX_ERRORS: usize = 50;

/// One diagnostic: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    /// The input's name (a path, or `<stdin>`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, and what was expected.
    pub message: String,
    /// The source line, shown with a caret under `column`.
    pub source_line: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        if !self.source_line.is_empty() {
            let line = self.source_line.replace('\t', " ");
            writeln!(f, "  {line}")?;
            write!(f, "  {}^", " ".repeat(self.column.saturating_sub(1)))?;
        }
        Ok(())
    }
}

/// Every error of one assembly run (at least one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct AsmErrors(pub Vec<AsmError>);

impl fmt::Display for AsmErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        if self.0.len() > 1 {
            write!(f, "\n{} errors", self.0.len())?;
        }
        Ok(())
    }
}

/// A message about a fragment of the current line (a sub-slice of it, so
/// its column is known).
#[derive(Debug)]
pub(crate) struct Diag<'s> {
    message: String,
    at: &'s str,
}

impl<'s> Diag<'s> {
    fn new(message: impl Into<String>, at: &'s str) -> Self {
        Diag {
            message: message.into(),
            at,
        }
    }
}

/// An import declaration.
struct ImportDraft {
    full_name: String,
    /// `cconv "..."`; `None`: the import has no calling convention (and,
    /// without attributes, no signature).
    cconv: Option<String>,
    /// The flag bits (`REQUIRED` 1, `OPTIONAL` 2, others as given).
    flags: u32,
    /// Signature attributes (`attributes {...}`).
    attrs: Attributes,
}

/// Key-value attributes (`attributes {key = "value", ...}`), in order.
type Attributes = Vec<(String, String)>;

/// A `vm.source_map` directive: the function name it is stored under and
/// its (bytecode offset, location index) pairs.
struct SourceMapDraft {
    name: String,
    locations: Vec<(u32, i32)>,
    /// The line of the directive.
    line: usize,
}

/// A `vm.dependency` directive.
struct DependencyDraft {
    name: String,
    minimum_version: u32,
    /// The flag bits (`REQUIRED` 1, `OPTIONAL` 2, others as given).
    flags: u32,
}

/// A rodata segment: its bytes, and whether it is stored after the
/// FlatBuffer (`external`, at a 64-byte aligned offset).
struct RodataDraft {
    bytes: Vec<u8>,
    external: bool,
    /// The `compression_type` union tag the segment states (0: none,
    /// 1: `UncompressedDataDef`), written with an empty table.
    compression: u8,
}

/// What a function header states outright (the assembly form); each
/// `None` is derived from the body as before.
#[derive(Default)]
struct DeclaredFunction {
    /// `cconv "..."`: the calling convention, when the signature does not
    /// spell it; `Some(None)` for `cconv none`, a signature without one.
    cconv: Option<Option<String>>,
    /// `attributes {...}`: signature attributes.
    attrs: Attributes,
    /// `registers(i32: N, ref: M)`.
    registers: Option<(u32, u32)>,
    /// `requires(...)`.
    requirements: Option<FeatureBits>,
}

/// A named global (`vm.global.i32 @g`): size 0 is a ref.
struct GlobalDraft {
    name: String,
    size: u32,
    ordinal: u32,
}

/// A finished function.
struct FunctionDraft {
    name: String,
    /// `None`: the signature has no calling convention (`cconv none`).
    cconv: Option<String>,
    offset: u32,
    length: u32,
    requirements: FeatureBits,
    blocks: u32,
    i32_count: u32,
    ref_count: u32,
    /// (bytecode offset in the function, location table index).
    locations: Vec<(u32, i32)>,
    /// Signature attributes.
    attrs: Attributes,
}

/// Everything known about the module so far.
pub(crate) struct ModuleDraft {
    name: String,
    version: u32,
    requirements: FeatureBits,
    /// `vm.requires`: the module's feature bits, instead of those its
    /// instructions need.
    declared_requirements: Option<FeatureBits>,
    /// Module attributes (`vm.module ... attributes {...}`).
    attrs: Attributes,
    dependencies: Vec<DependencyDraft>,
    types: Vec<String>,
    imports: Vec<ImportDraft>,
    rodata: Vec<RodataDraft>,
    globals: Vec<GlobalDraft>,
    globals_laid_out: bool,
    /// (export name, function name, line).
    exports: Vec<(String, String, usize)>,
    functions: Vec<FunctionDraft>,
    /// Each function's ordinal in `functions` by name, so that looking a
    /// function up (a call, an export, a second definition) does not scan
    /// them all: a module of many functions assembles in linear time.
    function_ordinals: std::collections::HashMap<String, usize>,
    bytecode: Vec<u8>,
    global_bytes: u64,
    global_refs: u64,
    /// `vm.module_state`: (global bytes, global refs), instead of the
    /// storage the code accesses.
    declared_state: Option<(u64, u64)>,
    locations: LocationTable,
    /// `vm.source_map` directives (name, (offset, location) pairs): the
    /// debug database's source maps as written, instead of one per
    /// function from trailing `loc(...)`s.
    source_maps: Option<Vec<SourceMapDraft>>,
    /// `vm.debug_database`: the module has a debug database whose source
    /// maps are the `vm.source_map` directives (none if there are none).
    declared_debug_database: bool,
    /// (bytecode position, `@name` operand, line) of calls to functions
    /// defined later.
    function_fixups: Vec<(usize, String, usize)>,
    /// Every call, checked against its callee's calling convention at the
    /// end.
    call_sites: Vec<calls::CallSite>,
    /// (line, problem) of each `vm.return` whose values disagree with its
    /// function's calling convention, reported with the call sites.
    return_problems: Vec<(usize, String)>,
}

impl ModuleDraft {
    /// The type table ordinal of `name`, appending it when new. As in the
    /// reference, `vm.buffer` also finds a declared `!vm.buffer`. A name
    /// no `vm.type` declares is entered as iree-compile names the type
    /// ([`table_type_name`]: `?` and `!vm.ref<?>` are `!vm.opaque`).
    fn type_ordinal(&mut self, name: &str) -> u32 {
        let name = name.trim();
        if name.starts_with("vm.") {
            if let Some(i) = self
                .types
                .iter()
                .position(|t| t.strip_prefix('!') == Some(name))
            {
                return i as u32;
            }
        }
        if let Some(i) = self.types.iter().position(|t| t == name) {
            return i as u32;
        }
        let name = table_type_name(name);
        if let Some(i) = self.types.iter().position(|t| *t == name) {
            return i as u32;
        }
        self.types.push(name.to_string());
        (self.types.len() - 1) as u32
    }

    /// The ordinal a call operand `@...` encodes: `@module:N` (internal
    /// ordinal N), an import's full name (import bit set), or an internal
    /// function by name (`@module.f` or `@f`). `None`: not defined yet.
    fn function_operand(&self, symbol: &str) -> Result<Option<u32>, String> {
        let (name, quoted) = symbol_name(symbol);
        let name = name.as_ref();
        if let Some((module, ordinal)) = name.split_once(':').filter(|_| !quoted) {
            if module != self.name {
                return Err(format!(
                    "'{symbol}' names an internal function of module '{module}', but this module is '{}'",
                    self.name
                ));
            }
            return parse_uint(ordinal, 0x7FFF_FFFF)
                .map(|o| Some(o as u32))
                .ok_or_else(|| format!("expected a function ordinal after '{module}:'"));
        }
        if let Some(i) = self.imports.iter().position(|imp| imp.full_name == name) {
            return Ok(Some(crate::bytecode::isa::IMPORT_ORDINAL_BIT | i as u32));
        }
        Ok(self.internal_function(name).map(|i| i as u32))
    }

    /// The function named `name`, else the one named `name` less this
    /// module's `module.` prefix.
    fn internal_function(&self, name: &str) -> Option<usize> {
        let local = name
            .strip_prefix(self.name.as_str())
            .and_then(|n| n.strip_prefix('.'));
        self.function_ordinals
            .get(name)
            .or_else(|| local.and_then(|l| self.function_ordinals.get(l)))
            .copied()
    }

    /// Assigns named globals their storage (refs in order; bytes grouped
    /// by size, each group aligned to its size), as the reference does.
    fn lay_out_globals(&mut self) {
        if self.globals_laid_out {
            return;
        }
        self.globals_laid_out = true;
        let mut next_ref = 0u32;
        for g in self.globals.iter_mut().filter(|g| g.size == 0) {
            g.ordinal = next_ref;
            next_ref += 1;
        }
        self.global_refs = self.global_refs.max(u64::from(next_ref));
        let mut next_byte = 0u64;
        for size in 1..=8u32 {
            if !self.globals.iter().any(|g| g.size == size) {
                continue;
            }
            next_byte = next_byte.next_multiple_of(u64::from(size));
            for g in self.globals.iter_mut().filter(|g| g.size == size) {
                g.ordinal = next_byte as u32;
                next_byte += u64::from(size);
            }
        }
        self.global_bytes = self.global_bytes.max(next_byte);
    }

    /// The storage ordinal of named global `@name` accessed `size` bytes
    /// wide (0: a ref).
    fn global_ordinal(&self, symbol: &str, size: u32) -> Result<u32, String> {
        let name = symbol.strip_prefix('@').unwrap_or(symbol);
        let g = self
            .globals
            .iter()
            .find(|g| g.name == name)
            .ok_or_else(|| format!("unknown global '{symbol}'"))?;
        if g.size != size {
            return Err(format!(
                "global '{symbol}' holds {} but is accessed as {}",
                storage_name(g.size),
                storage_name(size)
            ));
        }
        Ok(g.ordinal)
    }
}

/// The type-table name iree-compile 3.13 writes for the type `text`
/// spells: the type table holds object types, so a `!vm.ref<T>` wrapper
/// is dropped (its encoder does the same), and the "any" object type,
/// written `?` (the element of `!vm.list<?>`) or `!vm.ref<?>`, is
/// `!vm.opaque`, the name both runtimes resolve. Other names are kept.
fn table_type_name(text: &str) -> Cow<'_, str> {
    let text = text.trim();
    if text == "?" {
        return Cow::Borrowed("!vm.opaque");
    }
    match text
        .strip_prefix("!vm.ref<")
        .and_then(|inner| inner.strip_suffix('>'))
    {
        Some(inner) if !inner.trim().is_empty() => table_type_name(inner),
        _ => Cow::Borrowed(text),
    }
}

fn storage_name(size: u32) -> String {
    if size == 0 {
        "a ref".to_string()
    } else {
        format!("{size} bytes")
    }
}

/// The function being assembled.
pub(crate) struct FunctionState {
    name: String,
    /// `None`: the signature has no calling convention (`cconv none`).
    cconv: Option<String>,
    /// Line of the `vm.func` header.
    line: usize,
    /// Line being assembled.
    current_line: usize,
    start: usize,
    blocks: u32,
    i32_count: u32,
    ref_count: u32,
    /// Registers the instructions name (i32, ref): what a declared
    /// `registers(...)` must cover (arguments nothing reads need not).
    body_registers: (u32, u32),
    requirements: FeatureBits,
    /// (label, block offset, line, column).
    labels: Vec<(String, u32, usize, usize)>,
    /// (bytecode position, label, line, column).
    label_fixups: Vec<(usize, String, usize, usize)>,
    locations: Vec<(u32, i32)>,
    /// Whether the last line was a block label (an empty block so far).
    open_label: Option<(usize, String)>,
    instructions: usize,
    /// What the header states outright.
    declared: DeclaredFunction,
    /// The type of each ref register as far as the text shows it (argument
    /// types, typed results), for the type `vm.switch.ref` records.
    ref_types: std::collections::HashMap<u16, String>,
}

/// Assembles `source`; `file` names it in diagnostics.
pub fn assemble(source: &str, file: &str) -> Result<Vec<u8>, AsmErrors> {
    let mut asm = Assembler {
        file: file.to_string(),
        draft: ModuleDraft {
            name: String::new(),
            version: 0,
            requirements: FeatureBits::empty(),
            declared_requirements: None,
            attrs: Vec::new(),
            dependencies: Vec::new(),
            types: Vec::new(),
            imports: Vec::new(),
            rodata: Vec::new(),
            globals: Vec::new(),
            globals_laid_out: false,
            exports: Vec::new(),
            functions: Vec::new(),
            function_ordinals: std::collections::HashMap::new(),
            bytecode: Vec::new(),
            global_bytes: 0,
            global_refs: 0,
            declared_state: None,
            locations: LocationTable::default(),
            source_maps: None,
            declared_debug_database: false,
            function_fixups: Vec::new(),
            call_sites: Vec::new(),
            return_problems: Vec::new(),
        },
        has_module: false,
        func: None,
        errors: Vec::new(),
        lines: source.lines().collect(),
        skipping_body: false,
        refused_functions: Vec::new(),
    };
    asm.run();
    if asm.errors.is_empty() {
        emit::module_bytes(&asm.draft).map_err(|message| {
            AsmErrors(vec![AsmError {
                file: file.to_string(),
                line: 1,
                column: 1,
                message,
                source_line: String::new(),
            }])
        })
    } else {
        Err(AsmErrors(asm.errors))
    }
}

/// Reads and assembles the file at `path`.
pub fn assemble_file(path: &std::path::Path) -> Result<Vec<u8>, AsmErrors> {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => assemble(&text, &name),
            Err(e) => Err(AsmErrors(vec![AsmError {
                file: name,
                line: 1,
                column: 1,
                message: format!(
                    "not UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
                source_line: String::new(),
            }])),
        },
        Err(e) => Err(AsmErrors(vec![AsmError {
            file: name,
            line: 0,
            column: 0,
            message: format!("cannot read: {e}"),
            source_line: String::new(),
        }])),
    }
}

struct Assembler<'s> {
    file: String,
    draft: ModuleDraft,
    has_module: bool,
    func: Option<FunctionState>,
    errors: Vec<AsmError>,
    lines: Vec<&'s str>,
    /// Inside the body of a function whose header was refused: its lines
    /// are skipped up to its closing '}' (one error for the header, not
    /// one per line of the body).
    skipping_body: bool,
    /// Functions whose header was refused: exports of them and calls to
    /// them raise no further errors.
    refused_functions: Vec<String>,
}

impl<'s> Assembler<'s> {
    fn error_at(&mut self, line_no: usize, column: usize, message: impl Into<String>) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(AsmError {
                file: self.file.clone(),
                line: line_no,
                column,
                message: message.into(),
                source_line: self
                    .lines
                    .get(line_no.wrapping_sub(1))
                    .map(|l| l.trim_end().to_string())
                    .unwrap_or_default(),
            });
        }
    }

    fn diag(&mut self, line_no: usize, diag: Diag<'_>) {
        let line = self.lines[line_no - 1];
        self.error_at(line_no, column_of(line, diag.at), diag.message);
    }

    fn run(&mut self) {
        for index in 0..self.lines.len() {
            if self.errors.len() >= MAX_ERRORS {
                return;
            }
            let line_no = index + 1;
            let raw = self.lines[index];
            let mut line = strip_comment(raw).trim();
            // `[0000001A]` bytecode-offset prefixes of dumps are ignored.
            if line.starts_with('[') {
                if let Some(close) = line.find(']') {
                    if line[1..close].bytes().all(|b| b.is_ascii_hexdigit()) && close > 1 {
                        line = line[close + 1..].trim();
                    }
                }
            }
            if line.is_empty() {
                continue;
            }
            if self.skipping_body {
                self.skipping_body = line != "}";
                continue;
            }
            let result = if self.func.is_some() {
                self.function_line(line_no, line)
            } else {
                self.directive(line_no, line)
            };
            if let Err(d) = result {
                if self.func.is_none() && line.starts_with("vm.func") && line.ends_with('{') {
                    self.skipping_body = true;
                    let name = line["vm.func".len()..].trim_start();
                    let name = take_symbol(name).map_or(Cow::Borrowed(""), |(n, ..)| n);
                    self.refused_functions.push(name.into_owned());
                }
                self.diag(line_no, d);
            }
        }
        if let Some(func) = self.func.take() {
            self.error_at(
                func.line,
                1,
                format!(
                    "function @{} is not closed: expected '}}' before the end of the file",
                    func.name
                ),
            );
        }
        if !self.has_module {
            self.error_at(
                1,
                1,
                "expected 'vm.module @name' at the start of the module",
            );
            return;
        }
        if self.draft.functions.is_empty() && self.errors.is_empty() {
            self.error_at(
                self.lines.len().max(1),
                1,
                "the module defines no functions (expected 'vm.func')",
            );
        }
        self.resolve_function_fixups();
        self.check_call_sites();
        self.check_declared_tables();
        let exports = std::mem::take(&mut self.draft.exports);
        for (export, function, line_no) in &exports {
            if self.draft.internal_function(function).is_none()
                && !self.refused_functions.contains(function)
            {
                let line = self.lines[line_no - 1];
                let col = line.find(&format!("@{function}")).map_or(1, |c| c + 1);
                self.error_at(
                    *line_no,
                    col,
                    format!("export @{export} names function @{function}, which the module does not define"),
                );
            }
        }
        self.draft.exports = exports;
    }

    fn resolve_function_fixups(&mut self) {
        let fixups = std::mem::take(&mut self.draft.function_fixups);
        for (pos, symbol, line_no) in fixups {
            let name = symbol_name(&symbol).0;
            let name = name.as_ref();
            match self.draft.internal_function(name) {
                Some(ordinal) => {
                    self.draft.bytecode[pos..pos + 4]
                        .copy_from_slice(&(ordinal as u32).to_le_bytes());
                }
                None if self.refused_functions.iter().any(|f| f == name) => {}
                None => {
                    let line = self.lines[line_no - 1];
                    let col = line.find(&symbol).map_or(1, |c| c + 1);
                    self.error_at(
                        line_no,
                        col,
                        format!("call to undefined function {symbol} (not an import, not a function of this module)"),
                    );
                }
            }
        }
    }

    /// A top-level line.
    fn directive(&mut self, line_no: usize, line: &'s str) -> Result<(), Diag<'s>> {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if !self.has_module && word != "vm.module" {
            return Err(Diag::new(
                "expected 'vm.module @name' before anything else",
                word,
            ));
        }
        match word {
            "vm.module" => {
                if self.has_module {
                    return Err(Diag::new("a file holds one module; 'vm.module' appears twice", word));
                }
                let (name, tail) = split_symbol(rest)?;
                self.draft.name = name.into_owned();
                let mut tail = tail.trim();
                if let Some(version) = tail.strip_prefix("version") {
                    let version = version.trim_start();
                    let end = version.find(char::is_whitespace).unwrap_or(version.len());
                    self.draft.version = parse_uint(&version[..end], u64::from(u32::MAX))
                        .ok_or_else(|| Diag::new("expected a u32 module version", &version[..end]))?
                        as u32;
                    tail = version[end..].trim();
                }
                if !tail.is_empty() {
                    let (attrs, after) = directives::parse_attributes(tail)?;
                    if !after.trim().is_empty() {
                        return Err(Diag::new(
                            "expected 'version N' and 'attributes {...}' after the module name",
                            after.trim(),
                        ));
                    }
                    self.draft.attrs = attrs;
                }
                self.has_module = true;
            }
            "vm.type" => {
                if rest.is_empty() {
                    return Err(Diag::new("expected a type name after 'vm.type'", word));
                }
                if self.draft.types.iter().any(|t| t == rest) {
                    return Err(Diag::new(format!("type {rest} is declared twice"), rest));
                }
                self.draft.types.push(rest.to_string());
            }
            "vm.import" => self.import(rest)?,
            "vm.export" => {
                let (export, after) = split_symbol(rest)?;
                let after = after.trim();
                let function = match after.strip_prefix('=') {
                    Some(function) => parse_symbol(function.trim())?,
                    None if after.is_empty() => export.clone(),
                    None => return Err(Diag::new("expected '= @function' or nothing after the export name", after)),
                };
                if self.draft.exports.iter().any(|(e, _, _)| *e == export) {
                    return Err(Diag::new(format!("export @{export} is declared twice"), rest));
                }
                self.draft
                    .exports
                    .push((export.to_string(), function.to_string(), line_no));
            }
            "vm.func" => self.function_header(line_no, rest)?,
            "vm.requires" => self.module_requirements(rest)?,
            "vm.dependency" => self.dependency(rest)?,
            "vm.module_state" => self.module_state(rest)?,
            "vm.source_map" => self.source_map(line_no, rest)?,
            "vm.debug_database" => self.debug_database(word, rest)?,
            _ if word.starts_with("vm.location[") => self.location(line)?,
            "vm.global.i32" | "vm.global.f32" | "vm.global.i64" | "vm.global.f64" | "vm.global.ref" => {
                self.global(word, rest)?
            }
            _ if word.starts_with("vm.rodata[") => self.rodata(line)?,
            _ => {
                return Err(Diag::new(
                    format!("unknown directive '{word}' (expected vm.type, vm.import, vm.rodata[N], vm.global.*, vm.export, vm.func, or one of the assembly form's: vm.requires, vm.dependency, vm.module_state, vm.location[N], vm.source_map, vm.debug_database)"),
                    word,
                ))
            }
        }
        Ok(())
    }

    fn import(&mut self, rest: &'s str) -> Result<(), Diag<'s>> {
        let (optional, rest) = match rest.strip_prefix("optional") {
            Some(r) if r.starts_with(char::is_whitespace) => (true, r.trim()),
            _ => (false, rest),
        };
        let symbol = rest.split(char::is_whitespace).next().unwrap_or(rest);
        let (full_name, tail) = split_symbol(rest)?;
        if !full_name.contains('.') {
            return Err(Diag::new(
                format!("import @{full_name} must be a fully-qualified name like @module.function"),
                symbol,
            ));
        }
        let tail = tail.trim();
        // Without `cconv` the import has no calling convention (and,
        // without attributes, no signature at all).
        let (cconv, after) = match tail.strip_prefix("cconv") {
            Some(cconv_text) => {
                let (cconv, after) = parse_quoted(cconv_text).ok_or_else(|| {
                    Diag::new(
                        "expected a quoted calling convention like \"0i_i\"",
                        cconv_text.trim(),
                    )
                })?;
                directives::check_cconv(&cconv, cconv_text.trim())?;
                (Some(cconv.into_owned()), after.trim())
            }
            None => (None, tail),
        };
        if !after.is_empty() && !after.starts_with("attributes") && !after.starts_with("flags") {
            return Err(if cconv.is_some() {
                Diag::new("unexpected text after the calling convention", after)
            } else {
                Diag::new(
                    "expected 'cconv \"...\"', 'attributes {...}', 'flags(...)' or nothing after the import name",
                    after,
                )
            });
        }
        let (attrs, after) = if after.starts_with("attributes") {
            let (attrs, rest) = directives::parse_attributes(after)?;
            (attrs, rest.trim())
        } else {
            (Vec::new(), after)
        };
        let (flags, after) = if after.starts_with("flags") {
            if optional {
                return Err(Diag::new(
                    "'optional' and 'flags(...)' both give the flags: write OPTIONAL in flags(...)",
                    after,
                ));
            }
            let (flags, rest) = directives::parse_linkage_flags(after)?;
            (Some(flags), rest.trim())
        } else {
            (None, after)
        };
        if !after.is_empty() {
            return Err(Diag::new(
                "unexpected text after the import's clauses",
                after,
            ));
        }
        if self.draft.imports.iter().any(|i| i.full_name == full_name) {
            return Err(Diag::new(
                format!("import @{full_name} is declared twice"),
                symbol,
            ));
        }
        if !self.draft.functions.is_empty() {
            return Err(Diag::new(
                "imports must be declared before the first function",
                symbol,
            ));
        }
        self.draft.imports.push(ImportDraft {
            full_name: full_name.into_owned(),
            cconv,
            flags: flags.unwrap_or(if optional {
                directives::LINK_OPTIONAL
            } else {
                directives::LINK_REQUIRED
            }),
            attrs,
        });
        Ok(())
    }

    fn rodata(&mut self, line: &'s str) -> Result<(), Diag<'s>> {
        let inner = &line["vm.rodata[".len()..];
        let close = inner
            .find(']')
            .ok_or_else(|| Diag::new("expected ']' after the rodata ordinal", line))?;
        let ordinal = parse_uint(&inner[..close], u64::from(u32::MAX))
            .ok_or_else(|| Diag::new("expected a rodata ordinal", &inner[..close]))?;
        if ordinal != self.draft.rodata.len() as u64 {
            return Err(Diag::new(
                format!(
                    "rodata segments are declared in order: expected vm.rodata[{}]",
                    self.draft.rodata.len()
                ),
                &inner[..close],
            ));
        }
        let rest = inner[close + 1..].trim_start();
        let (external, rest) = match rest.strip_prefix("external") {
            Some(r) => (true, r.trim_start()),
            None => (false, rest),
        };
        let (compression, rest) = match rest.strip_prefix("compression") {
            Some(r) => {
                let r = r.trim_start();
                let close = r.find(')').filter(|_| r.starts_with('(')).ok_or_else(|| {
                    Diag::new(
                        "expected 'compression(uncompressed)' or 'compression(N)'",
                        r,
                    )
                })?;
                let kind = r[1..close].trim();
                let tag = match kind {
                    "uncompressed" => 1,
                    _ => parse_uint(kind, 255).filter(|&t| t > 0).ok_or_else(|| {
                        Diag::new(
                            "expected 'uncompressed' or a union tag 1..255 (the segment's compression_type)",
                            kind,
                        )
                    })? as u8,
                };
                (tag, r[close + 1..].trim_start())
            }
            None => (0, rest),
        };
        let hex = rest
            .strip_prefix('=')
            .map(str::trim)
            .ok_or_else(|| Diag::new("expected '= HEXBYTES'", rest))?;
        if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Diag::new(
                "expected an even number of hexadecimal digits",
                hex,
            ));
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0))
            .collect();
        self.draft.rodata.push(RodataDraft {
            bytes,
            external,
            compression,
        });
        Ok(())
    }

    fn global(&mut self, word: &'s str, rest: &'s str) -> Result<(), Diag<'s>> {
        if !self.draft.functions.is_empty() {
            return Err(Diag::new(
                "globals must be declared before the first function",
                word,
            ));
        }
        let (size, ty) = match word {
            "vm.global.i32" => (4, "i32"),
            "vm.global.f32" => (4, "f32"),
            "vm.global.i64" => (8, "i64"),
            "vm.global.f64" => (8, "f64"),
            _ => (0, "ref"),
        };
        let mut rest = rest;
        for modifier in ["private", "mutable"] {
            if let Some(r) = rest.strip_prefix(modifier) {
                if r.starts_with(char::is_whitespace) {
                    rest = r.trim_start();
                }
            }
        }
        let (symbol, init) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let name = parse_symbol(symbol)?;
        let name = name.as_ref();
        let init = init.trim();
        if let Some(value) = init.strip_prefix('=') {
            let (value, init_ty) = value.split_once(':').unwrap_or((value, ty));
            if parse_int(value.trim()) != Some(0) {
                return Err(Diag::new(
                    "only zero initializers are supported; initialize globals in an __init function",
                    value.trim(),
                ));
            }
            if size != 0 && init_ty.trim() != ty {
                return Err(Diag::new(
                    format!("initializer type must be {ty}"),
                    init_ty.trim(),
                ));
            }
        } else if !init.is_empty() && (size != 0 || !init.starts_with(':')) {
            return Err(Diag::new(
                "expected '= 0 : TYPE' or nothing after the global name",
                init,
            ));
        }
        if self.draft.globals.iter().any(|g| g.name == name) {
            return Err(Diag::new(
                format!("global @{name} is declared twice"),
                symbol,
            ));
        }
        self.draft.globals.push(GlobalDraft {
            name: name.to_string(),
            size,
            ordinal: 0,
        });
        Ok(())
    }

    fn function_header(&mut self, line_no: usize, rest: &'s str) -> Result<(), Diag<'s>> {
        self.draft.lay_out_globals();
        let (name, after_name) = split_symbol(rest)?;
        let open = rest.len() - after_name.len()
            + after_name
                .find('(')
                .ok_or_else(|| Diag::new("expected '(' after the function name", rest))?;
        if self.draft.function_ordinals.contains_key(name.as_ref()) {
            return Err(Diag::new(
                format!("function @{name} is defined twice"),
                &rest[..open],
            ));
        }
        let close = rest[open..]
            .find(')')
            .map(|c| c + open)
            .ok_or_else(|| Diag::new("expected ')' to close the argument list", &rest[open..]))?;
        let mut args = String::new();
        let mut ref_types = std::collections::HashMap::new();
        let (mut next_i32, mut next_ref) = (0u32, 0u32);
        for item in split_commas(&rest[open + 1..close]) {
            let colon = item
                .rfind(':')
                .ok_or_else(|| Diag::new("expected an argument like '%i0: i32'", item))?;
            let (reg, ty) = (item[..colon].trim(), item[colon + 1..].trim());
            let kind = cconv_kind(ty)?;
            if matches!(kind, 'I' | 'F') {
                // An i64/f64 argument starts at an even slot, as the
                // runtime places it (`exec::marshal_args`, IREE's rule).
                next_i32 = next_i32.div_ceil(2) * 2;
            }
            let expected = match kind {
                'r' => format!("%r{next_ref}"),
                'I' | 'F' => format!("%i{next_i32}:{}", next_i32 + 1),
                _ => format!("%i{next_i32}"),
            };
            if reg != expected {
                return Err(Diag::new(
                    format!("arguments take registers in order: expected {expected} here"),
                    reg,
                ));
            }
            match kind {
                'r' => {
                    ref_types.insert(next_ref as u16, ty.to_string());
                    next_ref += 1
                }
                'I' | 'F' => next_i32 += 2,
                _ => next_i32 += 1,
            }
            args.push(kind);
        }
        let after = rest[close + 1..].trim_start();
        let after = after
            .strip_prefix("->")
            .map(str::trim_start)
            .ok_or_else(|| Diag::new("expected '-> (results)' after the arguments", after))?;
        let results_text = after
            .strip_prefix('(')
            .ok_or_else(|| Diag::new("expected '(' to start the result types", after))?;
        let rclose = results_text
            .find(')')
            .ok_or_else(|| Diag::new("expected ')' to close the result types", after))?;
        let mut results = String::new();
        for ty in split_commas(&results_text[..rclose]) {
            let ty = ty.rsplit_once(':').map_or(ty, |(_, t)| t.trim());
            results.push(cconv_kind(ty)?);
        }
        let tail = results_text[rclose + 1..].trim();
        let (declared, tail) = directives::parse_function_clauses(tail)?;
        if tail != "{" {
            return Err(Diag::new(
                "expected '{' to open the function body",
                if tail.is_empty() { after } else { tail },
            ));
        }
        let or_v = |s: String| if s.is_empty() { "v".to_string() } else { s };
        let start = self.draft.bytecode.len();
        self.draft
            .bytecode
            .push(crate::bytecode::isa::Opcode::Block.info().code);
        self.func = Some(FunctionState {
            name: name.into_owned(),
            cconv: declared
                .cconv
                .clone()
                .unwrap_or_else(|| Some(format!("0{}_{}", or_v(args), or_v(results)))),
            line: line_no,
            current_line: line_no,
            start,
            blocks: 1,
            // Unlike the reference assembler, argument registers count:
            // without them a function that ignores an argument gets too
            // few registers and the reference runtime rejects the module.
            i32_count: next_i32,
            ref_count: next_ref,
            body_registers: (0, 0),
            requirements: FeatureBits::empty(),
            labels: Vec::new(),
            label_fixups: Vec::new(),
            locations: Vec::new(),
            open_label: None,
            instructions: 0,
            declared,
            ref_types,
        });
        Ok(())
    }

    /// A line inside a function body.
    fn function_line(&mut self, line_no: usize, line: &'s str) -> Result<(), Diag<'s>> {
        let Some(mut func) = self.func.take() else {
            return Ok(());
        };
        let result = self.body_line(&mut func, line_no, line);
        if line != "}" {
            self.func = Some(func);
        }
        result
    }

    fn body_line(
        &mut self,
        func: &mut FunctionState,
        line_no: usize,
        line: &'s str,
    ) -> Result<(), Diag<'s>> {
        let full = self.lines[line_no - 1];
        if line == "}" {
            self.finish_function(func, line_no);
            return Ok(());
        }
        if let Some(label) = line.strip_suffix(':').filter(|l| l.starts_with('^')) {
            let label = label.trim();
            if func.labels.iter().any(|(l, ..)| l == label) {
                return Err(Diag::new(format!("block {label} is defined twice"), label));
            }
            let pc = (self.draft.bytecode.len() - func.start) as u32;
            let pc = if func.labels.is_empty() && pc == 1 {
                0
            } else {
                self.draft
                    .bytecode
                    .push(crate::bytecode::isa::Opcode::Block.info().code);
                func.blocks += 1;
                pc
            };
            func.labels
                .push((label.to_string(), pc, line_no, column_of(full, label)));
            func.open_label = Some((line_no, label.to_string()));
            return Ok(());
        }
        let (inst_text, loc_text) = split_trailing_loc(line);
        let offset = (self.draft.bytecode.len() - func.start) as u32;
        let mark = self.draft.bytecode.len();
        let fixups = func.label_fixups.len();
        func.current_line = line_no;
        if let Err(d) = instr::assemble(&mut self.draft, func, inst_text) {
            // Keep going with the next line; drop this one's partial bytes.
            self.draft.bytecode.truncate(mark);
            func.label_fixups.truncate(fixups);
            return Err(d);
        }
        // Label fixups of this line carry its position for diagnostics.
        for fixup in &mut func.label_fixups[fixups..] {
            fixup.2 = line_no;
            fixup.3 = full.find(fixup.1.as_str()).map_or(1, |c| c + 1);
        }
        func.instructions += 1;
        func.open_label = None;
        if let Some(loc) = loc_text {
            let index = self
                .draft
                .locations
                .parse(loc)
                .map_err(|m| Diag::new(format!("bad location: {m}"), loc))?;
            if let Some(index) = index {
                func.locations.push((offset, index));
            }
        }
        Ok(())
    }

    fn finish_function(&mut self, func: &mut FunctionState, line_no: usize) {
        if let Some((label_line, label)) = func.open_label.take() {
            let col = column_of(self.lines[label_line - 1], label.as_str());
            let col = self.lines[label_line - 1]
                .find(&label)
                .map_or(col, |c| c + 1);
            self.error_at(
                label_line,
                col,
                format!("block {label} is empty: a block needs at least one instruction"),
            );
        }
        if func.instructions == 0 {
            self.error_at(
                line_no,
                1,
                format!("function @{} has no instructions", func.name),
            );
        }
        for (pos, label, l, c) in std::mem::take(&mut func.label_fixups) {
            match func.labels.iter().find(|(name, ..)| *name == label) {
                Some((_, pc, ..)) => {
                    self.draft.bytecode[pos..pos + 4].copy_from_slice(&pc.to_le_bytes());
                }
                None => self.error_at(l, c, format!("branch to undefined block {label}")),
            }
        }
        let length = self.draft.bytecode.len() - func.start;
        let declared = std::mem::take(&mut func.declared);
        self.check_declared_function_clauses(func, &declared);
        let (i32_count, ref_count) = declared
            .registers
            .unwrap_or((func.i32_count, func.ref_count));
        self.draft
            .function_ordinals
            .insert(func.name.clone(), self.draft.functions.len());
        self.draft.functions.push(FunctionDraft {
            name: std::mem::take(&mut func.name),
            cconv: std::mem::take(&mut func.cconv),
            offset: func.start as u32,
            length: length as u32,
            requirements: declared.requirements.unwrap_or(func.requirements),
            blocks: func.blocks,
            i32_count,
            ref_count,
            locations: std::mem::take(&mut func.locations),
            attrs: declared.attrs,
        });
        while self.draft.bytecode.len() % 8 != 0 {
            self.draft.bytecode.push(0);
        }
        if func.blocks > 0x7FFF || i32_count > 0x7FFF || ref_count > 0x3FFF {
            self.error_at(
                line_no,
                1,
                "function uses more than 32767 blocks or i32 registers, or more than 16383 ref registers",
            );
        }
    }

    /// A function's `registers(...)` and `requires(...)` clauses must cover
    /// what its instructions use (as the reference assembler counts them):
    /// irvm's verifier refuses a register past the declared count, which
    /// the reference's does not always do (it ran one such module), and
    /// the reference refuses a function whose instructions need a feature
    /// it does not declare.
    fn check_declared_function_clauses(
        &mut self,
        func: &FunctionState,
        declared: &DeclaredFunction,
    ) {
        let header = self.lines[func.line - 1];
        let column = |clause: &str| {
            header
                .find(clause)
                .map_or(1, |at| header[..at].chars().count() + 1)
        };
        if let Some((i32s, refs)) = declared.registers {
            let (used_i32s, used_refs) = func.body_registers;
            if i32s < used_i32s || refs < used_refs {
                self.error_at(
                    func.line,
                    column("registers("),
                    format!(
                        "registers(i32: {i32s}, ref: {refs}) is fewer than the function uses (i32: {}, ref: {})",
                        used_i32s, used_refs
                    ),
                );
            }
        }
        if let Some(requirements) = declared.requirements {
            let missing = func.requirements.difference(requirements);
            if !missing.is_empty() {
                let named =
                    |bits: FeatureBits| crate::loader::FeatureBits::from_bits_retain(bits.bits());
                let (requirements, missing) = (named(requirements), named(missing));
                self.error_at(
                    func.line,
                    column("requires("),
                    format!(
                        "requires({requirements}) leaves out {missing}, which the function's instructions need"
                    ),
                );
            }
        }
    }
}

/// `@name` or `@"quoted name"` → the name; nothing may follow it.
fn parse_symbol(text: &str) -> Result<Cow<'_, str>, Diag<'_>> {
    match split_symbol(text)? {
        (name, rest) if rest.trim().is_empty() => Ok(name),
        _ => Err(Diag::new(
            format!("expected a symbol like @name, found '{text}'"),
            text,
        )),
    }
}

/// The symbol at the start of `text` (`@name` or `@"quoted name"`) and the
/// text after it.
fn split_symbol(text: &str) -> Result<(Cow<'_, str>, &str), Diag<'_>> {
    match take_symbol(text) {
        Some((name, _, quoted, rest)) if quoted || !name.is_empty() => Ok((name, rest)),
        _ => {
            let word = text.split(char::is_whitespace).next().unwrap_or(text);
            Err(Diag::new(
                format!("expected a symbol like @name, found '{word}'"),
                word,
            ))
        }
    }
}

/// The name a call operand or export target `@...` spells, and whether it
/// was quoted (a quoted name is never read as `module:N`).
fn symbol_name(symbol: &str) -> (Cow<'_, str>, bool) {
    match take_symbol(symbol) {
        Some((name, _, quoted, rest)) if rest.trim().is_empty() => (name, quoted),
        _ => (
            Cow::Borrowed(symbol.strip_prefix('@').unwrap_or(symbol)),
            false,
        ),
    }
}

/// The calling-convention letter of a signature type.
fn cconv_kind(ty: &str) -> Result<char, Diag<'_>> {
    match ty {
        "i32" => Ok('i'),
        "i64" => Ok('I'),
        "f32" => Ok('f'),
        "f64" => Ok('F'),
        _ if ty.starts_with('!') => Ok('r'),
        _ => {
            let message = format!(
                "unsupported signature type '{ty}' (expected i32, i64, f32, f64 or a !vm ref type)"
            );
            Err(Diag::new(message, ty))
        }
    }
}
