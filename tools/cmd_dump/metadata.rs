//! `irvm dump --output=metadata`: the module summary iree-dump-module
//! prints (name, requirements, attributes, types, dependencies, imports and
//! exports with their signatures and reflection attributes, section sizes,
//! the function descriptor table and a debug-information summary).

use std::fmt::Write as _;

use irvm::loader::schema::{self, BytecodeModuleDef, CompressionTypeDef};
use irvm::loader::Module;

/// `sizeof(iree_vm_ref_t)` on 64-bit hosts, for the module state estimate.
const REF_SLOT_BYTES: u64 = 16;
/// Embedded rodata that looks like text is quoted up to this many bytes.
const MAX_QUOTED_RODATA: usize = 32;

/// Writes the metadata summary of `module` to `out`.
pub fn write_metadata(module: &Module, out: &mut String) -> Result<(), String> {
    let def = schema::module_def(module);
    section_header(out, &format!("@{} : version {}", def.name(), def.version()));
    out.push('\n');

    if is_present(&def, BytecodeModuleDef::VT_REQUIREMENTS) {
        out.push_str("Requirements: ");
        write_feature_bits(out, def.requirements().bits());
        out.push_str("\n\n");
    }
    if let Some(attrs) = def.attrs() {
        out.push_str("Attributes:\n");
        write_attrs(out, attrs, 2);
        out.push('\n');
    }
    if let Some(types) = def.types() {
        out.push_str("Required Types:\n");
        for (i, t) in types.iter().enumerate() {
            let _ = writeln!(out, "  [{i:3}] {}", t.full_name().unwrap_or(""));
        }
        out.push('\n');
    }
    if let Some(dependencies) = def.dependencies() {
        out.push_str("Module Dependencies:\n");
        for dep in dependencies {
            let optional = dep
                .flags()
                .contains(schema::ModuleDependencyFlagBits::OPTIONAL);
            let _ = writeln!(
                out,
                "  {}, version >= {}, {}",
                dep.name().unwrap_or(""),
                dep.minimum_version() as i32,
                if optional { "optional" } else { "required" }
            );
        }
        out.push('\n');
    }
    if let Some(imports) = def.imported_functions() {
        out.push_str("Imported Functions:\n");
        for (i, import) in imports.iter().enumerate() {
            let _ = write!(out, "  [{i:3}] ");
            if import.flags().contains(schema::ImportFlagBits::OPTIONAL) {
                out.push('?');
            }
            out.push_str(import.full_name().unwrap_or(""));
            write_signature_summary(out, import.signature(), 8)?;
        }
        out.push('\n');
    }
    if let Some(exports) = def.exported_functions() {
        out.push_str("Exported Functions:\n");
        let signatures = def.function_signatures();
        for (i, export) in exports.iter().enumerate() {
            let _ = write!(out, "  [{i:3}] {}", export.local_name().unwrap_or(""));
            let signature = usize::try_from(export.internal_ordinal())
                .ok()
                .and_then(|ordinal| {
                    signatures.and_then(|s| (ordinal < s.len()).then(|| s.get(ordinal)))
                });
            write_signature_summary(out, signature, 8)?;
        }
        out.push('\n');
    }

    section_header(out, "Sections");
    out.push('\n');
    if let Some(state) = def.module_state() {
        let bytes = state.global_bytes_capacity();
        let refs = state.global_ref_count();
        let total =
            (bytes as i64 as u64).wrapping_add(REF_SLOT_BYTES.wrapping_mul(refs as i64 as u64));
        let _ = writeln!(
            out,
            "Module State:\n  {bytes} bytes, {refs} refs, ~{total} bytes total\n"
        );
    }
    let _ = writeln!(out, "FlatBuffer: {} bytes", module.flatbuffer_range().len());
    if let Some(bytecode) = def.bytecode_data() {
        let _ = writeln!(out, "  Bytecode: {} bytes", bytecode.len());
    }
    let mut external_bytes = 0u64;
    if let Some(segments) = def.rodata_segments() {
        for (i, segment) in segments.iter().enumerate() {
            let _ = write!(out, "  .rodata[{i:3}] ");
            if segment.compression_type_type() == CompressionTypeDef::UncompressedDataDef {
                out.push_str("uncompressed ");
            }
            match segment.embedded_data() {
                Some(data) => write_embedded_rodata(out, data.bytes()),
                None => {
                    let offset = segment.external_data_offset();
                    let length = segment.external_data_length();
                    external_bytes = external_bytes.wrapping_add(length);
                    let _ = write!(
                        out,
                        "external {length:8} bytes (offset {offset} / {offset:X}h to {:X}h)",
                        offset.wrapping_add(length)
                    );
                }
            }
            out.push('\n');
        }
    }
    if let Some(segments) = def.rwdata_segments() {
        for (i, segment) in segments.iter().enumerate() {
            let _ = writeln!(out, "  .rwdata[{i:3}] {} bytes", segment.byte_size());
        }
    }
    out.push('\n');
    if external_bytes > 0 {
        let _ = writeln!(out, "External .rodata: ~{external_bytes} bytes\n");
    }

    section_header(out, &format!("Bytecode : version {}", def.version()));
    out.push('\n');
    if let Some(descriptors) = def.function_descriptors() {
        write_function_table(out, &def, descriptors.iter());
    }
    out.push('\n');

    if let Some(debug) = def.debug_database() {
        section_header(out, "Debug Information");
        out.push_str(
            "// NOTE: debug databases are large and should be stripped in deployed artifacts.\n\n",
        );
        let locations = debug.location_table().map_or(0, |t| t.len());
        let _ = writeln!(out, "Locations: {locations}\n");
    }
    Ok(())
}

