//! Writes a [`ModuleDraft`] as a size-prefixed `BytecodeModuleDef`
//! FlatBuffer with file identifier `IREE` — the archive `iree-as-module`
//! writes (no ZIP header) — followed, when segments are `external`, by
//! their bytes: from the FlatBuffer's end aligned up to 64 bytes (the
//! loader's rodata base), each at an offset aligned to 64.

use flatbuffers::{FlatBufferBuilder, WIPOffset};

use crate::loader::schema::{
    AttrDef, AttrDefArgs, BytecodeLocationDef, BytecodeModuleDef, BytecodeModuleDefArgs,
    CallSiteLocDef, CallSiteLocDefArgs, CompressionTypeDef, DebugDatabaseDef, DebugDatabaseDefArgs,
    ExportFunctionDef, ExportFunctionDefArgs, FileLineColLocDef, FileLineColLocDefArgs,
    FunctionDescriptor, FunctionSignatureDef, FunctionSignatureDefArgs, FunctionSourceMapDef,
    FunctionSourceMapDefArgs, FusedLocDef, FusedLocDefArgs, ImportFlagBits, ImportFunctionDef,
    ImportFunctionDefArgs, LocationEntryDef, LocationTypeDef_, ModuleDependencyDef,
    ModuleDependencyDefArgs, ModuleDependencyFlagBits, ModuleStateDef, ModuleStateDefArgs,
    NameLocDef, NameLocDefArgs, RodataSegmentDef, RodataSegmentDefArgs, TypeDef, TypeDefArgs,
};

use super::loc::LocEntry;
use super::ModuleDraft;

/// Bytecode version 17.0 as the module header stores it.
const BYTECODE_VERSION: u32 = 17 << 16;

/// Alignment of external rodata: of the base and of each segment's offset.
const EXTERNAL_ALIGNMENT: u64 = 64;

/// Where each external segment goes, relative to the rodata base (`None`:
/// embedded), and the bytes they take in all.
fn external_offsets(draft: &ModuleDraft) -> (Vec<Option<u64>>, u64) {
    let mut end = 0u64;
    let offsets = draft
        .rodata
        .iter()
        .map(|segment| {
            segment.external.then(|| {
                let offset = end.next_multiple_of(EXTERNAL_ALIGNMENT);
                end = offset + segment.bytes.len() as u64;
                offset
            })
        })
        .collect();
    (offsets, end)
}

/// The module file bytes, or why the draft does not fit the format.
pub(super) fn module_bytes(draft: &ModuleDraft) -> Result<Vec<u8>, String> {
    // Alignment padding depends on the order objects are written in; a few
    // orders are tried and the smallest result is kept.
    let mut best: Option<Vec<u8>> = None;
    // Large modules are written once.
    let orders = if draft.bytecode.len() > (1 << 20) {
        1
    } else {
        PLACES * 4
    };
    let (offsets, external_len) = external_offsets(draft);
    for order in (0..orders).filter(|&o| !repeats_an_earlier_order(draft, o)) {
        let bytes = module_bytes_in_order(draft, order, &offsets)?;
        if best.as_ref().is_none_or(|b| bytes.len() < b.len()) {
            best = Some(bytes);
        }
    }
    let mut file = best.ok_or_else(|| "no module written".to_string())?;
    if external_len > 0 {
        let base = (file.len() as u64).next_multiple_of(EXTERNAL_ALIGNMENT);
        let total = usize::try_from(base + external_len)
            .map_err(|_| "external rodata does not fit in memory".to_string())?;
        file.resize(total, 0);
        for (segment, offset) in draft.rodata.iter().zip(&offsets) {
            if let Some(offset) = offset {
                let at = (base + offset) as usize;
                file[at..at + segment.bytes.len()].copy_from_slice(&segment.bytes);
            }
        }
    }
    Ok(file)
}

