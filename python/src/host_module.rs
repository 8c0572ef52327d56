//! Host modules written in Python: `irvm.HostModule(name, state=None)`
//! with `.export(name, cconv, function)`, passed among `irvm.load`'s
//! modules (before the programs that import it); `irvm.compat`'s
//! `PyModuleInterface` is built on it.
//!
//! Each context the module is registered in gets its own state: `state()`
//! is called once there (what it raises fails the registration), and a
//! function is called as `function(state, *args)`, or `function(*args)`
//! when the module has no state. Calls run with the GIL released (the
//! context's call holds no Python lock), and each callback takes it while
//! it runs Python code, so threads calling into other contexts with the
//! same module run in parallel outside the callbacks.
//!
//! What a function raises fails the VM call (UNKNOWN, the exception's type
//! and message in the error); the exception itself becomes the
//! `__cause__` of the error the caller gets ([`with_cause`]), and a
//! `KeyboardInterrupt` (or any `BaseException` that is no `Exception`)
//! reaches the caller as itself: Ctrl-C in a callback acts as in Python
//! code.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex, Weak};

use pyo3::exceptions::{
    PyException, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use irvm::loader::{AbiError, CallingConvention, ValueKind};
use irvm::{
    ContextResources, HostFunctionDecl, HostModule, HostOutcome, HostState, HostStatus, Ref,
    StatusCode, Trap, ValType, Value,
};

use crate::arguments::{self, Slot};
use crate::results::{self, OpaqueRef};

thread_local! {
    /// The exception the last Python function (or state constructor) that
    /// failed on this thread raised, kept for the call that ran it: the
    /// interpreter runs host functions on the calling thread.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The object a Python host module's state constructor made for one
/// context: held by the context's state (which calls with it) and by the
/// `irvm.Module` of that context, which shows it to Python's cycle
/// collector and clears it when the module is garbage (a state that holds
/// the module that holds it is a cycle only the collector can free).
pub type StateSlot = Arc<Mutex<Option<Py<PyAny>>>>;

thread_local! {
    /// The state slots made on this thread since [`collecting_states`]
    /// began, or None when none is collecting.
    static MADE_STATES: RefCell<Option<Vec<StateSlot>>> = const { RefCell::new(None) };
}

/// Runs `f` (registrations of host modules, which make their states on
/// the calling thread) and returns the state slots made meanwhile too.
pub fn collecting_states<T>(f: impl FnOnce() -> T) -> (T, Vec<StateSlot>) {
    let outer = MADE_STATES.with(|m| m.borrow_mut().replace(Vec::new()));
    let out = f();
    let made = MADE_STATES.with(|m| std::mem::replace(&mut *m.borrow_mut(), outer));
    (out, made.unwrap_or_default())
}

/// Forgets an exception a callback of an earlier call left (called before
/// a call or load starts).
pub fn forget_raised() {
    RAISED.with(|r| r.borrow_mut().take());
}

/// `error` (a failed call or load) with the exception a Python host
/// function raised during it as its `__cause__`; a `KeyboardInterrupt` or
/// other `BaseException` that is no `Exception` is returned itself, as
/// Python code would propagate it.
pub fn with_cause(py: Python<'_>, error: PyErr) -> PyErr {
    let Some(raised) = RAISED.with(|r| r.borrow_mut().take()) else {
        return error;
    };
    if !raised.is_instance_of::<PyException>(py) {
        return raised;
    }
    error.set_cause(py, Some(raised));
    error
}

/// Keeps `raised` for [`with_cause`] and returns the trap that fails the
/// call: UNKNOWN with the exception's type and message, as iree.runtime's
/// "Exception raised from Python module" says them.
pub fn raised_trap(py: Python<'_>, what: &str, raised: PyErr) -> Trap {
    let text = exception_text(py, &raised);
    RAISED.with(|r| *r.borrow_mut() = Some(raised));
    Trap::new(StatusCode::Unknown, format!("{what} raised {text}"))
}

/// `TypeName: message` of an exception.
fn exception_text(py: Python<'_>, e: &PyErr) -> String {
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "exception".into());
    let message = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    format!("{name}: {message}")
}

/// One exported Python function.
struct PyExport {
    /// Local name.
    name: String,
    /// `module.name`, for messages.
    full: String,
    /// The calling convention as the VM reads it (`0v` completed as `0v_v`).
    cconv: String,
    /// The arguments (no `v`), and the value types of the results.
    args: Vec<Argument>,
    results: Vec<ValType>,
    callable: Py<PyAny>,
}

/// One argument of a calling convention (the VM checks the values' kinds
/// before the call).
enum Argument {
    /// One value.
    One,
    /// A variadic span `C...D` of this many values an element: the VM
    /// passes its element count (an i32) then the elements; the function
    /// gets a list (of values for a span of one kind, of tuples for
    /// several).
    Span(usize),
}

/// A Python host module once loaded somewhere: what every context it is
/// registered in shares. It holds the state constructor and functions
/// (and through them whatever they hold, such as compat's interface), so
/// when the last context and module object holding it are gone, so are
/// they ([`Life`] tells).
struct Definition {
    name: String,
    state: Option<Py<PyAny>>,
    /// `irvm.compat`: ref arguments as `irvm.Ref` (wrapped as `VmRef`
    /// there), a `None` ref result refused as iree.runtime refuses it.
    opaque_refs: bool,
    functions: Vec<PyExport>,
}

/// [`Definition`] as an [`irvm::HostModule`].
#[derive(Clone)]
pub struct PyDefinedModule(Arc<Definition>);

impl HostModule for PyDefinedModule {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn version(&self) -> u32 {
        0
    }

    fn functions(&self) -> Vec<HostFunctionDecl> {
        self.0
            .functions
            .iter()
            .map(|f| HostFunctionDecl {
                name: f.name.clone(),
                calling_convention: f.cconv.clone(),
            })
            .collect()
    }

    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        let definition = &self.0;
        let state = match &definition.state {
            None => None,
            Some(ctor) => Some(Python::attach(|py| {
                let code = crate::sigint::PythonCode::enter();
                let made = ctor.call0(py);
                let late = code.leave(py);
                made.and_then(|state| late.map(|()| state)).map_err(|e| {
                    raised_trap(
                        py,
                        &format!(
                            "the state constructor of Python host module '{}'",
                            definition.name
                        ),
                        e,
                    )
                })
            })?),
        };
        let state = state.map(|s| {
            let slot: StateSlot = Arc::new(Mutex::new(Some(s)));
            MADE_STATES.with(|m| {
                if let Some(made) = m.borrow_mut().as_mut() {
                    made.push(slot.clone());
                }
            });
            slot
        });
        Ok(Box::new(ContextState {
            definition: self.0.clone(),
            state,
        }))
    }

    fn instantiate_in(&self, _resources: &ContextResources) -> Result<Box<dyn HostState>, Trap> {
        self.instantiate()
    }
}

