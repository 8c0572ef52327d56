//! Runs a program whose weights live in parameter archives: the module of
//! `tests/data/params/run/m.mlir` computes `x * w + b`, with `w` the
//! parameter `model::w` and `b` the unscoped parameter `b`. Here `w` comes
//! from a `.safetensors` file and `b` from an `.irpa` archive built in
//! memory, as an embedder would do it.
//!
//! Run with `cargo run --example run_with_parameters`.

use std::sync::Arc;

use irvm::{Context, Module, TypeRegistry};
use irvm_hal::{hal_module, BufferView};
use irvm_io_parameters::archive::irpa_writer::{ArchiveWriter, Contents};
use irvm_io_parameters::archive::Format;
use irvm_io_parameters::{io_parameters_module, ParameterIndex};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/params/run");

    // An archive in memory: `b` = [10, 20, 30, 40] as f32.
    let b: Vec<u8> = [10f32, 20.0, 30.0, 40.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut writer = ArchiveWriter::new();
    writer.add_data("b", b"", 64, b.len() as u64, Contents::Bytes(&b))?;
    let mut archive = std::io::Cursor::new(Vec::new());
    writer.write(&mut archive)?;

    // Scope "model" from a file (mapped), the unscoped parameters from
    // the bytes. Several files may feed one scope; the first with a key
    // wins.
    let mut index = ParameterIndex::new();
    index.add_file("model", dir.join("wb.safetensors"))?;
    index.add_bytes("", "b.irpa", Format::Irpa, archive.into_inner())?;
    let index = Arc::new(index);

    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module()?)?;
    ctx.register_host_module(&io_parameters_module(index.clone())?)?;
    ctx.register_module(Module::from_file(dir.join("m.vmfb"))?)?;
    let main = ctx.function("module.main")?;
    let x = BufferView::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0])?;
    let results = ctx.invoke(&main, &[x.into_value()])?;
    // A mapped archive that another process truncated meanwhile reads as
    // zeros past its new end: check before trusting the results.
    index.check_intact()?;
    let y = BufferView::from_value(&results[0]).ok_or("not a buffer view")?;
    println!("{:?}", y.to_vec::<f32>()?);
    Ok(())
}
