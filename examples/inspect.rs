//! Loads a module and prints what it declares.
//!
//! `cargo run --example inspect -- ../shared/examples/fib.vmfb`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: inspect MODULE.vmfb")?;
    let module = irvm::loader::Module::from_file(&path)?;
    let (major, minor) = module.bytecode_version();
    println!(
        "module @{} version {} (bytecode {major}.{minor})",
        module.name(),
        module.version()
    );
    println!("types: {:?}", module.types());
    for import in module.imports() {
        println!(
            "import {} {:?}",
            import.full_name, import.calling_convention
        );
    }
    for export in module.exports() {
        let sig = module.function_signature(export.internal_ordinal);
        println!(
            "export {} -> function {} {:?}",
            export.local_name,
            export.internal_ordinal,
            sig.and_then(|s| s.calling_convention)
        );
    }
    println!(
        "functions: {}, rodata segments: {}",
        module.function_count(),
        module.rodata_count()
    );
    if let Some(db) = module.debug_database() {
        println!(
            "debug database: {} locations, {} source maps",
            db.location_count(),
            db.source_map_count()
        );
    }
    Ok(())
}
