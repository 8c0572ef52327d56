//! The structural rules IREE's FlatBuffer verifier (flatcc's
//! `verifier.c`, run by `iree_vm_bytecode_module_create` and by
//! `iree-dump-module`) checks and the `flatbuffers` crate's verifier does
//! not, so that irvm refuses every module IREE refuses at load:
//!
//! - a vtable is at least 4 bytes (its own size and the table's size);
//! - a table's size (the vtable's second entry) fits in the buffer after
//!   the table, and every field of the schema the vtable lists lies inside
//!   that size;
//! - no offset to a table, vector or string is 0 (an offset to itself);
//! - a union's value is present only with a type, and not with type NONE;
//!   a union vector (the debug database's location table) has as many
//!   values as types, a value for each type but NONE and none for NONE,
//!   and each value is verified as its type's table at load (the crate's
//!   bindings read the location table lazily, as tables of no fields).
//!
//! Runs after the crate's verifier, on the slice it accepted; reads are
//! bounds-checked all the same, so a rule it skipped cannot make this pass
//! read outside the buffer. Errors name the table by its path from the
//! root (`exported_functions[2]`), the field, and the byte of the
//! FlatBuffer (counted after the size prefix).

use std::fmt;

use super::error::LoadError;

/// What a field of a table holds, with the size it occupies in the table.
#[derive(Clone, Copy)]
enum Field {
    /// A scalar or struct of this many bytes stored inline.
    Inline(u16),
    /// An offset to a string.
    String,
    /// An offset to a table.
    Table(&'static TableDef),
    /// An offset to a vector of tables.
    Tables(&'static TableDef),
    /// An offset to a vector of scalars or structs of this many bytes each.
    Scalars(u16),
    /// A union's type byte (the value is the next field).
    UnionType,
    /// A union's value: an offset to the table of the previous field's type.
    Union(&'static [(u8, &'static TableDef)]),
    /// A union vector's types: an offset to a vector of type bytes.
    UnionTypes,
    /// A union vector's values (the types are the previous field).
    UnionVector(&'static [(u8, &'static TableDef)]),
}

/// A table of the schema: its name and its fields in id order.
struct TableDef {
    name: &'static str,
    fields: &'static [(&'static str, Field)],
}

