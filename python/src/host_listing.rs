//! The host modules irvm provides itself (`hal`, `io_parameters`) as
//! `irvm.compat` shows them before they are in a context: name, version and
//! exported functions with their calling conventions, read from the
//! modules through [`irvm::HostModule`].

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use irvm::HostModule;
use irvm_io_parameters::{io_parameters_module, ParameterIndex};

/// `{"name", "version", "functions": [(name, calling convention), ...]}`
/// of the host module `name` (`hal` or `io_parameters`), its functions in
/// the order of its table (IREE's: sorted by name, so a function's place
/// is its ordinal).
#[pyfunction]
pub fn _host_module_info(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    let internal = |e: &dyn std::fmt::Display| {
        crate::errors::vm_error(
            py,
            irvm::StatusCode::Internal,
            &format!("making the {name} module: {e}"),
        )
    };
    let module: Box<dyn HostModule> = match name {
        "hal" => Box::new(irvm_hal::hal_module().map_err(|e| internal(&e))?),
        "io_parameters" => Box::new(
            io_parameters_module(Arc::new(ParameterIndex::new())).map_err(|e| internal(&e))?,
        ),
        _ => {
            return Err(PyValueError::new_err(format!(
                "'{name}' is no host module irvm provides (hal, io_parameters)"
            )))
        }
    };
    let functions: Vec<(String, String)> = module
        .functions()
        .into_iter()
        .map(|f| (f.name, f.calling_convention))
        .collect();
    let out = PyDict::new(py);
    out.set_item("name", module.name())?;
    out.set_item("version", module.version())?;
    out.set_item("functions", functions)?;
    Ok(out.into_any().unbind())
}