/// Room for the whole FlatBuffer, so the builder need not grow (growing
/// copies and zeroes its buffer, byte by byte in an unoptimized build):
/// the byte vectors, and a generous 128 bytes per other object.
fn capacity_estimate(draft: &ModuleDraft) -> usize {
    let embedded: usize = draft
        .rodata
        .iter()
        .filter(|s| !s.external)
        .map(|s| s.bytes.len())
        .sum();
    let strings: usize = draft
        .imports
        .iter()
        .map(|i| i.full_name.len())
        .sum::<usize>()
        + draft.types.iter().map(String::len).sum::<usize>();
    let objects = draft.imports.len()
        + draft.types.len()
        + draft.rodata.len()
        + draft.exports.len()
        + 2 * draft.functions.len()
        + draft.locations.entries.len()
        + draft
            .functions
            .iter()
            .map(|f| f.locations.len())
            .sum::<usize>()
        + draft
            .source_maps
            .iter()
            .flatten()
            .map(|m| m.locations.len() + 1)
            .sum::<usize>();
    draft.bytecode.len() + embedded + strings + 128 * objects + 4096
}

/// `N` bytes pushed with one copy.
struct ByteChunk<'b, const N: usize>(&'b [u8; N]);

impl<const N: usize> flatbuffers::Push for ByteChunk<'_, N> {
    type Output = [u8; N];

    unsafe fn push(&self, dst: &mut [u8], _written_len: usize) {
        dst[..N].copy_from_slice(self.0);
    }
}

/// A `[uint8]` vector laid out exactly as `create_vector` lays it out, but
/// copied in chunks of 4 KiB and 64 bytes: `create_vector` writes byte by
/// byte, which was a quarter of the time an unoptimized build spends
/// assembling a module (writing it up to 16 times over, see [`module_bytes`]).
fn byte_vector<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    bytes: &[u8],
) -> WIPOffset<flatbuffers::Vector<'f, u8>> {
    const SMALL: usize = 64;
    const LARGE: usize = 4096;
    if bytes.len() < 4 * SMALL {
        return fbb.create_vector(bytes);
    }
    fbb.start_vector::<u8>(bytes.len());
    // The builder writes back to front: the last bytes go first, one at a
    // time up to a multiple of 64 bytes, then 64-byte chunks up to a
    // multiple of 4 KiB, then 4 KiB chunks.
    let mut end = bytes.len();
    while end % SMALL != 0 {
        end -= 1;
        fbb.push(bytes[end]);
    }
    while end % LARGE != 0 {
        end -= SMALL;
        push_chunk::<SMALL>(fbb, &bytes[end..end + SMALL]);
    }
    while end > 0 {
        end -= LARGE;
        push_chunk::<LARGE>(fbb, &bytes[end..end + LARGE]);
    }
    fbb.end_vector::<u8>(bytes.len())
}

/// Pushes `chunk` (exactly `N` bytes) with one copy.
fn push_chunk<const N: usize>(fbb: &mut FlatBufferBuilder<'_>, chunk: &[u8]) {
    if let Ok(chunk) = <&[u8; N]>::try_from(chunk) {
        fbb.push(ByteChunk(chunk));
    }
}

/// Whether `order` writes exactly what a smaller order wrote (skipped: the
/// first of equal results is kept anyway): a rotation of the types by a
/// multiple of their number is none, and "after the first type" is "last"
/// when there are no types.
fn repeats_an_earlier_order(draft: &ModuleDraft, order: u32) -> bool {
    let place = order % PLACES;
    let rotate = (order / PLACES) as usize;
    (rotate > 0 && rotate >= draft.types.len()) || (place == 2 && draft.types.is_empty())
}

/// How many places [`module_bytes_in_order`] tries for the bytecode vector.
const PLACES: u32 = 4;

/// The `[AttrDef]` vector of `attrs` (`None` when empty).
fn attributes<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    attrs: &[(String, String)],
) -> Option<WIPOffset<flatbuffers::Vector<'f, flatbuffers::ForwardsUOffset<AttrDef<'f>>>>> {
    if attrs.is_empty() {
        return None;
    }
    let defs: Vec<_> = attrs
        .iter()
        .map(|(key, value)| {
            let key = Some(fbb.create_string(key));
            let value = Some(fbb.create_string(value));
            AttrDef::create(fbb, &AttrDefArgs { key, value })
        })
        .collect();
    Some(fbb.create_vector(&defs))
}

