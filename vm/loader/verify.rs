//! Load-time checks: FlatBuffer structure first, then the invariants the
//! accessors and the VM rely on (names present, tables consistent, every
//! function's bytecode and every external rodata segment in bounds).

use std::ops::Range;

use flatbuffers::VerifierOptions;

use super::archive::{self, ArchiveLayout};
use super::error::LoadError;
use super::features::{FeatureBits, SUPPORTED_FEATURES};
use super::flatcc_rules;
use super::schema::BytecodeModuleDef;

/// Bytecode major version this runtime executes.
pub const BYTECODE_VERSION_MAJOR: u16 = 17;
/// Newest bytecode minor version this runtime executes.
pub const BYTECODE_VERSION_MINOR: u16 = 0;
/// Largest i32 register count a function may declare.
pub const MAX_I32_REGISTERS: i16 = 0x7FFF;
/// Largest ref register count a function may declare.
pub const MAX_REF_REGISTERS: i16 = 0x3FFF;

/// Where a rodata segment's bytes are, in file coordinates.
#[derive(Debug, Clone)]
pub struct SegmentLoc {
    /// File byte range of the segment.
    pub range: Range<usize>,
    /// Whether it lives after the FlatBuffer rather than inside it.
    pub external: bool,
}

/// Which slice the FlatBuffer verifier accepted. Offsets inside a FlatBuffer
/// are relative, so both name the same tables; they differ only in where the
/// verifier measures alignment from (and so in which bytes it allowed the
/// buffer to reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifiedBase {
    /// The bytes after the size prefix. IREE's writers (flatcc) align the
    /// buffer this way.
    AfterPrefix,
    /// The bytes starting at the size prefix. `flatbuffers`'
    /// `finish_size_prefixed` aligns the buffer this way.
    WithPrefix,
}

/// Facts established by [`verify`] that accessors reuse.
#[derive(Debug)]
pub struct Verified {
    /// The slice accessors must read the root from.
    pub base: VerifiedBase,
    /// Every rodata segment's location.
    pub rodata: Box<[SegmentLoc]>,
}

/// Verifier limits for a FlatBuffer of `len` bytes: generous enough for any
/// real module, but bounded by the input size so hostile DAGs cannot make
/// verification take unbounded time.
pub fn verifier_options(len: usize) -> VerifierOptions {
    VerifierOptions {
        max_depth: 64,
        max_tables: (len / 4).max(1 << 20),
        max_apparent_size: len.saturating_mul(8).max(1 << 20),
        ignore_missing_null_terminator: false,
    }
}

/// Checks everything about the module at `layout` inside `file`.
pub fn verify(file: &[u8], layout: &ArchiveLayout) -> Result<Verified, LoadError> {
    let fb = &file[layout.flatbuffer.clone()];
    let with_prefix = &file[layout.flatbuffer.start - 4..layout.flatbuffer.end];
    let opts = verifier_options(with_prefix.len());
    // The Rust verifier insists on alignment relative to the slice start while
    // IREE's reader does not check alignment at all, so a buffer aligned for
    // either convention is accepted.
    let (def, base) = match flatbuffers::root_with_opts::<BytecodeModuleDef>(&opts, fb) {
        Ok(def) => (def, VerifiedBase::AfterPrefix),
        Err(first @ flatbuffers::InvalidFlatbuffer::Unaligned { .. }) => {
            match flatbuffers::size_prefixed_root_with_opts::<BytecodeModuleDef>(&opts, with_prefix)
            {
                Ok(def) => (def, VerifiedBase::WithPrefix),
                Err(_) => {
                    return Err(LoadError::Verification {
                        message: first.to_string(),
                    })
                }
            }
        }
        Err(e) => {
            return Err(LoadError::Verification {
                message: e.to_string(),
            })
        }
    };

    match base {
        VerifiedBase::AfterPrefix => flatcc_rules::check(fb, 0, 0)?,
        VerifiedBase::WithPrefix => flatcc_rules::check(with_prefix, 4, 4)?,
    }
    check_version(def.bytecode_version())?;
    check_features(
        "module".to_string(),
        FeatureBits::from_bits_retain(def.requirements().bits()),
    )?;
    if def.name().is_empty() {
        return Err(missing("name"));
    }
    check_names(&def)?;
    check_state(&def)?;
    check_functions(&def)?;
    let rodata = locate_rodata(file, fb, &def, layout.rodata_base)?;
    Ok(Verified { base, rodata })
}

fn missing(field: impl Into<String>) -> LoadError {
    LoadError::MissingField {
        field: field.into(),
    }
}

fn check_version(version: u32) -> Result<(), LoadError> {
    let major = (version >> 16) as u16;
    let minor = (version & 0xFFFF) as u16;
    if major != BYTECODE_VERSION_MAJOR || minor > BYTECODE_VERSION_MINOR {
        return Err(LoadError::UnsupportedVersion {
            major,
            minor,
            expected_major: BYTECODE_VERSION_MAJOR,
            expected_minor: BYTECODE_VERSION_MINOR,
        });
    }
    Ok(())
}

fn check_features(context: String, required: FeatureBits) -> Result<(), LoadError> {
    let missing = required.difference(SUPPORTED_FEATURES);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(LoadError::UnsupportedFeatures { context, missing })
    }
}

fn non_empty(value: Option<&str>) -> bool {
    value.is_some_and(|s| !s.is_empty())
}

