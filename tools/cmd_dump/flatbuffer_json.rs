//! `irvm dump --output=flatbuffer-json [--pretty]`: the module FlatBuffer as
//! the JSON that iree-dump-module prints with flatcc's JSON printer (fields
//! in schema order, scalars equal to their default left out, enums and
//! union types by name, bit flags as space-separated names, `--pretty`
//! indenting by two spaces).

use std::fmt::Display;

use irvm::loader::schema::{self, BytecodeModuleDef};
use irvm::loader::{LocationDef, Module};

/// The bits and names of IREE's `FeatureBits`, in schema order.
const FEATURE_BITS: &[(u32, &str)] = &[
    (1 << 0, "EXT_F32"),
    (1 << 1, "EXT_F64"),
    (1 << 2, "YIELD"),
    (1 << 3, "UNWIND"),
];
/// The bits and names of `ModuleDependencyFlagBits` and `ImportFlagBits`.
const REQUIRED_OPTIONAL_BITS: &[(u32, &str)] = &[(1 << 0, "REQUIRED"), (1 << 1, "OPTIONAL")];
/// Default of the `flags` fields of dependencies and imports (`REQUIRED`).
const DEFAULT_FLAGS: u32 = 1 << 0;

/// Writes the JSON of `module`'s FlatBuffer (no trailing newline unless
/// `pretty`).
pub fn write_json(module: &Module, pretty: bool, out: &mut String) -> Result<(), String> {
    let mut w = JsonWriter {
        out,
        level: 0,
        indent: if pretty { 2 } else { 0 },
    };
    let def = schema::module_def(module);
    w.table(|t| module_fields(t, module, &def))?;
    if w.indent > 0 && w.level == 0 {
        w.out.push('\n');
    }
    Ok(())
}

/// flatcc's printing primitives: nesting level, optional indentation.
struct JsonWriter<'o> {
    out: &'o mut String,
    level: usize,
    indent: usize,
}

impl JsonWriter<'_> {
    fn start(&mut self, c: char) {
        self.level += 1;
        self.out.push(c);
    }

    fn end(&mut self, c: char) {
        if self.indent > 0 {
            self.out.push('\n');
            self.level -= 1;
            self.indentation();
        }
        self.out.push(c);
    }

    fn newline(&mut self) {
        if self.indent > 0 {
            self.out.push('\n');
            self.indentation();
        }
    }

    fn indentation(&mut self) {
        let width = self.level * self.indent;
        self.out.extend(std::iter::repeat_n(' ', width));
    }

    fn name(&mut self, name: &str) {
        self.newline();
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
        if self.indent > 0 {
            self.out.push(' ');
        }
    }

    /// A JSON string: `"`, `\` and control characters escaped.
    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\t' => self.out.push_str("\\t"),
                '\u{0C}' => self.out.push_str("\\f"),
                '\r' => self.out.push_str("\\r"),
                '\n' => self.out.push_str("\\n"),
                '\u{08}' => self.out.push_str("\\b"),
                c if u32::from(c) < 0x20 => {
                    self.out.push_str(&format!("\\u{:04x}", u32::from(c)));
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    /// `{ fields }`.
    fn table(
        &mut self,
        fields: impl FnOnce(&mut Fields<'_, '_>) -> Result<(), String>,
    ) -> Result<(), String> {
        self.start('{');
        let mut t = Fields { w: self, count: 0 };
        fields(&mut t)?;
        self.end('}');
        Ok(())
    }

    /// `[` items `]` with a newline before each item (scalars, enums).
    fn scalar_items<T: Display>(&mut self, items: impl Iterator<Item = T>) {
        self.start('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.newline();
            self.out.push_str(&item.to_string());
        }
        self.end(']');
    }

    /// `[` tables `]` (no newline before each table).
    fn table_items<T>(
        &mut self,
        items: impl Iterator<Item = T>,
        mut table: impl FnMut(&mut JsonWriter<'_>, T) -> Result<(), String>,
    ) -> Result<(), String> {
        self.start('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            table(self, item)?;
        }
        self.end(']');
        Ok(())
    }

    /// `[` structs `]`: a newline, then `{ fields }`, per struct.
    fn struct_items<T>(
        &mut self,
        items: impl Iterator<Item = T>,
        mut fields: impl FnMut(&mut StructFields<'_, '_>, T),
    ) {
        self.start('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.newline();
            self.start('{');
            fields(&mut StructFields { w: self, index: 0 }, item);
            self.end('}');
        }
        self.end(']');
    }
}

/// The fields of a table being printed (comma before all but the first).
struct Fields<'a, 'o> {
    w: &'a mut JsonWriter<'o>,
    count: usize,
}

impl<'o> Fields<'_, 'o> {
    fn field(&mut self, name: &str) -> &mut JsonWriter<'o> {
        if self.count > 0 {
            self.w.out.push(',');
        }
        self.count += 1;
        self.w.name(name);
        self.w
    }

    /// A scalar, unless it equals the schema default.
    fn scalar<T: PartialEq + Display>(&mut self, name: &str, value: T, default: T) {
        if value != default {
            let text = value.to_string();
            self.field(name).out.push_str(&text);
        }
    }

    /// A bit-flags enum, unless it equals the schema default.
    fn flags(&mut self, name: &str, value: u32, default: u32, names: &[(u32, &str)]) {
        if value != default {
            let text = flags_text(value, names);
            self.field(name).out.push_str(&text);
        }
    }

    fn string(&mut self, name: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.field(name).string(value);
        }
    }
}

