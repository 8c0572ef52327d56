//! [`Module`]: a verified, immutable bytecode module over borrowed bytes.

use super::archive::{self, ArchiveLayout};
use super::debug_db::DebugDatabase;
use super::error::LoadError;
use super::schema::{self, BytecodeModuleDef, FeatureBits};
use std::path::Path;
use std::sync::Arc;

/// Bytecode major version this runtime executes.
pub const SUPPORTED_BYTECODE_MAJOR: u32 = 17;
/// Newest bytecode minor version this runtime executes.
pub const SUPPORTED_BYTECODE_MINOR: u32 = 0;
/// Runtime features this build provides (as IREE: f32, f64, yield, unwind).
pub const SUPPORTED_FEATURES: FeatureBits = FeatureBits::EXT_F32
    .union(FeatureBits::EXT_F64)
    .union(FeatureBits::YIELD)
    .union(FeatureBits::UNWIND);

/// Upper bound on FlatBuffer tables visited during verification.
const MAX_TABLES: usize = 64 * 1024 * 1024;
/// Upper bound on FlatBuffer nesting depth.
const MAX_DEPTH: usize = 64;

/// The bytes a module is read from. Nothing is copied out of them.
pub enum ModuleBytes {
    /// A read-only memory map of a file.
    Mapped(memmap2::Mmap),
    /// Bytes owned by the module.
    Owned(Arc<[u8]>),
    /// Bytes that live for the whole program (e.g. `include_bytes!`).
    Static(&'static [u8]),
}

impl ModuleBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            ModuleBytes::Mapped(m) => m,
            ModuleBytes::Owned(b) => b,
            ModuleBytes::Static(s) => s,
        }
    }
}

impl From<&'static [u8]> for ModuleBytes {
    fn from(b: &'static [u8]) -> Self {
        ModuleBytes::Static(b)
    }
}

impl From<Vec<u8>> for ModuleBytes {
    fn from(b: Vec<u8>) -> Self {
        ModuleBytes::Owned(b.into())
    }
}

impl From<Arc<[u8]>> for ModuleBytes {
    fn from(b: Arc<[u8]>) -> Self {
        ModuleBytes::Owned(b)
    }
}

/// A module dependency declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependency<'a> {
    /// The module name.
    pub name: &'a str,
    /// Lowest acceptable version.
    pub minimum_version: u32,
    /// Whether the module may be absent.
    pub optional: bool,
}

/// An imported function declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportDecl<'a> {
    /// `module.function`.
    pub full_name: &'a str,
    /// The calling convention the import expects, if declared.
    pub calling_convention: Option<&'a str>,
    /// Reflection attributes of the signature.
    pub attrs: Vec<(&'a str, &'a str)>,
    /// Whether the import may stay unresolved.
    pub optional: bool,
}

/// An exported function declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportDecl<'a> {
    /// Name without the module prefix.
    pub local_name: &'a str,
    /// The internal function implementing it.
    pub internal_ordinal: usize,
}

/// A function's signature as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureDecl<'a> {
    /// The calling convention, e.g. `0ii_i`.
    pub calling_convention: Option<&'a str>,
    /// Reflection attributes.
    pub attrs: Vec<(&'a str, &'a str)>,
}

/// Where a function's bytecode is and how large its frame is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FunctionDescriptor {
    /// Offset into `bytecode_data`.
    pub bytecode_offset: usize,
    /// Length in bytes.
    pub bytecode_length: usize,
    /// Features the function needs beyond the module's.
    pub requirements: FeatureBits,
    /// Number of basic blocks.
    pub block_count: u16,
    /// Number of i32 registers.
    pub i32_register_count: u16,
    /// Number of ref registers.
    pub ref_register_count: u16,
}

struct ModuleInner {
    bytes: ModuleBytes,
    layout: ArchiveLayout,
    descriptors: Vec<FunctionDescriptor>,
    /// Absolute byte ranges of every rodata segment in `bytes`.
    rodata: Vec<(usize, usize, bool)>,
}

/// A loaded, verified bytecode module. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name())
            .field("functions", &self.function_count())
            .finish()
    }
}

