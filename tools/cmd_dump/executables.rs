//! `irvm dump --output=executables`: the executables a compiled module
//! carries in its rodata (an irvm addition; iree-dump-module has no such
//! mode). Native libraries are read statically (no code from the module
//! runs); vmvx executables are loaded as the bytecode modules they are.

use std::fmt::Write as _;

use irvm::Module;
use irvm_hal::native::elf;

/// Formats iree-compile names executables with.
fn is_format_name(text: &[u8]) -> bool {
    let known = [
        "embedded-elf-",
        "system-elf-",
        "system-dll-",
        "system-dylib-",
    ];
    std::str::from_utf8(text)
        .is_ok_and(|t| t == irvm_hal::VMVX_FORMAT || known.iter().any(|k| t.starts_with(k)))
}

/// Writes one block per executable found in `module`'s rodata.
pub fn write_executables(module: &Module, out: &mut String) -> Result<(), String> {
    let mut found = 0;
    let mut text = String::new();
    for i in 0..module.rodata_count() {
        let Some(data) = module.rodata(i) else {
            continue;
        };
        let named = i
            .checked_sub(1)
            .and_then(|p| module.rodata(p))
            .filter(|p| is_format_name(p))
            .map(|p| String::from_utf8_lossy(p).into_owned());
        // The rodata before a blob names its format only when the name
        // fits the blob (a module for several targets may list its format
        // names apart from the blobs).
        let vmvx_named = named.as_deref() == Some(irvm_hal::VMVX_FORMAT);
        if data.starts_with(b"\x7fELF") {
            found += 1;
            let format = named
                .filter(|_| !vmvx_named)
                .unwrap_or_else(|| "ELF shared object".into());
            let _ = write!(text, "  .rodata[{i:3}] {format}, {} bytes", data.len());
            // A system library's debug footer is found by its magic, so a
            // misleading name cannot hide it.
            match elf::library_bytes("system-elf", data).and_then(elf::inspect) {
                Ok(lib) => {
                    let _ = writeln!(
                        text,
                        ": library `{}`, {} entry point{}, {} bytes of code{}",
                        lib.name,
                        lib.exports.len(),
                        if lib.exports.len() == 1 { "" } else { "s" },
                        lib.code_bytes,
                        if lib.constants > 0 {
                            format!(", {} executable constants", lib.constants)
                        } else {
                            String::new()
                        }
                    );
                    for (k, e) in lib.exports.iter().enumerate() {
                        let _ = writeln!(
                            text,
                            "      [{k}] {}  bindings {}, constants {}, local memory {} bytes",
                            e.name,
                            e.bindings,
                            e.constants,
                            usize::from(e.local_memory_pages) * 4096
                        );
                    }
                    for import in &lib.imports {
                        let _ = writeln!(text, "      import {import}");
                    }
                }
                Err(t) => {
                    let _ = writeln!(text, ": unreadable library table ({})", t.message);
                }
            }
        } else if data.get(4..8) == Some(b"IREE") || data.starts_with(b"PK\x03\x04") || vmvx_named {
            // A bytecode module inside a module's rodata is a vmvx
            // executable (its kernels may import `vmvx.*` or be plain
            // loops, so imports do not tell).
            let Ok(exe) = Module::from_bytes(data.to_vec()) else {
                continue;
            };
            found += 1;
            let format = irvm_hal::VMVX_FORMAT;
            let entries: Vec<_> = exe
                .exports()
                .into_iter()
                .filter(|e| !e.local_name.starts_with("__"))
                .collect();
            let _ = writeln!(
                text,
                "  .rodata[{i:3}] {format}, {} bytes: module `{}`, {} entry point{}",
                data.len(),
                exe.name(),
                entries.len(),
                if entries.len() == 1 { "" } else { "s" }
            );
            for (k, e) in entries.iter().enumerate() {
                let _ = writeln!(text, "      [{k}] {}", e.local_name);
            }
        }
    }
    let _ = writeln!(out, "Executables: {found}");
    out.push_str(&text);
    Ok(())
}