fn check_names(def: &BytecodeModuleDef) -> Result<(), LoadError> {
    for (i, ty) in def.types().iter().flatten().enumerate() {
        if !non_empty(ty.full_name()) {
            return Err(missing(format!("types[{i}].full_name")));
        }
    }
    for (i, dep) in def.dependencies().iter().flatten().enumerate() {
        if !non_empty(dep.name()) {
            return Err(missing(format!("dependencies[{i}].name")));
        }
    }
    for (i, import) in def.imported_functions().iter().flatten().enumerate() {
        if !non_empty(import.full_name()) {
            return Err(missing(format!("imports[{i}].full_name")));
        }
    }
    for (i, export) in def.exported_functions().iter().flatten().enumerate() {
        if !non_empty(export.local_name()) {
            return Err(missing(format!("exports[{i}].local_name")));
        }
    }
    Ok(())
}

fn check_non_negative(field: impl FnOnce() -> String, value: i32) -> Result<(), LoadError> {
    if value < 0 {
        return Err(LoadError::NegativeValue {
            field: field(),
            value: value.into(),
        });
    }
    Ok(())
}

fn check_state(def: &BytecodeModuleDef) -> Result<(), LoadError> {
    if let Some(state) = def.module_state() {
        check_non_negative(
            || "module_state.global_bytes_capacity".into(),
            state.global_bytes_capacity(),
        )?;
        check_non_negative(
            || "module_state.global_ref_count".into(),
            state.global_ref_count(),
        )?;
    }
    for (i, seg) in def.rwdata_segments().iter().flatten().enumerate() {
        check_non_negative(
            || format!("rwdata_segments[{i}].byte_size"),
            seg.byte_size(),
        )?;
    }
    Ok(())
}

fn check_functions(def: &BytecodeModuleDef) -> Result<(), LoadError> {
    let descriptors = def.function_descriptors().map_or(0, |v| v.len());
    let signatures = def.function_signatures().map_or(0, |v| v.len());
    if descriptors != signatures {
        return Err(LoadError::FunctionTableMismatch {
            signatures,
            descriptors,
        });
    }
    for (i, export) in def.exported_functions().iter().flatten().enumerate() {
        let ordinal = export.internal_ordinal();
        if ordinal < 0 || ordinal as usize >= descriptors {
            return Err(LoadError::ExportOrdinalOutOfBounds {
                export: i,
                ordinal: ordinal.into(),
                count: descriptors,
            });
        }
    }

    let bytecode_len = def.bytecode_data().map_or(0, |v| v.len());
    for (index, desc) in def.function_descriptors().iter().flatten().enumerate() {
        let invalid = |reason: String| LoadError::InvalidFunctionDescriptor { index, reason };
        if desc.block_count() <= 0 {
            return Err(invalid(format!(
                "block_count is {}; functions need at least one block",
                desc.block_count()
            )));
        }
        let offset = i64::from(desc.bytecode_offset());
        let length = i64::from(desc.bytecode_length());
        if length <= 0 {
            return Err(invalid(format!(
                "bytecode_length is {length}; must be positive"
            )));
        }
        if offset < 0 || offset + length > bytecode_len as i64 {
            return Err(LoadError::FunctionOutOfBounds {
                index,
                offset,
                length,
                bytecode_len,
            });
        }
        let (i32_regs, ref_regs) = (desc.i32_register_count(), desc.ref_register_count());
        if !(0..=MAX_I32_REGISTERS).contains(&i32_regs) {
            return Err(invalid(format!(
                "i32_register_count {i32_regs} outside 0..={MAX_I32_REGISTERS}"
            )));
        }
        if !(0..=MAX_REF_REGISTERS).contains(&ref_regs) {
            return Err(invalid(format!(
                "ref_register_count {ref_regs} outside 0..={MAX_REF_REGISTERS}"
            )));
        }
        check_features(
            format!("functions[{index}]"),
            FeatureBits::from_bits_retain(desc.requirements().bits()),
        )?;
    }
    Ok(())
}

fn locate_rodata(
    file: &[u8],
    fb: &[u8],
    def: &BytecodeModuleDef,
    base: u64,
) -> Result<Box<[SegmentLoc]>, LoadError> {
    // Embedded vectors are sub-slices of `fb`, which is a sub-slice of `file`;
    // their file offset is the address difference.
    let file_addr = file.as_ptr() as usize;
    let fb_addr = fb.as_ptr() as usize;
    let file_len = file.len() as u64;
    let mut out = Vec::with_capacity(def.rodata_segments().map_or(0, |v| v.len()));
    for (index, seg) in def.rodata_segments().iter().flatten().enumerate() {
        if let Some(data) = seg.embedded_data() {
            let bytes = data.bytes();
            let start = bytes.as_ptr() as usize - file_addr;
            debug_assert!(bytes.as_ptr() as usize >= fb_addr);
            out.push(SegmentLoc {
                range: start..start + bytes.len(),
                external: false,
            });
            continue;
        }
        let (offset, length) = (seg.external_data_offset(), seg.external_data_length());
        let range = archive::external_range(base, offset, length, file_len).ok_or(
            LoadError::RodataOutOfBounds {
                index,
                base,
                offset,
                length,
                file_len,
            },
        )?;
        // In bounds of a slice, so both ends fit in usize.
        out.push(SegmentLoc {
            range: range.start as usize..range.end as usize,
            external: true,
        });
    }
    Ok(out.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_rules() {
        assert!(check_version(17 << 16).is_ok());
        let err = check_version((17 << 16) | 1).unwrap_err();
        assert!(err.to_string().contains("found 17.1"), "{err}");
        let err = check_version(16 << 16).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bytecode version mismatch: expected 17.x with minor <= 0, found 16.0"
        );
    }

    #[test]
    fn unknown_features_are_named() {
        let err =
            check_features("module".into(), FeatureBits::from_bits_retain(1 << 9)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "module requires unsupported features: bit 9"
        );
    }
}
