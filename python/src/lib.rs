//! The `irvm` Python package's extension (`irvm._irvm`): load IREE VM
//! modules into a context with the hal and io_parameters host modules, and
//! call their exports with numpy arrays and Python scalars.
//!
//! - `load`: `irvm.load(*modules, device=..., parameters=..., fuel=...,
//!   timeout=..., max_memory_bytes=..., engine=...)`.
//! - `loaded.rs`: the loaded module and its functions (GIL released during
//!   calls, Ctrl-C through `sigint.rs`).
//! - `arguments.rs`/`results.rs`: values in and out (zero-copy by rule).
//! - `sub_byte.rs`: tensors of `i4`, `i2`, `ui4` (packed in the VM,
//!   one element per byte in numpy).
//! - `ml_dtypes.rs`: bfloat16 and float8 arrays (ml_dtypes' dtypes), and
//!   its sub-byte integer arrays (`int4`) as arguments.
//! - `declaration.rs`: the functions' declared tensor types.
//! - `errors.rs`: `irvm.VmError` and its subclasses.
//! - `mapped_memory.rs`: `MappedBytes`, mapped HAL memory through the
//!   buffer protocol (read-only, as iree.runtime's `MappedMemory`).
//! - `host_module.rs`: `irvm.HostModule`, host modules written in Python.
//! - `host_listing.rs`: the `hal` and `io_parameters` modules' functions,
//!   as `irvm.compat` lists them.
//! - `parameters.rs`: parameter archives (files, bytes, and the `.irpa`
//!   writing `irvm.compat.ParameterIndex` uses).

mod arguments;
mod byte_view;
mod declaration;
mod errors;
mod host_listing;
mod host_module;
mod loaded;
mod mapped_memory;
mod ml_dtypes;
mod module_cache;
mod parameters;
mod results;
mod sigint;
mod sub_byte;
mod turns;
mod vm_buffer;

use pyo3::prelude::*;

#[pymodule]
fn _irvm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_class::<loaded::LoadedModule>()?;
    m.add_class::<loaded::Function>()?;
    m.add_class::<results::OpaqueRef>()?;
    m.add_class::<results::VmBytes>()?;
    m.add_class::<vm_buffer::VmBuffer>()?;
    m.add_class::<mapped_memory::MappedBytes>()?;
    m.add_class::<host_module::PyHostModule>()?;
    m.add_class::<host_module::Life>()?;
    m.add_function(wrap_pyfunction!(loaded::load, m)?)?;
    m.add_function(wrap_pyfunction!(sub_byte::_packed_view, m)?)?;
    m.add_function(wrap_pyfunction!(vm_buffer::_vm_buffer_address, m)?)?;
    m.add_function(wrap_pyfunction!(vm_buffer::_vm_buffer_same, m)?)?;
    m.add_function(wrap_pyfunction!(loaded::_context, m)?)?;
    m.add_function(wrap_pyfunction!(loaded::_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(host_listing::_host_module_info, m)?)?;
    m.add_function(wrap_pyfunction!(parameters::_memory_archive, m)?)?;
    m.add_class::<parameters::MemoryArchive>()?;
    m.add_function(wrap_pyfunction!(parameters::_write_irpa, m)?)?;
    m.add_function(wrap_pyfunction!(parameters::_archive_entries, m)?)?;
    let main: u64 = py
        .import("threading")?
        .call_method0("main_thread")?
        .getattr("ident")?
        .extract()?;
    sigint::set_main_thread(main);
    Ok(())
}
