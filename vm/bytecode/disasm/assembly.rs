//! The assembly form ([`TextForm::Assembly`](super::TextForm::Assembly)): text `irvm as` reads back
//! into a module that loads and runs as the original does, table for table.
//!
//! It is the disassembly with what that leaves out or cannot say:
//!
//! ```text
//! vm.module @module version 0 attributes {key = "value"}
//! vm.requires YIELD | UNWIND                       module feature bits (`none`)
//! vm.dependency @hal version 7                     [optional] [flags(...)] per dependency
//! vm.type !hal.buffer                              the whole type table, in order
//! vm.import @hal.fence.await cconv "0iICrD_i"      [attributes {...}] [flags(...)]
//! vm.rodata[0] = 48656C6C6F                        embedded in the FlatBuffer
//! vm.rodata[4] external = 7F454C46...              after it, 64-byte aligned
//! vm.rodata[5] compression(uncompressed) = 00      a compression it states
//! vm.module_state global_bytes 8, global_refs 3
//! vm.export @"torch-jit-export" = @f              the export table, in order
//! vm.func @f(%r0: !vm.ref<?>) -> (!vm.ref<?>) attributes {iree.abi.declaration = "..."} registers(i32: 20, ref: 7) requires(UNWIND) {
//!   ...
//! }
//! vm.debug_database                                a database without source maps
//! vm.location[0] = none                            the debug database's table
//! vm.location[1] = "a.mlir":6:10                   entries name others as loc[N]
//! vm.source_map "__init" = [1: loc[0], 8: loc[2]]  its source maps, in order
//! ```
//!
//! Every function has a symbol of its own ([`super::names::unique_function_names`]);
//! calls name it (imports by their full name); symbols that are not MLIR
//! bare identifiers and every string are quoted with escapes
//! ([`super::names::quoted`]). A function's calling convention is written
//! (`cconv "..."`) only when its signature does not spell it (`cconv none`
//! when it has none).

use std::collections::HashSet;
use std::fmt::Write as _;

use super::names::{attribute_key, quoted, symbol, unique_function_names};
use super::{
    cconv_fragments, separate_top_level_item, write_signature, DisasmError, DisasmOptions,
    Disassembler,
};
use crate::bytecode::isa::IMPORT_ORDINAL_BIT;
use crate::loader::{DebugDatabase, DebugError, Location};