/// Formats feature bits like IREE: `EXT_F32|EXT_F64`.
pub(crate) fn format_features(bits: FeatureBits) -> String {
    let names = [
        (FeatureBits::EXT_F32, "EXT_F32"),
        (FeatureBits::EXT_F64, "EXT_F64"),
        (FeatureBits::YIELD, "YIELD"),
        (FeatureBits::UNWIND, "UNWIND"),
    ];
    let mut parts: Vec<String> = names
        .iter()
        .filter(|(b, _)| bits.contains(*b))
        .map(|(_, n)| n.to_string())
        .collect();
    let unknown = bits.bits() & !FeatureBits::all().bits();
    if unknown != 0 {
        parts.push(format!("0x{unknown:X}"));
    }
    parts.join("|")
}

fn attrs_of<'a>(
    v: Option<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<schema::AttrDef<'a>>>>,
) -> Vec<(&'a str, &'a str)> {
    v.map(|v| {
        v.iter()
            .map(|a| (a.key().unwrap_or(""), a.value().unwrap_or("")))
            .collect()
    })
    .unwrap_or_default()
}

impl Module {
    /// Maps `path` and loads it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Module, LoadError> {
        let path = path.as_ref();
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only; like every mmap-based loader we
        // rely on the file not being truncated or rewritten while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Self::from_bytes(ModuleBytes::Mapped(map))
    }

    /// Loads a module from bytes it borrows (or owns), without copying them.
    pub fn from_bytes(bytes: impl Into<ModuleBytes>) -> Result<Module, LoadError> {
        let bytes = bytes.into();
        let data = bytes.as_slice();
        let layout = archive::parse(data)?;
        let fb = &data[layout.flatbuffer_start..layout.flatbuffer_start + layout.flatbuffer_len];
        if fb.len() < 8 || &fb[4..8] != b"IREE" {
            let found = fb.get(4..8).unwrap_or(&[]);
            return Err(LoadError::BadIdentifier {
                found: String::from_utf8_lossy(found).into_owned(),
            });
        }
        let opts = flatbuffers::VerifierOptions {
            max_depth: MAX_DEPTH,
            max_tables: MAX_TABLES,
            max_apparent_size: usize::MAX / 2,
            ignore_missing_null_terminator: false,
        };
        let def = flatbuffers::root_with_opts::<BytecodeModuleDef>(&opts, fb)?;
        let (descriptors, rodata) = check_structure(&def, data.len() as u64, &layout, fb)?;
        Ok(Module {
            inner: Arc::new(ModuleInner {
                bytes,
                layout,
                descriptors,
                rodata,
            }),
        })
    }

    fn fb(&self) -> &[u8] {
        let l = &self.inner.layout;
        &self.inner.bytes.as_slice()[l.flatbuffer_start..l.flatbuffer_start + l.flatbuffer_len]
    }

    /// The root table (for tools that need raw access).
    pub fn def(&self) -> BytecodeModuleDef<'_> {
        // SAFETY: the same bytes passed `root_with_opts` verification in
        // `from_bytes`, and they are immutable for the module's lifetime.
        unsafe { flatbuffers::root_unchecked::<BytecodeModuleDef>(self.fb()) }
    }

    /// The whole file (or buffer) the module was loaded from.
    pub fn file_bytes(&self) -> &[u8] {
        self.inner.bytes.as_slice()
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> usize {
        self.inner.bytes.as_slice().len()
    }

    /// File offsets of the FlatBuffer.
    pub fn flatbuffer_range(&self) -> std::ops::Range<usize> {
        let l = &self.inner.layout;
        l.flatbuffer_start..l.flatbuffer_start + l.flatbuffer_len
    }

    /// Module name (namespace of its exports).
    pub fn name(&self) -> &str {
        self.def().name()
    }

    /// Module version.
    pub fn version(&self) -> u32 {
        self.def().version()
    }

    /// Module-level feature requirements.
    pub fn requirements(&self) -> FeatureBits {
        self.def().requirements()
    }

    /// Bytecode version as (major, minor).
    pub fn bytecode_version(&self) -> (u32, u32) {
        let v = self.def().bytecode_version();
        (v >> 16, v & 0xFFFF)
    }

    /// Module-level reflection attributes.
    pub fn attrs(&self) -> Vec<(&str, &str)> {
        attrs_of(self.def().attrs())
    }

    /// The type table: full names such as `i32` or `!vm.buffer`.
    pub fn types(&self) -> Vec<&str> {
        self.def()
            .types()
            .map(|v| v.iter().map(|t| t.full_name().unwrap_or("")).collect())
            .unwrap_or_default()
    }

    /// Number of types in the type table.
    pub fn type_count(&self) -> usize {
        self.def().types().map(|v| v.len()).unwrap_or(0)
    }

    /// Declared module dependencies.
    pub fn dependencies(&self) -> Vec<Dependency<'_>> {
        self.def()
            .dependencies()
            .map(|v| {
                v.iter()
                    .map(|d| Dependency {
                        name: d.name().unwrap_or(""),
                        minimum_version: d.minimum_version(),
                        optional: d
                            .flags()
                            .contains(schema::ModuleDependencyFlagBits::OPTIONAL),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Imported functions, by import ordinal.
    pub fn imports(&self) -> Vec<ImportDecl<'_>> {
        self.def()
            .imported_functions()
            .map(|v| {
                v.iter()
                    .map(|i| ImportDecl {
                        full_name: i.full_name().unwrap_or(""),
                        calling_convention: i.signature().and_then(|s| s.calling_convention()),
                        attrs: attrs_of(i.signature().and_then(|s| s.attrs())),
                        optional: i.flags().contains(schema::ImportFlagBits::OPTIONAL),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Number of imports.
    pub fn import_count(&self) -> usize {
        self.def()
            .imported_functions()
            .map(|v| v.len())
            .unwrap_or(0)
    }

    /// Exported functions, by export ordinal.
    pub fn exports(&self) -> Vec<ExportDecl<'_>> {
        self.def()
            .exported_functions()
            .map(|v| {
                v.iter()
                    .map(|e| ExportDecl {
                        local_name: e.local_name().unwrap_or(""),
                        internal_ordinal: e.internal_ordinal() as usize,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The internal ordinal of the export named `name`.
    pub fn lookup_export(&self, name: &str) -> Option<usize> {
        self.exports()
            .into_iter()
            .find(|e| e.local_name == name)
            .map(|e| e.internal_ordinal)
    }

    /// Number of internal functions.
    pub fn function_count(&self) -> usize {
        self.inner.descriptors.len()
    }

    /// The descriptor of internal function `ordinal` (verified at load).
    pub fn function_descriptor(&self, ordinal: usize) -> Option<FunctionDescriptor> {
        self.inner.descriptors.get(ordinal).copied()
    }

    /// All function descriptors.
    pub fn function_descriptors(&self) -> &[FunctionDescriptor] {
        &self.inner.descriptors
    }

    /// The bytecode of internal function `ordinal`.
    pub fn function_bytecode(&self, ordinal: usize) -> Option<&[u8]> {
        let d = self.inner.descriptors.get(ordinal)?;
        self.bytecode_data()
            .get(d.bytecode_offset..d.bytecode_offset + d.bytecode_length)
    }

    /// The declared signature of internal function `ordinal`.
    pub fn function_signature(&self, ordinal: usize) -> Option<SignatureDecl<'_>> {
        let sigs = self.def().function_signatures()?;
        if ordinal >= sigs.len() {
            return None;
        }
        let s = sigs.get(ordinal);
        Some(SignatureDecl {
            calling_convention: s.calling_convention(),
            attrs: attrs_of(s.attrs()),
        })
    }

    /// The name of internal function `ordinal`: its export name, else its
    /// debug-database name, else `None`.
    pub fn function_name(&self, ordinal: usize) -> Option<&str> {
        if let Some(e) = self
            .exports()
            .into_iter()
            .find(|e| e.internal_ordinal == ordinal)
        {
            return Some(e.local_name);
        }
        self.debug_database()
            .and_then(|db| db.source_map(self, ordinal))
            .and_then(|m| m.local_name)
    }

    /// All bytecode of the module.
    pub fn bytecode_data(&self) -> &[u8] {
        self.def().bytecode_data().map(|v| v.bytes()).unwrap_or(&[])
    }

    /// Number of rodata segments.
    pub fn rodata_count(&self) -> usize {
        self.inner.rodata.len()
    }

    /// The bytes of rodata segment `ordinal`, borrowed from the file.
    pub fn rodata(&self, ordinal: usize) -> Option<&[u8]> {
        let &(start, len, _) = self.inner.rodata.get(ordinal)?;
        self.inner.bytes.as_slice().get(start..start + len)
    }

    /// Whether rodata segment `ordinal` lives after the FlatBuffer.
    pub fn rodata_is_external(&self, ordinal: usize) -> bool {
        self.inner.rodata.get(ordinal).is_some_and(|r| r.2)
    }

    /// Sizes of the read-write data segments.
    pub fn rwdata_sizes(&self) -> Vec<usize> {
        self.def()
            .rwdata_segments()
            .map(|v| v.iter().map(|s| s.byte_size().max(0) as usize).collect())
            .unwrap_or_default()
    }

    /// Bytes of primitive global storage per context.
    pub fn global_bytes_capacity(&self) -> usize {
        self.def()
            .module_state()
            .map(|s| s.global_bytes_capacity().max(0) as usize)
            .unwrap_or(0)
    }

    /// Number of global ref slots per context.
    pub fn global_ref_count(&self) -> usize {
        self.def()
            .module_state()
            .map(|s| s.global_ref_count().max(0) as usize)
            .unwrap_or(0)
    }

    /// The debug database, if the module has one. Nothing is parsed until
    /// its accessors are used.
    pub fn debug_database(&self) -> Option<DebugDatabase<'_>> {
        self.def()
            .debug_database()
            .map(|db| DebugDatabase::new(db, self.fb()))
    }
}

type Checked = (Vec<FunctionDescriptor>, Vec<(usize, usize, bool)>);

/// Checks everything about the FlatBuffer that later accessors rely on.
fn check_structure(
    def: &BytecodeModuleDef,
    file_len: u64,
    layout: &ArchiveLayout,
    fb: &[u8],
) -> Result<Checked, LoadError> {
    let rodata_base = layout.rodata_base;
    let v = def.bytecode_version();
    let (major, minor) = (v >> 16, v & 0xFFFF);
    if major != SUPPORTED_BYTECODE_MAJOR || minor > SUPPORTED_BYTECODE_MINOR {
        return Err(LoadError::BytecodeVersion {
            major,
            minor,
            expected_major: SUPPORTED_BYTECODE_MAJOR,
            expected_minor: SUPPORTED_BYTECODE_MINOR,
        });
    }
    let check_features = |required: FeatureBits| -> Result<(), LoadError> {
        let missing = FeatureBits::from_bits_retain(required.bits() & !SUPPORTED_FEATURES.bits());
        if missing.bits() != 0 {
            return Err(LoadError::MissingFeatures {
                missing: format_features(missing),
                available: format_features(SUPPORTED_FEATURES),
                required: format_features(required),
            });
        }
        Ok(())
    };
    check_features(def.requirements())?;

    let data_len = def.bytecode_data().map(|v| v.len()).unwrap_or(0);
    let mut descriptors = Vec::new();
    if let Some(descs) = def.function_descriptors() {
        descriptors.reserve(descs.len());
        for (i, d) in descs.iter().enumerate() {
            let (offset, length) = (d.bytecode_offset() as i64, d.bytecode_length() as i64);
            if offset < 0 || length < 0 || offset + length > data_len as i64 {
                return Err(LoadError::FunctionOutOfBounds {
                    ordinal: i,
                    offset,
                    length,
                    data_len,
                });
            }
            let count = |what: &str, n: i16| -> Result<u16, LoadError> {
                u16::try_from(n).map_err(|_| {
                    LoadError::Invalid(format!("function {i} has a negative {what} ({n})"))
                })
            };
            check_features(d.requirements())?;
            descriptors.push(FunctionDescriptor {
                bytecode_offset: offset as usize,
                bytecode_length: length as usize,
                requirements: d.requirements(),
                block_count: count("block count", d.block_count())?,
                i32_register_count: count("i32 register count", d.i32_register_count())?,
                ref_register_count: count("ref register count", d.ref_register_count())?,
            });
        }
    }
    let sig_count = def.function_signatures().map(|v| v.len()).unwrap_or(0);
    if sig_count != descriptors.len() {
        return Err(LoadError::Invalid(format!(
            "function_signatures has {sig_count} entries but function_descriptors has {}",
            descriptors.len()
        )));
    }
    if let Some(exports) = def.exported_functions() {
        for (i, e) in exports.iter().enumerate() {
            let o = e.internal_ordinal();
            if o < 0 || o as usize >= descriptors.len() {
                return Err(LoadError::Invalid(format!(
                    "export {i} ('{}') names internal function {o} but the module has {}",
                    e.local_name().unwrap_or("?"),
                    descriptors.len()
                )));
            }
            if e.local_name().is_none_or(str::is_empty) {
                return Err(LoadError::Invalid(format!("export {i} has no name")));
            }
        }
    }
    if let Some(imports) = def.imported_functions() {
        for (i, imp) in imports.iter().enumerate() {
            if imp.full_name().is_none_or(|n| !n.contains('.')) {
                return Err(LoadError::Invalid(format!(
                    "import {i} has no fully-qualified name (module.function), found {:?}",
                    imp.full_name().unwrap_or("")
                )));
            }
        }
    }
    if let Some(types) = def.types() {
        for (i, t) in types.iter().enumerate() {
            if t.full_name().is_none_or(str::is_empty) {
                return Err(LoadError::Invalid(format!("type {i} has no name")));
            }
        }
    }
    for (what, n) in def
        .module_state()
        .map(|s| {
            [
                ("global_bytes_capacity", s.global_bytes_capacity()),
                ("global_ref_count", s.global_ref_count()),
            ]
        })
        .unwrap_or_default()
    {
        if n < 0 {
            return Err(LoadError::Invalid(format!(
                "module_state.{what} is negative ({n})"
            )));
        }
    }
    if let Some(rw) = def.rwdata_segments() {
        for (i, s) in rw.iter().enumerate() {
            if s.byte_size() < 0 {
                return Err(LoadError::Invalid(format!(
                    "rwdata segment {i} has a negative size"
                )));
            }
        }
    }

    // Rodata: embedded vectors are inside the (verified) FlatBuffer; record
    // their absolute file offsets. External ranges are checked against the file.
    let fb_addr = fb.as_ptr() as usize;
    let mut rodata = Vec::new();
    if let Some(segs) = def.rodata_segments() {
        for (i, s) in segs.iter().enumerate() {
            if let Some(embedded) = s.embedded_data() {
                let bytes = embedded.bytes();
                // The vector is a verified subslice of `fb`, which starts at
                // `flatbuffer_start` in the file.
                let rel = bytes.as_ptr() as usize - fb_addr;
                rodata.push((layout.flatbuffer_start + rel, bytes.len(), false));
            } else {
                let off = s.external_data_offset();
                let len = s.external_data_length();
                let start = rodata_base.checked_add(off);
                let end = start.and_then(|st| st.checked_add(len));
                match (start, end) {
                    (Some(st), Some(e)) if e <= file_len => {
                        let st = usize::try_from(st).map_err(|_| {
                            LoadError::Invalid(format!(
                                "rodata segment {i} offset does not fit in memory"
                            ))
                        })?;
                        let l = usize::try_from(len).map_err(|_| {
                            LoadError::Invalid(format!(
                                "rodata segment {i} length does not fit in memory"
                            ))
                        })?;
                        rodata.push((st, l, true));
                    }
                    _ => {
                        return Err(LoadError::RodataOutOfBounds {
                            ordinal: i,
                            start: rodata_base.saturating_add(off),
                            length: len,
                            file_len,
                        })
                    }
                }
            }
        }
    }
    Ok((descriptors, rodata))
}
