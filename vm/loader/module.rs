//! [`Module`]: a verified, immutable, cheaply clonable bytecode module with
//! zero-copy accessors that return plain Rust types.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::archive::{self, ArchiveLayout};
use super::bytes::ModuleBytes;
use super::debug_db::DebugDatabase;
use super::error::LoadError;
use super::features::FeatureBits;
use super::schema::{self, BytecodeModuleDef};
use super::verify::{self, SegmentLoc, VerifiedBase};

/// A loaded bytecode module.
///
/// Cloning is cheap (one `Arc`). All strings, bytecode and rodata returned
/// by accessors borrow from the backing bytes; nothing is copied at load.
#[derive(Clone)]
pub struct Module {
    inner: Arc<Inner>,
}

struct Inner {
    bytes: ModuleBytes,
    layout: ArchiveLayout,
    base: VerifiedBase,
    rodata: Box<[SegmentLoc]>,
    /// What a layer above made of the module once (the context's verified,
    /// lowered functions), kept for the next context it is registered in.
    /// Type-erased: the loader sits below the layers that fill it.
    derived: OnceLock<Box<dyn Any + Send + Sync>>,
}

/// A module this module depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency<'a> {
    /// Module name, e.g. `hal`.
    pub name: &'a str,
    /// Minimum module version that satisfies the dependency.
    pub minimum_version: u32,
    /// Whether loading may proceed without it (the `OPTIONAL` flag).
    pub optional: bool,
    /// The flag bits as stored: `REQUIRED` (1: the version is checked when
    /// the module is found), `OPTIONAL` (2: loading proceeds without it),
    /// and any others, kept so the module can be written out again.
    pub flags: u32,
}

/// An imported function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportDecl<'a> {
    /// `module.function`.
    pub full_name: &'a str,
    /// Calling convention such as `0ii_i`, when declared.
    pub calling_convention: Option<&'a str>,
    /// Signature attributes.
    pub attrs: Vec<(&'a str, &'a str)>,
    /// Whether linking may leave it unresolved (the `OPTIONAL` flag).
    pub optional: bool,
    /// The flag bits as stored: `REQUIRED` (1), `OPTIONAL` (2), and any
    /// others (no runtime reads them), kept so the module can be written
    /// out again.
    pub flags: u32,
}

/// An exported function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportDecl<'a> {
    /// Name without the module prefix.
    pub local_name: &'a str,
    /// Index of the implementing internal function (verified in range).
    pub internal_ordinal: usize,
}

/// Signature of an internal function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureDecl<'a> {
    /// Calling convention such as `0ii_i`, when declared.
    pub calling_convention: Option<&'a str>,
    /// Reflection attributes (`iree.abi.declaration`, ...).
    pub attrs: Vec<(&'a str, &'a str)>,
}

/// Where an internal function's bytecode is and what it needs to run. All
/// values were range-checked at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionDescriptor {
    /// Offset into [`Module::bytecode_data`].
    pub bytecode_offset: usize,
    /// Length in bytes (positive).
    pub bytecode_length: usize,
    /// Features the function needs.
    pub requirements: FeatureBits,
    /// Number of basic blocks (positive).
    pub block_count: u16,
    /// i32 register file size (at most 0x7FFF).
    pub i32_register_count: u16,
    /// ref register file size (at most 0x3FFF).
    pub ref_register_count: u16,
}

impl Module {
    /// Verifies a module held in memory (`Vec<u8>`, `Arc<[u8]>` or
    /// `&'static [u8]`), taking ownership of it.
    pub fn from_bytes(bytes: impl Into<ModuleBytes>) -> Result<Module, LoadError> {
        Module::load(bytes.into())
    }

    fn load(bytes: ModuleBytes) -> Result<Module, LoadError> {
        let file = bytes.as_slice();
        let layout = archive::parse(file)?;
        let verified = verify::verify(file, &layout)?;
        Ok(Module {
            inner: Arc::new(Inner {
                base: verified.base,
                rodata: verified.rodata,
                bytes,
                layout,
                derived: OnceLock::new(),
            }),
        })
    }

    /// A slot for what the library derives from the module once per module
    /// (rather than once per context): set at most once, shared by clones.
    pub(crate) fn derived(&self) -> &OnceLock<Box<dyn Any + Send + Sync>> {
        &self.inner.derived
    }

    /// The whole file (or buffer) the module was loaded from.
    pub fn file_bytes(&self) -> &[u8] {
        self.inner.bytes.as_slice()
    }

    /// The bytes of the module held on the heap (see
    /// [`ModuleBytes::heap_bytes`]): what registering it charges a
    /// context's memory budget.
    pub fn heap_bytes(&self) -> u64 {
        self.inner.bytes.heap_bytes()
    }