impl Disassembler<'_> {
    /// [`Disassembler::write_module`] in the assembly form.
    pub(super) fn write_assembly(
        &self,
        options: &DisasmOptions<'_>,
        out: &mut String,
    ) -> Result<usize, DisasmError> {
        let wanted: Vec<String> = (0..self.module.function_count())
            .map(|i| self.function_name(i))
            .collect();
        let exported: Vec<bool> = (0..wanted.len())
            .map(|i| self.exports.iter().any(|e| e.internal_ordinal == i))
            .collect();
        let reserved: HashSet<&str> = self.imports.iter().map(|i| i.full_name).collect();
        let named = Disassembler {
            module: self.module,
            types: self.types.clone(),
            imports: self.imports.clone(),
            exports: self.exports.clone(),
            debug: self.debug,
            unique_names: Some(unique_function_names(&wanted, &exported, &reserved)),
        };
        named.write_assembly_module(options, out)
    }

    /// How a call names function `ordinal` in the assembly form: an
    /// import's full name, or the internal function's own symbol.
    pub(super) fn assembly_callee_name(&self, ordinal: u32) -> String {
        let module = self.module.name();
        let text = if ordinal & IMPORT_ORDINAL_BIT != 0 {
            let index = ordinal & !IMPORT_ORDINAL_BIT;
            match self.imports.get(index as usize) {
                Some(import) => symbol(import.full_name),
                None => format!("@import:{index}"),
            }
        } else {
            match self
                .unique_names
                .as_ref()
                .and_then(|n| n.get(ordinal as usize))
            {
                Some(name) => symbol(name),
                None => format!("{}:{ordinal}", symbol(module)),
            }
        };
        // `operand_text` prints `@` before a callee name.
        text.strip_prefix('@').unwrap_or(&text).to_string()
    }

    fn write_assembly_module(
        &self,
        options: &DisasmOptions<'_>,
        out: &mut String,
    ) -> Result<usize, DisasmError> {
        let module = self.module;
        let rwdata = module.rwdata_sizes();
        if !rwdata.is_empty() {
            // A deprecated table iree-compile 3.13 no longer writes.
            return Err(DisasmError::NotExpressible {
                what: format!("the module's {} rwdata segments", rwdata.len()),
            });
        }
        let begin = out.len();
        let _ = write!(
            out,
            "vm.module {} version {}",
            symbol(module.name()),
            module.version()
        );
        write_attributes(out, &module.attrs());
        out.push('\n');
        let _ = writeln!(out, "vm.requires {}", module.requirements());
        for dependency in module.dependencies() {
            // REQUIRED alone is the default, OPTIONAL alone is `optional`;
            // any other flags are written out.
            let optional = dependency.flags == LINK_OPTIONAL;
            let _ = write!(
                out,
                "vm.dependency {}{} version {}",
                if optional { "optional " } else { "" },
                symbol(dependency.name),
                dependency.minimum_version
            );
            if !optional && dependency.flags != LINK_REQUIRED {
                let _ = write!(out, " flags({})", linkage_flags(dependency.flags));
            }
            out.push('\n');
        }
        for name in &self.types {
            let _ = writeln!(out, "vm.type {name}");
        }
        for import in &self.imports {
            // REQUIRED alone is the default, OPTIONAL alone is `optional`;
            // any other flags are written out after the rest.
            let optional = import.flags == LINK_OPTIONAL;
            let _ = write!(
                out,
                "vm.import {}{}",
                if optional { "optional " } else { "" },
                symbol(import.full_name),
            );
            // An import without a calling convention is written without
            // `cconv` (and, without attributes, has no signature).
            if let Some(cconv) = import.calling_convention {
                let _ = write!(out, " cconv {}", quoted(cconv));
            }
            write_attributes(out, &import.attrs);
            if !optional && import.flags != LINK_REQUIRED {
                let _ = write!(out, " flags({})", linkage_flags(import.flags));
            }
            out.push('\n');
        }
        for index in 0..module.rodata_count() {
            let external = module.rodata_is_external(index) == Some(true);
            let _ = write!(
                out,
                "vm.rodata[{index}]{}",
                if external { " external" } else { "" }
            );
            match module.rodata_compression(index) {
                None | Some(0) => {}
                Some(UNCOMPRESSED) => out.push_str(" compression(uncompressed)"),
                Some(tag) => {
                    let _ = write!(out, " compression({tag})");
                }
            }
            out.push_str(" = ");
            for byte in module.rodata(index).unwrap_or_default() {
                let _ = write!(out, "{byte:02X}");
            }
            out.push('\n');
        }
        let (bytes, refs) = (module.global_bytes_capacity(), module.global_ref_count());
        if bytes != 0 || refs != 0 {
            let _ = writeln!(
                out,
                "vm.module_state global_bytes {bytes}, global_refs {refs}"
            );
        }
        let names = self.unique_names.as_deref().unwrap_or_default();
        for export in &self.exports {
            let function = names
                .get(export.internal_ordinal)
                .map_or_else(|| format!("{}", export.internal_ordinal), |n| symbol(n));
            if names.get(export.internal_ordinal).map(String::as_str) == Some(export.local_name) {
                let _ = writeln!(out, "vm.export {function}");
            } else {
                let _ = writeln!(out, "vm.export {} = {function}", symbol(export.local_name));
            }
        }
        let mut printed = 0;
        for (ordinal, name) in names.iter().enumerate() {
            if !options.filter.selects(ordinal, name) {
                continue;
            }
            separate_top_level_item(out, begin);
            self.write_function_header(ordinal, name, out)?;
            self.write_function_body(ordinal, options.bytecode_offsets, out)?;
            out.push_str("}\n");
            printed += 1;
        }
        if let Some(debug) = self.debug {
            write_debug_database(&debug, out).map_err(DisasmError::DebugDatabase)?;
        }
        Ok(printed)
    }

    /// `vm.func @f(args) -> (results) [cconv "..."] [attributes {...}]
    /// registers(i32: N, ref: M) requires(...) {`.
    fn write_function_header(
        &self,
        ordinal: usize,
        name: &str,
        out: &mut String,
    ) -> Result<(), DisasmError> {
        let signature = self.module.function_signature(ordinal);
        let cconv = signature.as_ref().and_then(|s| s.calling_convention);
        let _ = write!(out, "vm.func {}", symbol(name));
        let problem = |problem| DisasmError::CallingConvention {
            function: name.to_string(),
            cconv: cconv.unwrap_or("").to_string(),
            problem,
        };
        write_signature(out, cconv).map_err(problem)?;
        // What the assembler derives from the printed signature.
        let (arguments, results) = cconv_fragments(cconv.unwrap_or("")).map_err(problem)?;
        let or_v = |s: &str| {
            if s.is_empty() {
                "v".to_string()
            } else {
                s.to_string()
            }
        };
        let derived = format!("0{}_{}", or_v(arguments), or_v(results));
        match cconv {
            Some(cconv) if cconv != derived => {
                let _ = write!(out, " cconv {}", quoted(cconv));
            }
            Some(_) => {}
            // A signature without a calling convention.
            None => out.push_str(" cconv none"),
        }
        if let Some(signature) = &signature {
            write_attributes(out, &signature.attrs);
        }
        if let Some(d) = self.module.function_descriptor(ordinal) {
            let _ = write!(
                out,
                " registers(i32: {}, ref: {}) requires({})",
                d.i32_register_count, d.ref_register_count, d.requirements
            );
        }
        out.push_str(" {\n");
        Ok(())
    }
}