/// Whether a scalar field of the module table is stored (not defaulted).
fn is_present(def: &BytecodeModuleDef<'_>, field: flatbuffers::VOffsetT) -> bool {
    def._tab.vtable().get(field) != 0
}

fn section_header(out: &mut String, title: &str) {
    let rule = format!("//==={}===//\n", "-".repeat(110));
    out.push_str(&rule);
    let _ = writeln!(out, "// {title}");
    out.push_str(&rule);
}

/// Writes `EXT_F32 | EXT_F64 | 0000000C` and returns the length IREE
/// counts for it (the names and hex digits, not the separators).
fn write_feature_bits(out: &mut String, bits: u32) -> usize {
    const NAMED: [(u32, &str); 2] = [(1 << 0, "EXT_F32"), (1 << 1, "EXT_F64")];
    let mut rest = bits;
    let mut length = 0;
    for (bit, name) in NAMED {
        if rest & bit != 0 {
            if length > 0 {
                out.push_str(" | ");
            }
            out.push_str(name);
            length += name.len();
            rest &= !bit;
        }
    }
    if rest != 0 {
        if length > 0 {
            out.push_str(" | ");
        }
        let _ = write!(out, "{rest:08X}");
        length += 8;
    }
    length
}

fn write_attrs<'a>(
    out: &mut String,
    attrs: flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<schema::AttrDef<'a>>>,
    indent: usize,
) {
    for attr in attrs {
        let _ = writeln!(
            out,
            "{:indent$}{}: {}",
            "",
            attr.key().unwrap_or(""),
            attr.value().unwrap_or("")
        );
    }
}

/// `(i32, !vm.ref<?>) -> (f32)` from the calling convention (if any), a
/// newline, then the signature's attributes indented by `attr_indent`.
fn write_signature_summary(
    out: &mut String,
    signature: Option<schema::FunctionSignatureDef<'_>>,
    attr_indent: usize,
) -> Result<(), String> {
    if let Some(cconv) = signature.and_then(|s| s.calling_convention()) {
        let (arguments, results) = irvm::bytecode::disasm::cconv_fragments(cconv)
            .map_err(|e| format!("calling convention {cconv:?}: {e}"))?;
        out.push('(');
        write_cconv_fragment(out, arguments)
            .map_err(|e| format!("calling convention {cconv:?}: {e}"))?;
        out.push_str(") -> (");
        write_cconv_fragment(out, results)
            .map_err(|e| format!("calling convention {cconv:?}: {e}"))?;
        out.push(')');
    }
    out.push('\n');
    if let Some(attrs) = signature.and_then(|s| s.attrs()) {
        write_attrs(out, attrs, attr_indent);
    }
    Ok(())
}