/// The module's state in one context: the object its constructor made.
struct ContextState {
    definition: Arc<Definition>,
    state: Option<StateSlot>,
}

impl HostState for ContextState {
    fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap> {
        let mut results = Vec::new();
        self.call_into(index, args, &mut results)?;
        Ok(HostOutcome::Done(results))
    }

    fn call_into(
        &mut self,
        index: usize,
        args: &[Value],
        results: &mut Vec<Value>,
    ) -> Result<HostStatus, Trap> {
        let definition = &*self.definition;
        let f = definition.functions.get(index).ok_or_else(|| {
            Trap::new(
                StatusCode::NotFound,
                format!(
                    "Python host module '{}' has no function {index}",
                    definition.name
                ),
            )
        })?;
        Python::attach(|py| {
            let state = match &self.state {
                None => None,
                Some(slot) => Some(
                    slot.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .as_ref()
                        .map(|s| s.clone_ref(py))
                        .ok_or_else(|| {
                            Trap::new(
                                StatusCode::FailedPrecondition,
                                format!(
                                    "the state of Python host module '{}' was cleared by \
                                     Python's garbage collector (its irvm.Module was garbage)",
                                    definition.name
                                ),
                            )
                        })?,
                ),
            };
            // Ctrl-C while the function runs is its own to catch or not.
            let code = crate::sigint::PythonCode::enter();
            let done = definition
                .call(py, f, state.as_ref(), args)
                .and_then(|out| definition.results(py, f, &out, results));
            let late = code.leave(py);
            done?;
            late.map_err(|e| raised_trap(py, &format!("Python host function '{}'", f.full), e))
        })?;
        Ok(HostStatus::Finished)
    }
}

