//! The exceptions the package raises: `irvm.VmError` and one subclass per
//! IREE status code (`InvalidArgumentError`, `ResourceExhaustedError`, ...),
//! some also deriving from the Python built-in a caller would catch for
//! them (`ValueError`, `TimeoutError`, `LookupError`, `NotImplementedError`,
//! `PermissionError`). Each carries `.status` (the status name),
//! `.location` (`file:line:col` of the innermost frame with a source
//! position, or `None`) and `.backtrace` (a list of frame lines).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

use irvm::{StatusCode, Trap};

/// Each status (but OK and DEFERRED), its exception class name, and the
/// Python built-in it also derives from.
const CLASSES: &[(StatusCode, &str, Option<&str>)] = &[
    (StatusCode::Cancelled, "CancelledError", None),
    (StatusCode::Unknown, "UnknownError", None),
    (
        StatusCode::InvalidArgument,
        "InvalidArgumentError",
        Some("ValueError"),
    ),
    (
        StatusCode::DeadlineExceeded,
        "DeadlineExceededError",
        Some("TimeoutError"),
    ),
    (StatusCode::NotFound, "NotFoundError", Some("LookupError")),
    (StatusCode::AlreadyExists, "AlreadyExistsError", None),
    (
        StatusCode::PermissionDenied,
        "PermissionDeniedError",
        Some("PermissionError"),
    ),
    (
        StatusCode::ResourceExhausted,
        "ResourceExhaustedError",
        None,
    ),
    (
        StatusCode::FailedPrecondition,
        "FailedPreconditionError",
        None,
    ),
    (StatusCode::Aborted, "AbortedError", None),
    (StatusCode::OutOfRange, "OutOfRangeError", None),
    (
        StatusCode::Unimplemented,
        "UnimplementedError",
        Some("NotImplementedError"),
    ),
    (StatusCode::Internal, "InternalError", None),
    (StatusCode::Unavailable, "UnavailableError", None),
    (StatusCode::DataLoss, "DataLossError", None),
    (StatusCode::Unauthenticated, "UnauthenticatedError", None),
    (StatusCode::Incompatible, "IncompatibleError", None),
];

/// `VmError` and the subclasses, made once per interpreter.
struct Classes {
    base: Py<PyType>,
    by_status: Vec<(StatusCode, Py<PyType>)>,
}

static CLASSES_CELL: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES_CELL.get_or_try_init(py, || {
        let builtins = py.import("builtins")?;
        let type_ = builtins.getattr("type")?;
        let namespace = |doc: String| -> PyResult<Bound<'_, PyDict>> {
            let d = PyDict::new(py);
            d.set_item("__module__", "irvm")?;
            d.set_item("__doc__", doc)?;
            Ok(d)
        };
        // Class-level defaults, so that an error made in Python
        // (`irvm.InvalidArgumentError("boom")`) has the attributes too.
        let base_namespace = |doc: String| -> PyResult<Bound<'_, PyDict>> {
            let d = namespace(doc)?;
            d.set_item("status", "UNKNOWN")?;
            d.set_item("location", py.None())?;
            d.set_item("backtrace", PyList::empty(py))?;
            Ok(d)
        };
        let base = type_.call1((
            "VmError",
            PyTuple::new(py, [builtins.getattr("Exception")?])?,
            base_namespace(
                "A failure inside irvm: loading, linking or running a module.\n\n\
                 Attributes: status (the IREE status name, e.g. 'INVALID_ARGUMENT'), \
                 location ('file:line:col' of the failing source line when the module has \
                 debug information, else None), backtrace (the VM frames, innermost first, \
                 as text lines)."
                    .into(),
            )?,
        ))?;
        let mut by_status = Vec::new();
        for &(status, name, builtin) in CLASSES {
            let mut bases = vec![base.clone()];
            if let Some(b) = builtin {
                bases.push(builtins.getattr(b)?);
            }
            let class_namespace = namespace(format!("A VmError with status {}.", status.name()))?;
            class_namespace.set_item("status", status.name())?;
            let class = type_.call1((name, PyTuple::new(py, bases)?, class_namespace))?;
            by_status.push((status, class.cast_into::<PyType>()?.unbind()));
        }
        Ok::<_, PyErr>(Classes {
            base: base.cast_into::<PyType>()?.unbind(),
            by_status,
        })
    })
}

/// Adds `VmError` and its subclasses to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let c = classes(py)?;
    m.add("VmError", c.base.bind(py))?;
    for (_, class) in &c.by_status {
        m.add(class.bind(py).name()?, class.bind(py))?;
    }
    Ok(())
}

/// The exception for `status` with `message`, its `.status` set and no
/// location or backtrace.
pub fn vm_error(py: Python<'_>, status: StatusCode, message: &str) -> PyErr {
    build(py, status, message, None, Vec::new())
}

/// The exception for a trap: its status, message, innermost source location
/// and backtrace.
pub fn from_trap(py: Python<'_>, trap: &Trap) -> PyErr {
    from_text_and_trap(py, &trap.to_string(), trap)
}

/// The exception for a failure described by `text` that a trap caused (a
/// module's `__init` failing during a load): the trap's status, innermost
/// source location and backtrace, as for a call.
pub fn from_text_and_trap(py: Python<'_>, text: &str, trap: &Trap) -> PyErr {
    let location = trap
        .backtrace
        .iter()
        .find_map(|f| f.source.first().map(|p| p.to_string()));
    let backtrace = trap.backtrace.iter().map(|f| f.to_string()).collect();
    build(py, trap.code, text, location, backtrace)
}

/// The exception for an error whose text starts with IREE's `CODE; `
/// (link errors, parameter errors), else of `default` status.
pub fn from_text(py: Python<'_>, text: &str, default: StatusCode) -> PyErr {
    let status = text
        .split_once("; ")
        .and_then(|(code, _)| CLASSES.iter().map(|c| c.0).find(|s| s.name() == code))
        .unwrap_or(default);
    vm_error(py, status, text)
}

fn build(
    py: Python<'_>,
    status: StatusCode,
    message: &str,
    location: Option<String>,
    backtrace: Vec<String>,
) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let c = classes(py)?;
        let class = c
            .by_status
            .iter()
            .find(|(s, _)| *s == status)
            .map(|(_, t)| t.bind(py))
            .unwrap_or(c.base.bind(py));
        let e = class.call1((message,))?;
        e.setattr("status", status.name())?;
        e.setattr("location", location)?;
        e.setattr("backtrace", PyList::new(py, backtrace)?)?;
        Ok(PyErr::from_value(e))
    })();
    made.unwrap_or_else(|e| e)
}