/// One side of a calling convention as types: `i32, f64, tuple<i32>...`.
/// Like IREE, a `v` prints nothing but still takes a separator.
fn write_cconv_fragment(out: &mut String, fragment: &str) -> Result<(), String> {
    let bytes = fragment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if i > 0 {
            out.push_str(", ");
        }
        match bytes[i] {
            b'v' => {}
            b'i' => out.push_str("i32"),
            b'f' => out.push_str("f32"),
            b'I' => out.push_str("i64"),
            b'F' => out.push_str("f64"),
            b'r' => out.push_str("!vm.ref<?>"),
            b'C' => {
                let end = fragment[i + 1..]
                    .find('D')
                    .map(|e| e + i + 1)
                    .ok_or("unterminated cconv span")?;
                out.push_str("tuple<");
                write_cconv_fragment(out, &fragment[i + 1..end])?;
                out.push_str(">...");
                i = end;
            }
            other => return Err(format!("unsupported cconv type '{}'", other as char)),
        }
        i += 1;
    }
    Ok(())
}

/// Embedded rodata: its size, and its text when it looks like a string
/// (printable up to the first NUL), quoted up to 32 bytes.
fn write_embedded_rodata(out: &mut String, data: &[u8]) {
    let _ = write!(out, "embedded {:8} bytes", data.len());
    let text_len = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = &data[..text_len];
    if text.iter().all(|b| (0x20..0x7F).contains(b)) {
        let shown = &text[..text.len().min(MAX_QUOTED_RODATA)];
        let _ = write!(out, " `{}`", String::from_utf8_lossy(shown));
        if text.len() >= MAX_QUOTED_RODATA {
            out.push_str("...");
        }
    }
}

/// The function descriptor table, with the export names of each function.
fn write_function_table<'a>(
    out: &mut String,
    def: &BytecodeModuleDef<'a>,
    descriptors: impl Iterator<Item = &'a schema::FunctionDescriptor>,
) {
    out.push_str("  # | Offset   |   Length | Blocks | i32 # | ref # | Requirements | Aliases\n");
    out.push_str(
        "----+----------+----------+--------+-------+-------+--------------+-----------------------------------------------------\n",
    );
    for (i, d) in descriptors.enumerate() {
        let _ = write!(
            out,
            "{i:3} | {:08X} | {:8} | {:6} | {:5} | {:5} | ",
            d.bytecode_offset(),
            d.bytecode_length(),
            d.block_count(),
            d.i32_register_count(),
            d.ref_register_count()
        );
        let width = write_feature_bits(out, d.requirements().bits());
        if width < 12 {
            out.push_str(&" ".repeat(12 - width));
        }
        out.push_str(" | ");
        let aliases: Vec<&str> = def
            .exported_functions()
            .iter()
            .flatten()
            .filter(|e| usize::try_from(e.internal_ordinal()) == Ok(i))
            .map(|e| e.local_name().unwrap_or(""))
            .collect();
        out.push_str(&aliases.join(", "));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_bits_count_names_only() {
        let mut out = String::new();
        assert_eq!(write_feature_bits(&mut out, 3), 14);
        assert_eq!(out, "EXT_F32 | EXT_F64");
        out.clear();
        assert_eq!(write_feature_bits(&mut out, 0x0C), 8);
        assert_eq!(out, "0000000C");
        out.clear();
        assert_eq!(write_feature_bits(&mut out, 0), 0);
        assert_eq!(out, "");
    }

    #[test]
    fn cconv_fragments_print_as_types() {
        let mut out = String::new();
        write_cconv_fragment(&mut out, "iCrFDI").unwrap();
        assert_eq!(out, "i32, tuple<!vm.ref<?>, f64>..., i64");
        assert!(write_cconv_fragment(&mut String::new(), "iCr").is_err());
        assert!(write_cconv_fragment(&mut String::new(), "x").is_err());
    }

    #[test]
    fn embedded_rodata_is_quoted_when_printable() {
        let mut out = String::new();
        write_embedded_rodata(&mut out, b"hello\0world");
        assert_eq!(out, "embedded       11 bytes `hello`");
        out.clear();
        write_embedded_rodata(&mut out, &[1, 2]);
        assert_eq!(out, "embedded        2 bytes");
        out.clear();
        write_embedded_rodata(&mut out, &[b'a'; 40]);
        assert_eq!(
            out,
            format!("embedded       40 bytes `{}`...", "a".repeat(32))
        );
    }
}