impl Definition {
    /// Calls `f` with `args` as Python values (after the state, if any).
    fn call<'py>(
        &self,
        py: Python<'py>,
        f: &PyExport,
        state: Option<&Py<PyAny>>,
        args: &[Value],
    ) -> Result<Bound<'py, PyAny>, Trap> {
        let failed = |e: PyErr| {
            Trap::new(
                StatusCode::Internal,
                format!(
                    "the arguments of Python host function '{}' could not be made Python values: {}",
                    f.full,
                    exception_text(py, &e)
                ),
            )
        };
        let mismatch = || {
            Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "Python host function '{}' ({}) called with {} values that do not \
                     follow its calling convention",
                    f.full,
                    f.cconv,
                    args.len()
                ),
            )
        };
        let mut values = Vec::with_capacity(f.args.len() + 1);
        if let Some(state) = state {
            values.push(state.clone_ref(py));
        }
        let mut given = args.iter();
        let mut next = || given.next().ok_or_else(mismatch);
        for a in &f.args {
            match a {
                Argument::One => values.push(self.to_python(py, next()?).map_err(failed)?),
                Argument::Span(width) => {
                    let count = match next()? {
                        Value::I32(n) => usize::try_from(*n).map_err(|_| mismatch())?,
                        _ => return Err(mismatch()),
                    };
                    let list = PyList::empty(py);
                    for _ in 0..count {
                        let item = if *width == 1 {
                            self.to_python(py, next()?).map_err(failed)?
                        } else {
                            let mut fields = Vec::with_capacity(*width);
                            for _ in 0..*width {
                                fields.push(self.to_python(py, next()?).map_err(failed)?);
                            }
                            PyTuple::new(py, fields)
                                .map_err(failed)?
                                .into_any()
                                .unbind()
                        };
                        list.append(item).map_err(failed)?;
                    }
                    values.push(list.into_any().unbind());
                }
            }
        }
        if next().is_ok() {
            return Err(mismatch());
        }
        let tuple = PyTuple::new(py, values).map_err(failed)?;
        f.callable
            .bind(py)
            .call1(tuple)
            .map_err(|e| raised_trap(py, &format!("Python host function '{}'", f.full), e))
    }

    /// An argument as a Python value: numbers as int and float; refs as
    /// `irvm.load` returns them (arrays, lists, `irvm.Ref`), or, for
    /// `irvm.compat`, as `irvm.Ref` (`None` for a null ref either way).
    fn to_python(&self, py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
        match v {
            Value::Ref(r) if self.opaque_refs && !matches!(r, Ref::Null) => {
                Ok(Py::new(py, OpaqueRef { value: r.clone() })?.into_any())
            }
            _ => results::to_python(py, v),
        }
    }

    /// Appends what `f` returned to `results`, by its calling convention:
    /// nothing for none (what it returned is ignored, as iree.runtime
    /// does), the value itself for one, a tuple or list of as many values
    /// for several.
    fn results(
        &self,
        py: Python<'_>,
        f: &PyExport,
        out: &Bound<'_, PyAny>,
        results: &mut Vec<Value>,
    ) -> Result<(), Trap> {
        let wrong = |message: String| {
            Trap::new(
                StatusCode::InvalidArgument,
                format!("Python host function '{}' ({}) {message}", f.full, f.cconv),
            )
        };
        match f.results.as_slice() {
            [] => Ok(()),
            [one] => {
                results.push(self.result(py, f, 0, out, *one)?);
                Ok(())
            }
            many => {
                if !(out.is_instance_of::<PyTuple>() || out.is_instance_of::<PyList>()) {
                    return Err(wrong(format!(
                        "returned {}, not a tuple of its {} results",
                        type_name(out),
                        many.len()
                    )));
                }
                let items = out
                    .try_iter()
                    .and_then(|i| i.collect::<PyResult<Vec<_>>>())
                    .map_err(|e| wrong(format!("returned {}", exception_text(py, &e))))?;
                if items.len() != many.len() {
                    return Err(wrong(format!(
                        "returned {} values, not its {} results",
                        items.len(),
                        many.len()
                    )));
                }
                for (k, (item, &ty)) in items.iter().zip(many).enumerate() {
                    results.push(self.result(py, f, k, item, ty)?);
                }
                Ok(())
            }
        }
    }

    /// Result `k` of `f` as a VM value of type `ty`.
    fn result(
        &self,
        py: Python<'_>,
        f: &PyExport,
        k: usize,
        value: &Bound<'_, PyAny>,
        ty: ValType,
    ) -> Result<Value, Trap> {
        if ty == ValType::Ref && value.is_none() && self.opaque_refs {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                format!(
                    "Python host function '{}' returned None for ref result {k} \
                     (iree.runtime expects a VmRef)",
                    f.full
                ),
            ));
        }
        let inputs = Cell::new(0);
        let slot = Slot {
            function: &f.full,
            index: k,
            result: true,
            declared: None,
            copy: None,
            max_bytes: u64::MAX,
            inputs: &inputs,
            as_given: false,
        };
        arguments::convert(value, ty, &slot).map_err(|e| {
            let status = e
                .value(py)
                .getattr("status")
                .ok()
                .and_then(|s| s.extract::<String>().ok())
                .and_then(|s| status_named(&s))
                .unwrap_or(StatusCode::InvalidArgument);
            let text = match e.value(py).str() {
                Ok(s) => s.to_string(),
                Err(_) => exception_text(py, &e),
            };
            Trap::new(status, text)
        })
    }
}

