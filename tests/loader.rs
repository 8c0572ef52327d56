//! Integration tests for the module loader (public API only).

use std::path::{Path, PathBuf};

use irvm::modules::{LoadError, Module};

/// Folder with the shared conformance and example modules, if present.
fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared"));
    if dir.is_dir() {
        Some(dir.to_path_buf())
    } else {
        eprintln!("SKIP: {} not found", dir.display());
        None
    }
}

/// Every shared `.vmfb`, sorted.
fn shared_modules() -> Vec<PathBuf> {
    let Some(dir) = shared_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let conformance = dir.join("conformance/iree-vm-tests");
    if let Ok(entries) = std::fs::read_dir(&conformance) {
        out.extend(entries.flatten().map(|e| e.path()).filter(|p| is_vmfb(p)));
    }
    for rel in [
        "conformance/module_benchmark.vmfb",
        "benchmarks/vm_bench.vmfb",
        "examples/fib.vmfb",
        "examples/loop.vmfb",
    ] {
        out.push(dir.join(rel));
    }
    out.sort();
    out
}

fn is_vmfb(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "vmfb")
}

#[test]
fn all_shared_modules_load() {
    let paths = shared_modules();
    if paths.is_empty() {
        return;
    }
    assert_eq!(paths.len(), 34, "expected 34 shared modules");
    for path in &paths {
        let module = Module::from_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!module.name().is_empty());
        assert_eq!(module.bytecode_version(), (17, 0), "{}", path.display());
        assert!(
            !module.exports().is_empty(),
            "{}: no exports",
            path.display()
        );
        let data = module.bytecode_data();
        let data_range = data.as_ptr() as usize..data.as_ptr() as usize + data.len();
        for i in 0..module.function_count() {
            let code = module.function_bytecode(i).unwrap();
            let start = code.as_ptr() as usize;
            assert!(data_range.contains(&start) && start + code.len() <= data_range.end);
            assert!(module.function_signature(i).is_some());
        }
        for e in module.exports() {
            assert!(e.internal_ordinal < module.function_count());
        }
        for i in 0..module.rodata_count() {
            assert!(module.rodata(i).is_some());
        }
        println!(
            "{}: name={} functions={} exports={} imports={} rodata={} types={:?}",
            path.file_name().unwrap().to_string_lossy(),
            module.name(),
            module.function_count(),
            module.exports().len(),
            module.imports().len(),
            module.rodata_count(),
            module.types()
        );
    }
}

#[test]
fn zip_modules_load_from_bytes_too() {
    let Some(dir) = shared_dir() else { return };
    for name in ["fib", "loop"] {
        let path = dir.join(format!("examples/{name}.vmfb"));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            &bytes[..4],
            b"PK\x03\x04",
            "{name} should start with a ZIP header"
        );
        let module = Module::from_bytes(bytes).unwrap();
        assert!(module.flatbuffer_range().start > 30);
        assert!(module.export(name).is_some() || !module.exports().is_empty());
    }
    let _ = LoadError::MissingField {
        field: String::new(),
    };
}
