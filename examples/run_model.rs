//! Runs a tensor program compiled by iree-compile for vmvx: the MLP of
//! `tests/models/mlp.mlir` (`predict(tensor<4x8xf32>) -> tensor<4x3xf32>`).
//!
//! Run with `cargo run --example run_model`.

use irvm::{Context, Module, TypeRegistry};
use irvm_hal::{hal_module, BufferView};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/models/mlp.vmfb");
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module()?)?;
    ctx.register_module(Module::from_file(path)?)?;
    let predict = ctx.function("module.predict")?;
    let x = BufferView::from_slice(&[4, 8], &[1.0f32; 32])?;
    let results = ctx.invoke(&predict, &[x.into_value()])?;
    let y = BufferView::from_value(&results[0]).ok_or("not a buffer view")?;
    println!("{:?}", y.to_vec::<f32>()?);
    Ok(())
}