/// The fields of a struct being printed (all of them, in order).
struct StructFields<'a, 'o> {
    w: &'a mut JsonWriter<'o>,
    index: usize,
}

impl StructFields<'_, '_> {
    fn field(&mut self, name: &str, text: &str) {
        if self.index > 0 {
            self.w.out.push(',');
        }
        self.index += 1;
        self.w.name(name);
        self.w.out.push_str(text);
    }
}

/// Bit flags as flatcc prints them: `"A B"` in schema order, or the number
/// when it is 0 or has bits without a name.
fn flags_text(value: u32, names: &[(u32, &str)]) -> String {
    let known = names.iter().fold(0, |mask, (bit, _)| mask | bit);
    if value == 0 || value & !known != 0 {
        return value.to_string();
    }
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| value & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    format!("\"{}\"", set.join(" "))
}

/// Whether field `slot` of a table is stored.
fn present(table: &flatbuffers::Table<'_>, slot: flatbuffers::VOffsetT) -> bool {
    table.vtable().get(slot) != 0
}

fn module_fields(
    t: &mut Fields<'_, '_>,
    module: &Module,
    def: &BytecodeModuleDef<'_>,
) -> Result<(), String> {
    t.string("name", Some(def.name()));
    t.scalar("version", def.version(), 0);
    t.flags("requirements", def.requirements().bits(), 0, FEATURE_BITS);
    if let Some(attrs) = def.attrs() {
        t.field("attrs")
            .table_items(attrs.iter(), |w, a| w.table(|t| attr_fields(t, a)))?;
    }
    if let Some(types) = def.types() {
        t.field("types").table_items(types.iter(), |w, ty| {
            w.table(|t| {
                t.string("full_name", ty.full_name());
                Ok(())
            })
        })?;
    }
    if let Some(deps) = def.dependencies() {
        t.field("dependencies").table_items(deps.iter(), |w, d| {
            w.table(|t| {
                t.string("name", d.name());
                t.scalar("minimum_version", d.minimum_version(), 0);
                t.flags(
                    "flags",
                    d.flags().bits(),
                    DEFAULT_FLAGS,
                    REQUIRED_OPTIONAL_BITS,
                );
                Ok(())
            })
        })?;
    }
    if let Some(imports) = def.imported_functions() {
        t.field("imported_functions")
            .table_items(imports.iter(), |w, f| {
                w.table(|t| {
                    t.string("full_name", f.full_name());
                    if let Some(sig) = f.signature() {
                        t.field("signature").table(|t| signature_fields(t, sig))?;
                    }
                    t.flags(
                        "flags",
                        f.flags().bits(),
                        DEFAULT_FLAGS,
                        REQUIRED_OPTIONAL_BITS,
                    );
                    Ok(())
                })
            })?;
    }
    if let Some(exports) = def.exported_functions() {
        t.field("exported_functions")
            .table_items(exports.iter(), |w, e| {
                w.table(|t| {
                    t.string("local_name", e.local_name());
                    t.scalar("internal_ordinal", e.internal_ordinal(), 0);
                    Ok(())
                })
            })?;
    }
    if let Some(sigs) = def.function_signatures() {
        t.field("function_signatures")
            .table_items(sigs.iter(), |w, s| w.table(|t| signature_fields(t, s)))?;
    }
    if let Some(segments) = def.rodata_segments() {
        t.field("rodata_segments")
            .table_items(segments.iter(), |w, s| w.table(|t| rodata_fields(t, s)))?;
    }
    if let Some(segments) = def.rwdata_segments() {
        t.field("rwdata_segments")
            .table_items(segments.iter(), |w, s| {
                w.table(|t| {
                    t.scalar("byte_size", s.byte_size(), 0);
                    Ok(())
                })
            })?;
    }
    if let Some(state) = def.module_state() {
        t.field("module_state").table(|t| {
            t.scalar("global_bytes_capacity", state.global_bytes_capacity(), 0);
            t.scalar("global_ref_count", state.global_ref_count(), 0);
            Ok(())
        })?;
    }
    if let Some(descriptors) = def.function_descriptors() {
        t.field("function_descriptors")
            .struct_items(descriptors.iter(), |s, d| {
                s.field("bytecode_offset", &d.bytecode_offset().to_string());
                s.field("bytecode_length", &d.bytecode_length().to_string());
                s.field(
                    "requirements",
                    &flags_text(d.requirements().bits(), FEATURE_BITS),
                );
                s.field("reserved", &d.reserved().to_string());
                s.field("block_count", &d.block_count().to_string());
                s.field("i32_register_count", &d.i32_register_count().to_string());
                s.field("ref_register_count", &d.ref_register_count().to_string());
            });
    }
    t.scalar("bytecode_version", def.bytecode_version(), 0);
    if let Some(bytecode) = def.bytecode_data() {
        t.field("bytecode_data").scalar_items(bytecode.iter());
    }
    if let Some(debug) = def.debug_database() {
        t.field("debug_database")
            .table(|t| debug_database_fields(t, module, &debug))?;
    }
    Ok(())
}