/// One serialization. `order % PLACES` says where the bytecode vector is
/// written: last, first, right after the first type, or right after the
/// first function signature (after a table whose vtable leaves the buffer
/// 2 bytes off alignment, a vector can absorb that padding); `order /
/// PLACES` rotates the order the type entries are written
/// in (their table order stays). The bytecode is written whole, the last
/// function's padding to 8 bytes included, as iree-as-module writes it.
fn module_bytes_in_order(
    draft: &ModuleDraft,
    order: u32,
    external_offsets: &[Option<u64>],
) -> Result<Vec<u8>, String> {
    let rotate = (order / PLACES) as usize;
    let code = draft.bytecode.as_slice();
    if draft.bytecode.len() > i32::MAX as usize {
        return Err("module bytecode is larger than 2 GiB".to_string());
    }
    if draft.global_bytes > i32::MAX as u64 || draft.global_refs > i32::MAX as u64 {
        return Err("module state (globals) is larger than the format allows".to_string());
    }
    let place = order % PLACES;
    let mut fbb = FlatBufferBuilder::with_capacity(capacity_estimate(draft));
    let mut bytecode = (place == 1).then(|| byte_vector(&mut fbb, code));
    let types = (!draft.types.is_empty()).then(|| {
        let n = draft.types.len();
        let mut defs = vec![None; n];
        for k in 0..n {
            let i = (k + rotate) % n;
            let full_name = Some(fbb.create_shared_string(&draft.types[i]));
            defs[i] = Some(TypeDef::create(&mut fbb, &TypeDefArgs { full_name }));
            if place == 2 && bytecode.is_none() {
                bytecode = Some(byte_vector(&mut fbb, code));
            }
        }
        let defs: Vec<_> = defs.into_iter().flatten().collect();
        fbb.create_vector(&defs)
    });

    let imports = (!draft.imports.is_empty()).then(|| {
        let defs: Vec<_> = draft
            .imports
            .iter()
            .map(|imp| {
                let full_name = Some(fbb.create_string(&imp.full_name));
                // An import declaring neither calling convention nor
                // attributes has no signature.
                let signature = (imp.cconv.is_some() || !imp.attrs.is_empty())
                    .then(|| signature(&mut fbb, imp.cconv.as_deref(), &imp.attrs));
                let flags = ImportFlagBits::from_bits_retain(imp.flags);
                ImportFunctionDef::create(
                    &mut fbb,
                    &ImportFunctionDefArgs {
                        full_name,
                        signature,
                        flags,
                    },
                )
            })
            .collect();
        fbb.create_vector(&defs)
    });

    let descriptors: Vec<FunctionDescriptor> = draft
        .functions
        .iter()
        .map(|f| {
            FunctionDescriptor::new(
                f.offset as i32,
                f.length as i32,
                f.requirements,
                0,
                f.blocks as i16,
                f.i32_count as i16,
                f.ref_count as i16,
            )
        })
        .collect();
    let mut signatures = Vec::with_capacity(draft.functions.len());
    for f in &draft.functions {
        signatures.push(signature(&mut fbb, f.cconv.as_deref(), &f.attrs));
        if place == 3 && bytecode.is_none() {
            bytecode = Some(byte_vector(&mut fbb, code));
        }
    }
    let descriptors = fbb.create_vector(&descriptors);
    let signatures = fbb.create_vector(&signatures);

    let exports = (!draft.exports.is_empty()).then(|| {
        let defs: Vec<_> = draft
            .exports
            .iter()
            .map(|(export, function, _)| {
                let local_name = Some(fbb.create_string(export));
                let internal_ordinal = draft.internal_function(function).unwrap_or(0) as i32;
                ExportFunctionDef::create(
                    &mut fbb,
                    &ExportFunctionDefArgs {
                        local_name,
                        internal_ordinal,
                    },
                )
            })
            .collect();
        fbb.create_vector(&defs)
    });

    let rodata = (!draft.rodata.is_empty()).then(|| {
        let defs: Vec<_> = draft
            .rodata
            .iter()
            .zip(external_offsets)
            .map(|(segment, external)| {
                // A stated compression is an empty table under its tag
                // (`UncompressedDataDef` has no fields).
                let compression_type = (segment.compression != 0).then(|| {
                    let start = fbb.start_table();
                    fbb.end_table(start).as_union_value()
                });
                let compression_type_type = CompressionTypeDef(segment.compression);
                match external {
                    Some(offset) => RodataSegmentDef::create(
                        &mut fbb,
                        &RodataSegmentDefArgs {
                            compression_type_type,
                            compression_type,
                            external_data_offset: *offset,
                            external_data_length: segment.bytes.len() as u64,
                            ..Default::default()
                        },
                    ),
                    None => {
                        let embedded_data = Some(byte_vector(&mut fbb, &segment.bytes));
                        RodataSegmentDef::create(
                            &mut fbb,
                            &RodataSegmentDefArgs {
                                compression_type_type,
                                compression_type,
                                embedded_data,
                                ..Default::default()
                            },
                        )
                    }
                }
            })
            .collect();
        fbb.create_vector(&defs)
    });

    let (global_bytes, global_refs) = draft
        .declared_state
        .unwrap_or((draft.global_bytes, draft.global_refs));
    let module_state = (global_bytes != 0 || global_refs != 0).then(|| {
        ModuleStateDef::create(
            &mut fbb,
            &ModuleStateDefArgs {
                global_bytes_capacity: global_bytes as i32,
                global_ref_count: global_refs as i32,
            },
        )
    });
    let attrs = attributes(&mut fbb, &draft.attrs);
    let dependencies = (!draft.dependencies.is_empty()).then(|| {
        let defs: Vec<_> = draft
            .dependencies
            .iter()
            .map(|d| {
                let name = Some(fbb.create_string(&d.name));
                let flags = ModuleDependencyFlagBits::from_bits_retain(d.flags);
                ModuleDependencyDef::create(
                    &mut fbb,
                    &ModuleDependencyDefArgs {
                        name,
                        minimum_version: d.minimum_version,
                        flags,
                    },
                )
            })
            .collect();
        fbb.create_vector(&defs)
    });

    let debug_database = debug_database(&mut fbb, draft);
    let bytecode = match bytecode {
        Some(b) => b,
        None => byte_vector(&mut fbb, code),
    };
    let name = fbb.create_string(&draft.name);

    let root = BytecodeModuleDef::create(
        &mut fbb,
        &BytecodeModuleDefArgs {
            name: Some(name),
            version: draft.version,
            requirements: draft.declared_requirements.unwrap_or(draft.requirements),
            attrs,
            dependencies,
            types,
            imported_functions: imports,
            exported_functions: exports,
            function_signatures: Some(signatures),
            rodata_segments: rodata,
            module_state,
            function_descriptors: Some(descriptors),
            bytecode_version: BYTECODE_VERSION,
            bytecode_data: Some(bytecode),
            debug_database,
            ..Default::default()
        },
    );
    fbb.finish_size_prefixed(root, Some("IREE"));
    Ok(fbb.finished_data().to_vec())
}