fn status_named(name: &str) -> Option<StatusCode> {
    (0..=16)
        .map(StatusCode::from_u32)
        .find(|s| s.name() == name)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".into())
}

/// The value type of a kind; None for `v` (no value) and spans.
fn value_type(kind: &ValueKind) -> Option<ValType> {
    Some(match kind {
        ValueKind::I32 => ValType::I32,
        ValueKind::I64 => ValType::I64,
        ValueKind::F32 => ValType::F32,
        ValueKind::F64 => ValType::F64,
        ValueKind::Ref => ValType::Ref,
        ValueKind::Void | ValueKind::Span(_) => return None,
    })
}

/// The arguments of a calling convention's kinds (`v` has none); a span
/// of no kinds is refused.
fn arguments_of(kinds: &[ValueKind]) -> Result<Vec<Argument>, &'static str> {
    let mut out = Vec::new();
    for k in kinds {
        match k {
            ValueKind::Span(inner) => {
                let width = inner.iter().filter_map(value_type).count();
                if width == 0 {
                    return Err("has a variadic span of no values");
                }
                out.push(Argument::Span(width));
            }
            other => out.extend(value_type(other).map(|_| Argument::One)),
        }
    }
    Ok(out)
}

/// The value types of a calling convention's results; variadic results
/// are refused (as IREE's native modules have none).
fn results_of(kinds: &[ValueKind]) -> Result<Vec<ValType>, &'static str> {
    if kinds.iter().any(|k| matches!(k, ValueKind::Span(_))) {
        return Err(
            "has variadic results (C...D after '_'), which Python host functions do not return",
        );
    }
    Ok(kinds.iter().filter_map(value_type).collect())
}

/// How far a module's definition has come: functions still being added,
/// or in use (loaded into a context, or made a `VmModule`) and fixed.
enum Building {
    Open(Vec<PyExport>),
    Fixed(PyDefinedModule),
}

/// A host module whose functions are Python callables.
///
///     ext = irvm.HostModule("ext", state=lambda: {"calls": 0})
///     ext.export("add_one", "0i_i", lambda state, x: x + 1)
///     m = irvm.load(ext, "program.vmfb")   # the program imports ext.add_one
///
/// name: the module name bytecode imports it by (`ext.add_one`).
/// state: called with no arguments once for each context the module is
///     loaded into (each `irvm.load`); what it returns is given to every
///     function called there as its first argument. Without it, functions
///     get their arguments alone.
///
/// Functions are exported before the module is first loaded; it is fixed
/// then. Calls run with the GIL released, each function taking it while it
/// runs: what a function raises fails the call (`irvm.UnknownError` naming
/// the function, the exception's type and message, the exception as its
/// `__cause__`); `KeyboardInterrupt` reaches the caller as itself.
#[pyclass(name = "HostModule", module = "irvm", frozen, weakref)]
pub struct PyHostModule {
    name: String,
    state: Option<Py<PyAny>>,
    opaque_refs: bool,
    building: Mutex<Building>,
}

impl PyHostModule {
    /// The module fixed: what contexts register. Later `export`s fail.
    pub fn fix(&self, py: Python<'_>) -> PyDefinedModule {
        let mut building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let functions = match &mut *building {
            Building::Fixed(m) => return m.clone(),
            Building::Open(functions) => std::mem::take(functions),
        };
        let module = PyDefinedModule(Arc::new(Definition {
            name: self.name.clone(),
            state: self.state.as_ref().map(|s| s.clone_ref(py)),
            opaque_refs: self.opaque_refs,
            functions,
        }));
        *building = Building::Fixed(module.clone());
        module
    }
}