fn attr_fields(t: &mut Fields<'_, '_>, attr: schema::AttrDef<'_>) -> Result<(), String> {
    t.string("key", attr.key());
    t.string("value", attr.value());
    Ok(())
}

fn signature_fields(
    t: &mut Fields<'_, '_>,
    sig: schema::FunctionSignatureDef<'_>,
) -> Result<(), String> {
    t.string("calling_convention", sig.calling_convention());
    if let Some(attrs) = sig.attrs() {
        t.field("attrs")
            .table_items(attrs.iter(), |w, a| w.table(|t| attr_fields(t, a)))?;
    }
    Ok(())
}

fn rodata_fields(
    t: &mut Fields<'_, '_>,
    segment: schema::RodataSegmentDef<'_>,
) -> Result<(), String> {
    let tab = &segment._tab;
    if present(tab, schema::RodataSegmentDef::VT_COMPRESSION_TYPE_TYPE)
        && present(tab, schema::RodataSegmentDef::VT_COMPRESSION_TYPE)
    {
        let kind = segment.compression_type_type();
        let tag = t.field("compression_type_type");
        match kind {
            schema::CompressionTypeDef::UncompressedDataDef => {
                tag.out.push_str("\"UncompressedDataDef\"");
                // The only compression type IREE defines: an empty table.
                t.field("compression_type").table(|_| Ok(()))?;
            }
            schema::CompressionTypeDef::NONE => tag.out.push_str("\"NONE\""),
            // A tag the schema does not know, as its number; its table
            // (of an unknown schema) is left out. flatcc prints "NONE" and
            // a `compression_type` field with no value, which is not JSON
            // (docs/COMPATIBILITY.md).
            other => tag.out.push_str(&other.0.to_string()),
        }
    }
    if let Some(data) = segment.embedded_data() {
        t.field("embedded_data").scalar_items(data.iter());
    }
    t.scalar("external_data_offset", segment.external_data_offset(), 0);
    t.scalar("external_data_length", segment.external_data_length(), 0);
    Ok(())
}