// The schema of `schema/bytecode_module_def.fbs` (IREE's
// `bytecode_module_def.fbs`), field by field in id order.
static ATTR: TableDef = TableDef {
    name: "AttrDef",
    fields: &[("key", Field::String), ("value", Field::String)],
};
static TYPE: TableDef = TableDef {
    name: "TypeDef",
    fields: &[("full_name", Field::String)],
};
static SIGNATURE: TableDef = TableDef {
    name: "FunctionSignatureDef",
    fields: &[
        ("calling_convention", Field::String),
        ("attrs", Field::Tables(&ATTR)),
    ],
};
static DEPENDENCY: TableDef = TableDef {
    name: "ModuleDependencyDef",
    fields: &[
        ("name", Field::String),
        ("minimum_version", Field::Inline(4)),
        ("flags", Field::Inline(4)),
    ],
};
static IMPORT: TableDef = TableDef {
    name: "ImportFunctionDef",
    fields: &[
        ("full_name", Field::String),
        ("signature", Field::Table(&SIGNATURE)),
        ("flags", Field::Inline(4)),
    ],
};
static EXPORT: TableDef = TableDef {
    name: "ExportFunctionDef",
    fields: &[
        ("local_name", Field::String),
        ("internal_ordinal", Field::Inline(4)),
    ],
};
static UNCOMPRESSED: TableDef = TableDef {
    name: "UncompressedDataDef",
    fields: &[],
};
static RODATA: TableDef = TableDef {
    name: "RodataSegmentDef",
    fields: &[
        ("compression_type_type", Field::UnionType),
        ("compression_type", Field::Union(&[(1, &UNCOMPRESSED)])),
        ("embedded_data", Field::Scalars(1)),
        ("external_data_offset", Field::Inline(8)),
        ("external_data_length", Field::Inline(8)),
    ],
};
static RWDATA: TableDef = TableDef {
    name: "RwdataSegmentDef",
    fields: &[("byte_size", Field::Inline(4))],
};
static MODULE_STATE: TableDef = TableDef {
    name: "ModuleStateDef",
    fields: &[
        ("global_bytes_capacity", Field::Inline(4)),
        ("global_ref_count", Field::Inline(4)),
    ],
};
static CALL_SITE_LOC: TableDef = TableDef {
    name: "CallSiteLocDef",
    fields: &[("callee", Field::Inline(4)), ("caller", Field::Inline(4))],
};
static FILE_LINE_COL_LOC: TableDef = TableDef {
    name: "FileLineColLocDef",
    fields: &[
        ("filename", Field::String),
        ("line", Field::Inline(4)),
        ("column", Field::Inline(4)),
    ],
};
static FUSED_LOC: TableDef = TableDef {
    name: "FusedLocDef",
    fields: &[
        ("metadata", Field::String),
        ("locations", Field::Scalars(4)),
    ],
};
static NAME_LOC: TableDef = TableDef {
    name: "NameLocDef",
    fields: &[
        ("name", Field::String),
        ("child_location", Field::Inline(4)),
    ],
};
static SOURCE_MAP: TableDef = TableDef {
    name: "FunctionSourceMapDef",
    fields: &[
        ("local_name", Field::String),
        ("locations", Field::Scalars(8)),
    ],
};
static DEBUG_DATABASE: TableDef = TableDef {
    name: "DebugDatabaseDef",
    fields: &[
        ("location_table_type", Field::UnionTypes),
        (
            "location_table",
            Field::UnionVector(&[
                (1, &CALL_SITE_LOC),
                (2, &FILE_LINE_COL_LOC),
                (3, &FUSED_LOC),
                (4, &NAME_LOC),
            ]),
        ),
        ("functions", Field::Tables(&SOURCE_MAP)),
    ],
};
static MODULE: TableDef = TableDef {
    name: "BytecodeModuleDef",
    fields: &[
        ("name", Field::String),
        ("version", Field::Inline(4)),
        ("requirements", Field::Inline(4)),
        ("attrs", Field::Tables(&ATTR)),
        ("types", Field::Tables(&TYPE)),
        ("dependencies", Field::Tables(&DEPENDENCY)),
        ("imported_functions", Field::Tables(&IMPORT)),
        ("exported_functions", Field::Tables(&EXPORT)),
        ("function_signatures", Field::Tables(&SIGNATURE)),
        ("rodata_segments", Field::Tables(&RODATA)),
        ("rwdata_segments", Field::Tables(&RWDATA)),
        ("module_state", Field::Table(&MODULE_STATE)),
        ("function_descriptors", Field::Scalars(20)),
        ("bytecode_version", Field::Inline(4)),
        ("bytecode_data", Field::Scalars(1)),
        ("debug_database", Field::Table(&DEBUG_DATABASE)),
    ],
};

/// Size of a uoffset, and of a vector's or string's length.
const UOFFSET: usize = 4;

/// Checks flatcc's rules on the FlatBuffer `buf` whose root offset is at
/// `root_at` (0, or 4 for a slice that starts at the size prefix);
/// `origin` is subtracted from positions in errors so that they count
/// from the byte after the size prefix.
pub fn check(buf: &[u8], root_at: usize, origin: usize) -> Result<(), LoadError> {
    let walker = Walker { buf, origin };
    let root = walker.follow(root_at, || "root table".to_string())?;
    walker.table(root, &MODULE, &Path::Root(MODULE.name))
}