#[pymethods]
impl PyHostModule {
    #[new]
    #[pyo3(signature = (name, state=None, *, _opaque_refs=false))]
    fn new(name: String, state: Option<Py<PyAny>>, _opaque_refs: bool) -> PyResult<Self> {
        if name.is_empty() || name.contains('.') {
            return Err(PyValueError::new_err(format!(
                "'{name}' is no module name: bytecode imports `module.function`, so the name is \
                 not empty and has no '.'"
            )));
        }
        Ok(PyHostModule {
            name,
            state,
            opaque_refs: _opaque_refs,
            building: Mutex::new(Building::Open(Vec::new())),
        })
    }

    /// Exports `function` as `name` with calling convention `cconv`
    /// (IREE's: `0ii_i` takes two i32 and returns one; kinds `i` i32, `I`
    /// i64, `f` f32, `F` f64, `r` ref, `v` none; `0v` or `0ii` without
    /// `_` return nothing); returns `function`. Arguments come as int,
    /// float, and refs as `irvm.load`'s results are (numpy arrays for
    /// buffer views, lists, `irvm.Ref`, None for null); one result is
    /// returned as the value, several as a tuple, each converted as
    /// `irvm.load`'s arguments are. A variadic span of arguments (`C...D`,
    /// `0CiD_i`) comes as one list: of values for a span of one kind, of
    /// tuples for several (`0CifD_v`: `[(i, f), ...]`); variadic results
    /// are refused.
    fn export<'py>(
        &self,
        name: String,
        cconv: &str,
        function: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let full = format!("{}.{name}", self.name);
        if !function.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "host function '{full}': {} is not callable",
                type_name(&function)
            )));
        }
        if name.is_empty() || name.contains('.') {
            return Err(PyValueError::new_err(format!(
                "'{name}' is no function name for host module '{}' (not empty, no '.')",
                self.name
            )));
        }
        // IREE's `0v` and `0ii` (no results) are `0v_v` and `0ii_v` here.
        let text = if cconv.contains('_') {
            cconv.to_string()
        } else if cconv.len() > 1 {
            format!("{cconv}_v")
        } else {
            format!("{cconv}v_v")
        };
        let parsed = CallingConvention::parse(&text).map_err(|e| {
            let text = format!("host function '{full}': calling convention '{cconv}': {e}");
            match e {
                // Another version of the calling conventions (as
                // iree.runtime: UNIMPLEMENTED).
                AbiError::UnsupportedVersion { .. } => PyNotImplementedError::new_err(text),
                _ => PyValueError::new_err(text),
            }
        })?;
        let (args, results) = arguments_of(&parsed.args)
            .and_then(|a| Ok((a, results_of(&parsed.results)?)))
            .map_err(|why| {
                PyValueError::new_err(format!(
                    "host function '{full}': calling convention '{cconv}' {why}"
                ))
            })?;
        let mut building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let Building::Open(functions) = &mut *building else {
            return Err(PyRuntimeError::new_err(format!(
                "host module '{}' is in use (loaded, or made a VmModule): export '{name}' \
                 before that",
                self.name
            )));
        };
        if functions.iter().any(|f| f.name == name) {
            return Err(PyValueError::new_err(format!(
                "host module '{}' already has a function '{name}'",
                self.name
            )));
        }
        functions.push(PyExport {
            name,
            full,
            cconv: text,
            args,
            results,
            callable: function.clone().unbind(),
        });
        Ok(function)
    }

    /// The module name.
    #[getter]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// `(name, calling convention)` of each function, in order.
    #[getter]
    fn functions(&self) -> Vec<(String, String)> {
        let building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let list = |fs: &[PyExport]| {
            fs.iter()
                .map(|f| (f.name.clone(), f.cconv.clone()))
                .collect()
        };
        match &*building {
            Building::Open(fs) => list(fs),
            Building::Fixed(m) => list(&m.0.functions),
        }
    }

    /// Fixes the module (no more exports) and returns what tells whether
    /// its definition is still held by a context or module object
    /// (`irvm.compat`'s `PyModuleInterface.destroyed`); it holds nothing.
    fn _fix(&self, py: Python<'_>) -> Life {
        Life(Arc::downgrade(&self.fix(py).0))
    }

    fn __repr__(&self) -> String {
        let functions = self
            .functions()
            .into_iter()
            .map(|(n, c)| format!("{n}({c})"))
            .collect::<Vec<_>>();
        format!(
            "<irvm.HostModule '{}' functions: {}>",
            self.name,
            functions.join(", ")
        )
    }
}

/// Whether a fixed module's definition is still held (by the module object
/// or a context).
#[pyclass(name = "_HostModuleLife", module = "irvm", frozen)]
pub struct Life(Weak<Definition>);

#[pymethods]
impl Life {
    /// True while a module object or context holds the definition.
    #[getter]
    fn alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}