fn debug_database_fields(
    t: &mut Fields<'_, '_>,
    module: &Module,
    def: &schema::DebugDatabaseDef<'_>,
) -> Result<(), String> {
    if let (Some(tags), Some(entries), Some(debug)) = (
        def.location_table_type(),
        def.location_table(),
        module.debug_database(),
    ) {
        t.field("location_table_type").scalar_items(
            tags.iter()
                .map(|tag| format!("\"{}\"", location_type_name(tag))),
        );
        let w = t.field("location_table");
        w.start('[');
        for i in 0..entries.len() {
            if i > 0 {
                w.out.push(',');
            }
            let tag = if i < tags.len() {
                tags.get(i)
            } else {
                schema::LocationTypeDef_::NONE
            };
            if tag == schema::LocationTypeDef_::NONE {
                w.out.push_str("null");
            } else if location_type_name(tag) != "NONE" {
                let index = i64::try_from(i).map_err(|e| e.to_string())?;
                let location = debug
                    .location_def(index)
                    .map_err(|e| format!("debug database: {e}"))?;
                w.table(|t| location_fields(t, location))?;
            }
        }
        w.end(']');
    }
    if let Some(maps) = def.functions() {
        t.field("functions").table_items(maps.iter(), |w, map| {
            w.table(|t| {
                t.string("local_name", map.local_name());
                if let Some(locations) = map.locations() {
                    t.field("locations")
                        .struct_items(locations.iter(), |s, loc| {
                            s.field("bytecode_offset", &loc.bytecode_offset().to_string());
                            s.field("location", &loc.location().to_string());
                        });
                }
                Ok(())
            })
        })?;
    }
    Ok(())
}

/// The name flatcc prints for a location union tag.
fn location_type_name(tag: schema::LocationTypeDef_) -> &'static str {
    match tag {
        schema::LocationTypeDef_::CallSiteLocDef => "CallSiteLocDef",
        schema::LocationTypeDef_::FileLineColLocDef => "FileLineColLocDef",
        schema::LocationTypeDef_::FusedLocDef => "FusedLocDef",
        schema::LocationTypeDef_::NameLocDef => "NameLocDef",
        _ => "NONE",
    }
}

fn location_fields(t: &mut Fields<'_, '_>, location: LocationDef<'_>) -> Result<(), String> {
    match location {
        LocationDef::CallSite(loc) => {
            t.scalar("callee", loc.callee(), 0);
            t.scalar("caller", loc.caller(), 0);
        }
        LocationDef::FileLineCol(loc) => {
            t.string("filename", loc.filename());
            t.scalar("line", loc.line(), 0);
            t.scalar("column", loc.column(), 0);
        }
        LocationDef::Fused(loc) => {
            t.string("metadata", loc.metadata());
            if let Some(locations) = loc.locations() {
                t.field("locations").scalar_items(locations.iter());
            }
        }
        LocationDef::Name(loc) => {
            t.string("name", loc.name());
            t.scalar("child_location", loc.child_location(), 0);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_print_as_names_or_numbers() {
        assert_eq!(flags_text(0, FEATURE_BITS), "0");
        assert_eq!(flags_text(3, FEATURE_BITS), "\"EXT_F32 EXT_F64\"");
        assert_eq!(flags_text(8, FEATURE_BITS), "\"UNWIND\"");
        assert_eq!(flags_text(0x10, FEATURE_BITS), "16");
        assert_eq!(flags_text(2, REQUIRED_OPTIONAL_BITS), "\"OPTIONAL\"");
    }

    #[test]
    fn strings_escape_like_flatcc() {
        let mut out = String::new();
        let mut w = JsonWriter {
            out: &mut out,
            level: 0,
            indent: 0,
        };
        w.string("a\"b\\c\n\u{1}é");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é\"");
    }

    #[test]
    fn pretty_nesting_matches_flatcc() {
        let mut out = String::new();
        let mut w = JsonWriter {
            out: &mut out,
            level: 0,
            indent: 2,
        };
        w.table(|t| {
            t.field("v").scalar_items([1, 2].into_iter());
            t.field("t").table_items([5].into_iter(), |w, x| {
                w.table(|t| {
                    t.scalar("x", x, 0);
                    Ok(())
                })
            })
        })
        .unwrap();
        assert_eq!(
            out,
            "{\n  \"v\": [\n    1,\n    2\n  ],\n  \"t\": [{\n      \"x\": 5\n    }\n  ]\n}"
        );
    }
}