/// Where a table, vector or string lies, from the root table
/// (`BytecodeModuleDef.exported_functions[2]`): written out only for an
/// error, as a module holds hundreds of thousands of elements.
#[derive(Clone, Copy)]
enum Path<'a> {
    /// The root table, by its schema name.
    Root(&'static str),
    /// A field of the table at the path.
    Field(&'a Path<'a>, &'static str),
    /// An element of the vector at the path.
    Element(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Element(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

struct Walker<'a> {
    buf: &'a [u8],
    origin: usize,
}

impl Walker<'_> {
    fn error(&self, at: usize, what: impl Into<String>, reason: impl Into<String>) -> LoadError {
        LoadError::Structure {
            what: what.into(),
            offset: at.saturating_sub(self.origin),
            reason: reason.into(),
        }
    }

    fn bytes<const N: usize>(
        &self,
        at: usize,
        what: &dyn Fn() -> String,
    ) -> Result<[u8; N], LoadError> {
        at.checked_add(N)
            .and_then(|end| self.buf.get(at..end))
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| self.error(at, what(), "lies past the end of the buffer"))
    }

    fn u16_at(&self, at: usize, what: &dyn Fn() -> String) -> Result<usize, LoadError> {
        Ok(u16::from_le_bytes(self.bytes(at, what)?).into())
    }

    fn u32_at(&self, at: usize, what: &dyn Fn() -> String) -> Result<usize, LoadError> {
        Ok(u32::from_le_bytes(self.bytes(at, what)?) as usize)
    }

    /// The position the uoffset at `at` points to; an offset of 0 (to
    /// itself) is refused, as flatcc refuses it.
    fn follow(&self, at: usize, what: impl Fn() -> String) -> Result<usize, LoadError> {
        let offset = self.u32_at(at, &what)?;
        if offset == 0 {
            return Err(self.error(at, what(), "offset is 0 (points at itself)"));
        }
        let target = at
            .checked_add(offset)
            .filter(|&target| target < self.buf.len())
            .ok_or_else(|| {
                self.error(
                    at,
                    what(),
                    format!("offset {offset} points past the end of the buffer"),
                )
            })?;
        // Tables, vectors and strings start at 4-byte boundaries of the
        // buffer (which starts at one in either base).
        if target % UOFFSET != 0 {
            let byte = target - self.origin;
            return Err(self.error(
                at,
                what(),
                format!("offset {offset} points at byte {byte}, not 4-byte aligned"),
            ));
        }
        Ok(target)
    }

    fn table(&self, pos: usize, def: &TableDef, path: &Path<'_>) -> Result<(), LoadError> {
        let what = || {
            if matches!(path, Path::Root(_)) {
                format!("table {path}")
            } else {
                format!("table {path} ({})", def.name)
            }
        };
        let soffset = i64::from(i32::from_le_bytes(self.bytes(pos, &what)?));
        let vtable = usize::try_from(pos as i64 - soffset).map_err(|_| {
            self.error(
                pos,
                what(),
                format!("vtable offset {soffset} points before the buffer"),
            )
        })?;
        let vsize = self.u16_at(vtable, &what)?;
        if vsize < 4 {
            return Err(self.error(
                vtable,
                what(),
                format!("vtable is {vsize} bytes; it needs at least 4 (its size and the table's)"),
            ));
        }
        let tsize = self.u16_at(vtable + 2, &what)?;
        let left = self.buf.len() - pos;
        if tsize > left {
            return Err(self.error(
                pos,
                what(),
                format!("table size {tsize} runs past the end of the buffer ({left} bytes left)"),
            ));
        }
        let entry = |id: usize| -> Result<usize, LoadError> {
            let at = 4 + 2 * id;
            if at >= vsize {
                return Ok(0);
            }
            self.u16_at(vtable + at, &what)
        };
        for (id, &(name, field)) in def.fields.iter().enumerate() {
            let offset = entry(id)?;
            if offset == 0 {
                continue;
            }
            let size = match field {
                Field::Inline(n) => usize::from(n),
                Field::UnionType => 1,
                _ => UOFFSET,
            };
            let field_what = || format!("field {path}.{name}");
            if offset + size > tsize {
                return Err(self.error(
                    pos + offset,
                    field_what(),
                    format!(
                        "field at table offset {offset} ({size} bytes) lies outside the table's {tsize} bytes"
                    ),
                ));
            }
            let at = pos + offset;
            // flatcc checks each field's alignment; 8-byte fields only to 4
            // here, as the buffer may start at 4 modulo 8 (IREE's files).
            let align = size.min(UOFFSET);
            if at % align != 0 {
                return Err(self.error(
                    at,
                    field_what(),
                    format!("field at table offset {offset} is not {align}-byte aligned"),
                ));
            }
            let child = Path::Field(path, name);
            match field {
                Field::Inline(_) | Field::UnionTypes => {
                    if let Field::UnionTypes = field {
                        let target = self.follow(at, field_what)?;
                        self.vector(target, 1, &child)?;
                    }
                }
                Field::UnionType => {
                    let ty = self.bytes::<1>(at, &field_what)?[0];
                    let value = entry(id + 1)?;
                    if ty == 0 && value != 0 {
                        return Err(self.error(
                            at,
                            field_what(),
                            "union type NONE with a value present",
                        ));
                    }
                }
                Field::String => {
                    let target = self.follow(at, field_what)?;
                    self.string(target, &child)?;
                }
                Field::Table(sub) => {
                    let target = self.follow(at, field_what)?;
                    self.table(target, sub, &child)?;
                }
                Field::Tables(sub) => {
                    let target = self.follow(at, field_what)?;
                    let count = self.vector(target, UOFFSET, &child)?;
                    for i in 0..count {
                        let element = target + UOFFSET + UOFFSET * i;
                        let path = Path::Element(&child, i);
                        let table = self.follow(element, || format!("element {path}"))?;
                        self.table(table, sub, &path)?;
                    }
                }
                Field::Scalars(n) => {
                    let target = self.follow(at, field_what)?;
                    self.vector(target, usize::from(n), &child)?;
                }
                Field::Union(kinds) => {
                    let type_offset = if id > 0 { entry(id - 1)? } else { 0 };
                    if type_offset == 0 {
                        return Err(self.error(at, field_what(), "union value without a type"));
                    }
                    let ty = self.bytes::<1>(pos + type_offset, &field_what)?[0];
                    let target = self.follow(at, field_what)?;
                    if let Some((_, sub)) = kinds.iter().find(|(k, _)| *k == ty) {
                        self.table(target, sub, &child)?;
                    }
                }
                Field::UnionVector(kinds) => {
                    let type_offset = if id > 0 { entry(id - 1)? } else { 0 };
                    if type_offset == 0 {
                        // flatcc verifies no values without the types.
                        continue;
                    }
                    let types = self.follow(pos + type_offset, field_what)?;
                    let type_count =
                        self.vector(types, 1, &Path::Field(path, def.fields[id - 1].0))?;
                    let target = self.follow(at, field_what)?;
                    let count = self.vector(target, UOFFSET, &child)?;
                    if count != type_count {
                        return Err(self.error(
                            target,
                            field_what(),
                            format!("union vector holds {count} values but {type_count} types"),
                        ));
                    }
                    for i in 0..count {
                        let element = target + UOFFSET + UOFFSET * i;
                        let ty = self.buf[types + UOFFSET + i];
                        let path = Path::Element(&child, i);
                        let offset = self.u32_at(element, &|| format!("element {path}"))?;
                        match (offset, ty) {
                            (0, 0) => {}
                            (0, _) => {
                                return Err(self.error(
                                    element,
                                    format!("element {path}"),
                                    format!("union type {ty} without a value"),
                                ))
                            }
                            (_, 0) => {
                                return Err(self.error(
                                    element,
                                    format!("element {path}"),
                                    "union type NONE with a value present",
                                ))
                            }
                            _ => {
                                let table = self.follow(element, || format!("element {path}"))?;
                                if let Some((_, sub)) = kinds.iter().find(|(k, _)| *k == ty) {
                                    self.table(table, sub, &path)?;
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks the vector at `at` of `count` elements of `size` bytes and
    /// returns `count`.
    fn vector(&self, at: usize, size: usize, path: &Path<'_>) -> Result<usize, LoadError> {
        let count = self.u32_at(at, &|| format!("vector {path}"))?;
        let left = self.buf.len() - (at + UOFFSET).min(self.buf.len());
        if count.checked_mul(size).is_none_or(|bytes| bytes > left) {
            return Err(self.error(
                at,
                format!("vector {path}"),
                format!("{count} elements of {size} bytes run past the end of the buffer ({left} bytes left)"),
            ));
        }
        Ok(count)
    }

    /// Checks the string at `at`: its bytes and terminating NUL inside the
    /// buffer.
    fn string(&self, at: usize, path: &Path<'_>) -> Result<(), LoadError> {
        let len = self.u32_at(at, &|| format!("string {path}"))?;
        let start = at + UOFFSET;
        match start.checked_add(len).and_then(|end| self.buf.get(end)) {
            Some(0) => Ok(()),
            Some(_) => Err(self.error(at, format!("string {path}"), "is not NUL-terminated")),
            None => Err(self.error(
                at,
                format!("string {path}"),
                format!("length {len} runs past the end of the buffer"),
            )),
        }
    }
}
