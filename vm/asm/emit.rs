//! Writes a [`ModuleDraft`] as a size-prefixed `BytecodeModuleDef`
//! FlatBuffer with file identifier `IREE` — the archive `iree-as-module`
//! writes (no ZIP header, no external rodata).

use flatbuffers::{FlatBufferBuilder, WIPOffset};

use crate::loader::schema::{
    BytecodeLocationDef, BytecodeModuleDef, BytecodeModuleDefArgs, CallSiteLocDef,
    CallSiteLocDefArgs, DebugDatabaseDef, DebugDatabaseDefArgs, ExportFunctionDef,
    ExportFunctionDefArgs, FileLineColLocDef, FileLineColLocDefArgs, FunctionDescriptor,
    FunctionSignatureDef, FunctionSignatureDefArgs, FunctionSourceMapDef, FunctionSourceMapDefArgs,
    FusedLocDef, FusedLocDefArgs, ImportFlagBits, ImportFunctionDef, ImportFunctionDefArgs,
    LocationEntryDef, LocationTypeDef_, ModuleStateDef, ModuleStateDefArgs, NameLocDef,
    NameLocDefArgs, RodataSegmentDef, RodataSegmentDefArgs, TypeDef, TypeDefArgs,
};

use super::loc::LocEntry;
use super::ModuleDraft;

/// Bytecode version 17.0 as the module header stores it.
const BYTECODE_VERSION: u32 = 17 << 16;

/// The module file bytes, or why the draft does not fit the format.
pub(super) fn module_bytes(draft: &ModuleDraft) -> Result<Vec<u8>, String> {
    // Alignment padding depends on the order objects are written in; a few
    // orders are tried and the smallest result is kept.
    let mut best: Option<Vec<u8>> = None;
    // Large modules are written once.
    let orders = if draft.bytecode.len() > (1 << 20) {
        1
    } else {
        64
    };
    for order in 0..orders {
        let bytes = module_bytes_in_order(draft, order)?;
        if best.as_ref().is_none_or(|b| bytes.len() < b.len()) {
            best = Some(bytes);
        }
    }
    best.ok_or_else(|| "no module written".to_string())
}

/// One serialization. `order % 4` says where the bytecode vector is
/// written: last, first, right after the first type, or right after the
/// first function signature (after a table whose vtable leaves the buffer
/// 2 bytes off alignment, a vector can absorb that padding); `order / 4`
/// drops that many of the last function's trailing padding bytes (they
/// only align a following function); `order / 16` rotates the order the
/// type entries are written in (their table order stays).
fn module_bytes_in_order(draft: &ModuleDraft, order: u32) -> Result<Vec<u8>, String> {
    let trim = ((order >> 2) & 3) as usize;
    let rotate = (order >> 4) as usize;
    let code_end = draft
        .functions
        .last()
        .map_or(0, |f| (f.offset + f.length) as usize);
    let code = &draft.bytecode[..draft.bytecode.len().saturating_sub(trim).max(code_end)];
    if draft.bytecode.len() > i32::MAX as usize {
        return Err("module bytecode is larger than 2 GiB".to_string());
    }
    if draft.global_bytes > i32::MAX as u64 || draft.global_refs > i32::MAX as u64 {
        return Err("module state (globals) is larger than the format allows".to_string());
    }
    let place = order % 4;
    let mut fbb = FlatBufferBuilder::with_capacity(draft.bytecode.len() + 1024);
    let mut bytecode = (place == 1).then(|| fbb.create_vector(code));
    let types = (!draft.types.is_empty()).then(|| {
        let n = draft.types.len();
        let mut defs = vec![None; n];
        for k in 0..n {
            let i = (k + rotate) % n;
            let full_name = Some(fbb.create_shared_string(&draft.types[i]));
            defs[i] = Some(TypeDef::create(&mut fbb, &TypeDefArgs { full_name }));
            if place == 2 && bytecode.is_none() {
                bytecode = Some(fbb.create_vector(code));
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
                let signature = Some(signature(&mut fbb, &imp.cconv));
                let flags = if imp.optional {
                    ImportFlagBits::OPTIONAL
                } else {
                    ImportFlagBits::REQUIRED
                };
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
        signatures.push(signature(&mut fbb, &f.cconv));
        if place == 3 && bytecode.is_none() {
            bytecode = Some(fbb.create_vector(code));
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
            .map(|bytes| {
                let embedded_data = Some(fbb.create_vector(bytes));
                RodataSegmentDef::create(
                    &mut fbb,
                    &RodataSegmentDefArgs {
                        embedded_data,
                        ..Default::default()
                    },
                )
            })
            .collect();
        fbb.create_vector(&defs)
    });

    let module_state = (draft.global_bytes != 0 || draft.global_refs != 0).then(|| {
        ModuleStateDef::create(
            &mut fbb,
            &ModuleStateDefArgs {
                global_bytes_capacity: draft.global_bytes as i32,
                global_ref_count: draft.global_refs as i32,
            },
        )
    });

    let debug_database = debug_database(&mut fbb, draft);
    let bytecode = match bytecode {
        Some(b) => b,
        None => fbb.create_vector(code),
    };
    let name = fbb.create_string(&draft.name);

    let root = BytecodeModuleDef::create(
        &mut fbb,
        &BytecodeModuleDefArgs {
            name: Some(name),
            version: draft.version,
            requirements: draft.requirements,
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

fn signature<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    cconv: &str,
) -> WIPOffset<FunctionSignatureDef<'f>> {
    let calling_convention = Some(fbb.create_shared_string(cconv));
    FunctionSignatureDef::create(
        fbb,
        &FunctionSignatureDefArgs {
            calling_convention,
            ..Default::default()
        },
    )
}

/// The debug database, when any instruction carried a location: the
/// location table and one source map per function (in function order).
fn debug_database<'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    draft: &ModuleDraft,
) -> Option<WIPOffset<DebugDatabaseDef<'f>>> {
    if draft.locations.entries.is_empty() {
        return None;
    }
    let mut tags = Vec::with_capacity(draft.locations.entries.len());
    let mut entries = Vec::with_capacity(draft.locations.entries.len());
    for entry in &draft.locations.entries {
        let (tag, offset) = match entry {
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
        entries.push(WIPOffset::<LocationEntryDef>::new(offset));
    }
    let location_table_type = Some(fbb.create_vector(&tags));
    let location_table = Some(fbb.create_vector(&entries));
    let maps: Vec<_> = draft
        .functions
        .iter()
        .map(|f| {
            let local_name = Some(fbb.create_string(&f.name));
            let locs: Vec<BytecodeLocationDef> = f
                .locations
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