/// A `FunctionSignatureDef`; without `cconv` it has no calling convention.
fn signature<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    cconv: Option<&str>,
    attrs: &[(String, String)],
) -> WIPOffset<FunctionSignatureDef<'f>> {
    let calling_convention = cconv.map(|c| fbb.create_shared_string(c));
    let attrs = attributes(fbb, attrs);
    FunctionSignatureDef::create(
        fbb,
        &FunctionSignatureDefArgs {
            calling_convention,
            attrs,
        },
    )
}

/// A vector of union tables: each entry an offset to its table, or 0 for
/// an entry of type NONE (`create_vector` would make 0 a relative offset).
fn union_table_vector<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    tables: &[flatbuffers::UOffsetT],
) -> WIPOffset<flatbuffers::Vector<'f, flatbuffers::ForwardsUOffset<LocationEntryDef<'f>>>> {
    fbb.start_vector::<WIPOffset<LocationEntryDef>>(tables.len());
    for &table in tables.iter().rev() {
        if table == 0 {
            fbb.push(0u32);
        } else {
            fbb.push(WIPOffset::<LocationEntryDef>::new(table));
        }
    }
    fbb.end_vector(tables.len())
}

/// The debug database, when any instruction carried a location: the
/// location table and one source map per function (in function order).
fn debug_database<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    draft: &ModuleDraft,
) -> Option<WIPOffset<DebugDatabaseDef<'f>>> {
    if draft.locations.entries.is_empty() && draft.source_maps.is_none() {
        return None;
    }
    let mut tags = Vec::with_capacity(draft.locations.entries.len());
    let mut entries = Vec::with_capacity(draft.locations.entries.len());
    for entry in &draft.locations.entries {
        let (tag, offset) = match entry {
            // An entry of no kind has no table: offset 0, as iree-compile
            // writes it (IREE's verifier refuses a NONE element that points
            // at anything).
            LocEntry::None => (LocationTypeDef_::NONE, 0),
            LocEntry::CallSite { callee, caller } => (
                LocationTypeDef_::CallSiteLocDef,
                CallSiteLocDef::create(
                    fbb,
                    &CallSiteLocDefArgs {
                        callee: *callee,
                        caller: *caller,
                    },
                )
                .value(),
            ),
            LocEntry::FileLineCol { file, line, col } => {
                let filename = Some(fbb.create_string(file));
                (
                    LocationTypeDef_::FileLineColLocDef,
                    FileLineColLocDef::create(
                        fbb,
                        &FileLineColLocDefArgs {
                            filename,
                            line: *line,
                            column: *col,
                        },
                    )
                    .value(),
                )
            }
            LocEntry::Fused {
                metadata,
                locations,
            } => {
                let metadata = metadata.as_ref().map(|m| fbb.create_string(m));
                let locations = Some(fbb.create_vector(locations));
                (
                    LocationTypeDef_::FusedLocDef,
                    FusedLocDef::create(
                        fbb,
                        &FusedLocDefArgs {
                            metadata,
                            locations,
                        },
                    )
                    .value(),
                )
            }
            LocEntry::Name { name, child } => {
                let name = Some(fbb.create_string(name));
                // An absent child is left out of the table (not stored as
                // a sentinel), which is how readers tell it is absent.
                // A child of 0 equals the schema default, which the builder
                // would leave out: force defaults while writing this table.
                fbb.force_defaults(child.is_some());
                let offset = NameLocDef::create(
                    fbb,
                    &NameLocDefArgs {
                        name,
                        child_location: child.unwrap_or(0),
                    },
                )
                .value();
                fbb.force_defaults(false);
                (LocationTypeDef_::NameLocDef, offset)
            }
        };
        tags.push(tag);
        entries.push(offset);
    }
    let location_table_type = Some(fbb.create_vector(&tags));
    let location_table = Some(union_table_vector(fbb, &entries));
    let per_function: Vec<(&str, &[(u32, i32)])> = match &draft.source_maps {
        Some(maps) => maps
            .iter()
            .map(|m| (m.name.as_str(), m.locations.as_slice()))
            .collect(),
        None => draft
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.locations.as_slice()))
            .collect(),
    };
    let maps: Vec<_> = per_function
        .into_iter()
        .map(|(name, locations)| {
            let local_name = Some(fbb.create_string(name));
            let locs: Vec<BytecodeLocationDef> = locations
                .iter()
                .map(|&(offset, loc)| BytecodeLocationDef::new(offset as i32, loc))
                .collect();
            let locations = Some(fbb.create_vector(&locs));
            FunctionSourceMapDef::create(
                fbb,
                &FunctionSourceMapDefArgs {
                    local_name,
                    locations,
                },
            )
        })
        .collect();
    let functions = Some(fbb.create_vector(&maps));
    Some(DebugDatabaseDef::create(
        fbb,
        &DebugDatabaseDefArgs {
            location_table_type,
            location_table,
            functions,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_vectors_are_laid_out_as_create_vector_lays_them_out() {
        for len in [0, 1, 63, 255, 256, 300, 4095, 4096, 4097, 10_000, 70_001] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let build = |chunked: bool| {
                let mut fbb = FlatBufferBuilder::new();
                // Something before it, so alignment padding comes into play.
                let _ = fbb.create_string("x");
                let vector = if chunked {
                    byte_vector(&mut fbb, &bytes)
                } else {
                    fbb.create_vector(&bytes)
                };
                let value = vector.value();
                fbb.finish_minimal(vector);
                (value, fbb.finished_data().to_vec())
            };
            assert_eq!(build(true), build(false), "{len} bytes");
        }
    }
}