    /// Length of the whole file (or buffer).
    pub fn file_len(&self) -> usize {
        self.file_bytes().len()
    }

    /// File byte range of the FlatBuffer (after the size prefix).
    pub fn flatbuffer_range(&self) -> Range<usize> {
        self.inner.layout.flatbuffer.clone()
    }

    /// File offset where external rodata begins.
    pub fn rodata_base(&self) -> u64 {
        self.inner.layout.rodata_base
    }

    /// Raw generated view of the module table (for the accessors below;
    /// irvm's dump tool reaches it through `schema::module_def`).
    pub(crate) fn def(&self) -> BytecodeModuleDef<'_> {
        let range = &self.inner.layout.flatbuffer;
        let file = self.file_bytes();
        // SAFETY: `Inner` is only built by `Module::load` after
        // `verify::verify` ran the FlatBuffer verifier, with
        // `BytecodeModuleDef` as root, over exactly the slice named by
        // `self.inner.base`; the same slice is used here, and the backing
        // bytes are immutable for as long as `self` lives.
        unsafe {
            match self.inner.base {
                VerifiedBase::AfterPrefix => {
                    flatbuffers::root_unchecked::<BytecodeModuleDef>(&file[range.clone()])
                }
                VerifiedBase::WithPrefix => flatbuffers::size_prefixed_root_unchecked::<
                    BytecodeModuleDef,
                >(&file[range.start - 4..range.end]),
            }
        }
    }

    /// Module name (non-empty).
    pub fn name(&self) -> &str {
        self.def().name()
    }

    /// Module version, as used by dependents' `minimum_version`.
    pub fn version(&self) -> u32 {
        self.def().version()
    }

    /// Features the module as a whole needs.
    pub fn requirements(&self) -> FeatureBits {
        FeatureBits::from_bits_retain(self.def().requirements().bits())
    }

    /// Bytecode version as `(major, minor)`.
    pub fn bytecode_version(&self) -> (u16, u16) {
        let v = self.def().bytecode_version();
        ((v >> 16) as u16, (v & 0xFFFF) as u16)
    }

    /// Module-level reflection attributes.
    pub fn attrs(&self) -> Vec<(&str, &str)> {
        attr_pairs(self.def().attrs())
    }

    /// Type table: full names such as `i32`, `!vm.buffer`, `!vm.list<!vm.opaque>`.
    pub fn types(&self) -> Vec<&str> {
        let def = self.def();
        let types = def.types();
        types
            .iter()
            .flatten()
            .map(|t| t.full_name().unwrap_or(""))
            .collect()
    }

    /// Modules this module depends on.
    pub fn dependencies(&self) -> Vec<Dependency<'_>> {
        let def = self.def();
        let deps = def.dependencies();
        deps.iter()
            .flatten()
            .map(|d| Dependency {
                name: d.name().unwrap_or(""),
                minimum_version: d.minimum_version(),
                optional: d
                    .flags()
                    .contains(schema::ModuleDependencyFlagBits::OPTIONAL),
                flags: d.flags().bits(),
            })
            .collect()
    }

    /// Imported functions, in import-ordinal order.
    pub fn imports(&self) -> Vec<ImportDecl<'_>> {
        let def = self.def();
        let imports = def.imported_functions();
        imports
            .iter()
            .flatten()
            .map(|f| {
                let sig = f.signature();
                ImportDecl {
                    full_name: f.full_name().unwrap_or(""),
                    calling_convention: sig.and_then(|s| s.calling_convention()),
                    attrs: attr_pairs(sig.and_then(|s| s.attrs())),
                    optional: f.flags().contains(schema::ImportFlagBits::OPTIONAL),
                    flags: f.flags().bits(),
                }
            })
            .collect()
    }

    /// Exported functions, in export-ordinal order.
    pub fn exports(&self) -> Vec<ExportDecl<'_>> {
        let def = self.def();
        let exports = def.exported_functions();
        exports
            .iter()
            .flatten()
            .map(|e| ExportDecl {
                local_name: e.local_name().unwrap_or(""),
                internal_ordinal: e.internal_ordinal() as usize,
            })
            .collect()
    }

    /// Finds an export by local name.
    pub fn export(&self, local_name: &str) -> Option<ExportDecl<'_>> {
        self.exports()
            .into_iter()
            .find(|e| e.local_name == local_name)
    }

    /// Number of internal functions.
    pub fn function_count(&self) -> usize {
        self.def().function_descriptors().map_or(0, |v| v.len())
    }

    /// Descriptor of internal function `ordinal`, or `None` if out of range.
    pub fn function_descriptor(&self, ordinal: usize) -> Option<FunctionDescriptor> {
        let descs = self.def().function_descriptors()?;
        if ordinal >= descs.len() {
            return None;
        }
        let d = descs.get(ordinal);
        // All fields were checked non-negative at load.
        Some(FunctionDescriptor {
            bytecode_offset: d.bytecode_offset() as usize,
            bytecode_length: d.bytecode_length() as usize,
            requirements: FeatureBits::from_bits_retain(d.requirements().bits()),
            block_count: d.block_count() as u16,
            i32_register_count: d.i32_register_count() as u16,
            ref_register_count: d.ref_register_count() as u16,
        })
    }

    /// Bytecode of internal function `ordinal` (a verified sub-slice of
    /// [`bytecode_data`](Self::bytecode_data)), or `None` if out of range.
    pub fn function_bytecode(&self, ordinal: usize) -> Option<&[u8]> {
        let d = self.function_descriptor(ordinal)?;
        self.bytecode_data()
            .get(d.bytecode_offset..d.bytecode_offset + d.bytecode_length)
    }

    /// Signature of internal function `ordinal`, or `None` if out of range.
    pub fn function_signature(&self, ordinal: usize) -> Option<SignatureDecl<'_>> {
        let sigs = self.def().function_signatures()?;
        if ordinal >= sigs.len() {
            return None;
        }
        let s = sigs.get(ordinal);
        Some(SignatureDecl {
            calling_convention: s.calling_convention(),
            attrs: attr_pairs(s.attrs()),
        })
    }

    /// All function bytecode.
    pub fn bytecode_data(&self) -> &[u8] {
        self.def().bytecode_data().map_or(&[], |v| v.bytes())
    }

    /// Number of rodata segments.
    pub fn rodata_count(&self) -> usize {
        self.inner.rodata.len()
    }

    /// Bytes of rodata segment `index` (embedded or external, zero-copy), or
    /// `None` if out of range.
    pub fn rodata(&self, index: usize) -> Option<&[u8]> {
        let loc = self.inner.rodata.get(index)?;
        self.file_bytes().get(loc.range.clone())
    }

    /// Byte range of rodata segment `index` within [`file_bytes`](Self::file_bytes),
    /// or `None` if out of range.
    pub fn rodata_range(&self, index: usize) -> Option<Range<usize>> {
        self.inner.rodata.get(index).map(|loc| loc.range.clone())
    }

    /// Whether rodata segment `index` is stored after the FlatBuffer; `None`
    /// if out of range.
    pub fn rodata_is_external(&self, index: usize) -> Option<bool> {
        self.inner.rodata.get(index).map(|loc| loc.external)
    }

    /// The compression rodata segment `index` states (`compression_type`,
    /// a union: 0 when the segment states none, 1 for
    /// `UncompressedDataDef`, the only kind IREE defines; neither runtime
    /// reads it, the bytes are the data either way); `None` if out of
    /// range.
    pub fn rodata_compression(&self, index: usize) -> Option<u8> {
        let segments = self.def().rodata_segments()?;
        (index < segments.len()).then(|| segments.get(index).compression_type_type().0)
    }

    /// Byte sizes of the rwdata segments (verified non-negative).
    pub fn rwdata_sizes(&self) -> Vec<i32> {
        let def = self.def();
        let segs = def.rwdata_segments();
        segs.iter().flatten().map(|s| s.byte_size()).collect()
    }

    /// The debug database, if the module has one. Nothing is parsed until
    /// its accessors are used.
    pub fn debug_database(&self) -> Option<DebugDatabase<'_>> {
        self.def()
            .debug_database()
            .map(|def| DebugDatabase::new(self, def))
    }

    /// Bytes of primitive global storage each instance needs.
    pub fn global_bytes_capacity(&self) -> usize {
        self.def()
            .module_state()
            .map_or(0, |s| s.global_bytes_capacity() as usize)
    }

    /// Number of ref globals each instance needs.
    pub fn global_ref_count(&self) -> usize {
        self.def()
            .module_state()
            .map_or(0, |s| s.global_ref_count() as usize)
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name())
            .field("bytecode_version", &self.bytecode_version())
            .field("functions", &self.function_count())
            .field("file_len", &self.file_len())
            .finish_non_exhaustive()
    }
}

fn attr_pairs<'a>(
    attrs: Option<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<schema::AttrDef<'a>>>>,
) -> Vec<(&'a str, &'a str)> {
    attrs
        .iter()
        .flatten()
        .map(|a| (a.key().unwrap_or(""), a.value().unwrap_or("")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_is_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Module>();
        assert_eq!(std::mem::size_of::<Module>(), std::mem::size_of::<usize>());
    }
}