/// The `compression_type` union tag of `UncompressedDataDef`.
const UNCOMPRESSED: u8 = 1;

/// The `REQUIRED` bit of a dependency's or an import's flags.
const LINK_REQUIRED: u32 = 1;
/// The `OPTIONAL` bit of a dependency's or an import's flags.
const LINK_OPTIONAL: u32 = 2;

/// A dependency's or an import's flag bits (`ModuleDependencyFlagBits`,
/// `ImportFlagBits`: the same two) as ` flags(...)` writes them: `none`, or
/// `REQUIRED`, `OPTIONAL` and `bit N` joined by ` | `.
fn linkage_flags(flags: u32) -> String {
    if flags == 0 {
        return "none".to_string();
    }
    (0..32)
        .filter(|bit| flags & (1 << bit) != 0)
        .map(|bit| match 1 << bit {
            LINK_REQUIRED => "REQUIRED".to_string(),
            LINK_OPTIONAL => "OPTIONAL".to_string(),
            _ => format!("bit {bit}"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// ` attributes {key = "value", ...}` (nothing when there are none).
fn write_attributes(out: &mut String, attrs: &[(&str, &str)]) {
    if attrs.is_empty() {
        return;
    }
    out.push_str(" attributes {");
    for (i, (key, value)) in attrs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{} = {}", attribute_key(key), quoted(value));
    }
    out.push('}');
}

/// The location table entry by entry and the source maps in stored order.
fn write_debug_database(debug: &DebugDatabase<'_>, out: &mut String) -> Result<(), DebugError> {
    let count = debug.location_count();
    let maps = debug.source_map_count();
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    // A database without source maps (perhaps empty altogether) is stated:
    // the assembler otherwise writes one only for locations, with a source
    // map per function.
    if maps == 0 {
        out.push_str("vm.debug_database\n");
    }
    for index in 0..count {
        let _ = write!(out, "vm.location[{index}] = ");
        match debug.location(index as i64) {
            Ok(Location::FileLineCol { file, line, col }) => {
                let _ = write!(out, "{}:{line}:{col}", quoted(file));
            }
            Ok(Location::Name { name, child }) => {
                out.push_str(&quoted(name));
                if let Some(child) = child {
                    let _ = write!(out, "(loc[{child}])");
                }
            }
            Ok(Location::CallSite { callee, caller }) => {
                let _ = write!(out, "callsite(loc[{callee}] at loc[{caller}])");
            }
            Ok(Location::Fused {
                metadata,
                locations,
            }) => {
                out.push_str("fused");
                if let Some(metadata) = metadata {
                    let _ = write!(out, "<{}>", quoted(metadata));
                }
                let list: Vec<String> = locations.iter().map(|l| format!("loc[{l}]")).collect();
                let _ = write!(out, "[{}]", list.join(", "));
            }
            // A NONE entry (iree-compile writes one for unknown locations).
            Err(DebugError::UnknownKind { tag: 0, .. }) => out.push_str("none"),
            Err(e) => return Err(e),
        }
        out.push('\n');
    }
    for index in 0..maps {
        let Some(map) = debug.source_map(index) else {
            continue;
        };
        let entries: Vec<String> = map
            .entries()
            .map(|(offset, location)| format!("{offset}: loc[{location}]"))
            .collect();
        let _ = writeln!(
            out,
            "vm.source_map {} = [{}]",
            quoted(map.local_name()),
            entries.join(", ")
        );
    }
    Ok(())
}
