//! `irvm.load` and what it returns: a context holding the given modules
//! (linked in order, with the `hal` and `io_parameters` host modules when
//! they import them) whose exported functions are attributes and items.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyAttributeError, PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use pyo3::PyTraverseError;

use irvm::dynamic::{DynamicModule, DynamicModuleSpec};
use irvm::loader::{LentBytes, ModuleBytes};
use irvm::{
    Context, Func, InterruptHandle, Module, NativeModule, StatusCode, Tier, TypeRegistry, ValType,
    Value,
};
use irvm_hal as hal;
use irvm_io_parameters::{io_parameters_module, ParameterIndex};

use crate::arguments::{self, Slot};
use crate::declaration::{self, Declared};
use crate::errors::{from_text, from_trap, vm_error};
use crate::module_cache;
use crate::turns::{Turn, Turns};

/// A context and the settings every call applies.
pub struct Loaded {
    ctx: Mutex<Context>,
    /// Calls (and loads) take turns on the context: a wait for a turn
    /// can be interrupted, a wait on `ctx`'s mutex could not.
    turns: Turns,
    names: Mutex<Names>,
    interrupt: InterruptHandle,
    fuel: Option<u64>,
    timeout: Option<Duration>,
    max_input_bytes: u64,
    /// The device of the `hal` module, registered with the first module
    /// that imports it, and what names it in [`shared_hal`]'s cache (empty:
    /// a hal module of this context's own, [`Settings::with_trace`]).
    device: hal::DeviceOptions,
    device_key: String,
    /// The archives of the `io_parameters` module, likewise; replaced
    /// ([`Loaded::set_parameters`]) until that module is registered.
    index: Mutex<Option<Arc<ParameterIndex>>>,
    /// The states Python host modules made in this context, shown to
    /// Python's cycle collector by the `Module` ([`LoadedModule`]'s
    /// `__traverse__`). Locked only with the GIL held, as the slots are.
    states: Mutex<Vec<crate::host_module::StateSlot>>,
}

/// What the registered modules are called.
#[derive(Default)]
struct Names {
    /// The last module's name: bare names are looked up there first.
    main: String,
    /// The last module's runnable exports, in order.
    exports: Vec<String>,
    /// `module.function` to its `iree.abi.declaration`.
    declarations: HashMap<String, String>,
    /// `module.function` of the exports made with
    /// `--iree-execution-model=async-external`: their last two parameters
    /// are fences the call passes itself ([`hal::uses_coarse_fences`]).
    fenced: std::collections::HashSet<String>,
}

/// How `load` (and `irvm.compat`'s contexts) set up a context.
pub struct Settings {
    device: hal::DeviceOptions,
    device_key: String,
    index: Option<Arc<ParameterIndex>>,
    fuel: Option<u64>,
    timeout: Option<Duration>,
    max_memory_bytes: Option<u64>,
    tier: Option<Tier>,
}

impl Settings {
    /// The settings of `load`'s keyword arguments, checked.
    pub fn new(
        py: Python<'_>,
        device: &str,
        parameters: Option<&Bound<'_, PyAny>>,
        fuel: Option<u64>,
        timeout: Option<f64>,
        max_memory_bytes: Option<u64>,
        engine: Option<&str>,
    ) -> PyResult<Settings> {
        let tier = engine
            .map(|e| e.parse::<Tier>().map_err(PyValueError::new_err))
            .transpose()?;
        let timeout = match timeout {
            Some(t) if t.is_nan() || t < 0.0 => {
                return Err(PyValueError::new_err("timeout is 0 or more seconds"))
            }
            Some(t) => Some(Duration::try_from_secs_f64(t).unwrap_or(Duration::MAX)),
            None => None,
        };
        let mut device_options = hal::DeviceOptions::from_uri(device, Some(hal::default_workers()))
            .map_err(|e| vm_error(py, StatusCode::NotFound, &format!("device '{device}': {e}")))?;
        device_options.tier = tier;
        let index = parameters
            .map(crate::parameters::parameter_index)
            .transpose()?
            .map(Arc::new);
        Ok(Settings {
            device: device_options,
            device_key: format!("{device} {tier:?}"),
            index,
            fuel,
            timeout,
            max_memory_bytes,
            tier,
        })
    }
}

impl Settings {
    /// `hal.buffer_view.trace` delivered to `callback` ([`trace_hook`]):
    /// the context then gets a hal module of its own, not the process's
    /// shared one (an empty `device_key` says so).
    fn with_trace(mut self, callback: Py<PyAny>) -> Settings {
        self.device.on_trace = Some(trace_hook(callback));
        self.device_key = String::new();
        self
    }
}

impl Loaded {
    /// A context with no module yet.
    pub fn new(settings: Settings) -> Loaded {
        let mut ctx = Context::new(&TypeRegistry::new());
        let mut limits = ctx.limits();
        if let Some(n) = settings.max_memory_bytes {
            limits.max_memory_bytes = n;
        }
        ctx.set_limits(limits);
        if let Some(t) = settings.tier {
            ctx.set_tier(t);
        }
        let interrupt = ctx.interrupt_handle();
        Loaded {
            ctx: Mutex::new(ctx),
            turns: Turns::default(),
            names: Mutex::new(Names::default()),
            interrupt,
            fuel: settings.fuel,
            timeout: settings.timeout,
            max_input_bytes: limits.max_memory_bytes,
            device: settings.device,
            device_key: settings.device_key,
            index: Mutex::new(settings.index),
            states: Mutex::new(Vec::new()),
        }
    }

    /// Registers `sources` in order (each module's `__init` runs on the
    /// fuel and within the timeout), with the hal and io_parameters modules
    /// before the first module that imports them.
    fn add(&self, sources: Vec<Source>, deadline: Option<Instant>) -> Result<(), LoadFailure> {
        let mut ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        ctx.set_fuel(self.fuel);
        if deadline.is_some() {
            ctx.set_deadline(deadline);
        }
        for (k, source) in sources.into_iter().enumerate() {
            if let Source::Host(m) = &source {
                // A host module written in Python (`irvm.HostModule`).
                ctx.register_host_module(m).map_err(link_error)?;
                continue;
            }
            if let Source::Dynamic(spec) = &source {
                // A host module from a shared library, as `irvm run
                // --module=lib.so[@entry][?key=value]` loads it.
                let m = DynamicModule::load_spec(spec).map_err(|e| {
                    (
                        StatusCode::InvalidArgument,
                        format!("loading host module '{spec}': {e}"),
                    )
                })?;
                ctx.register_host_module(&m).map_err(link_error)?;
                continue;
            }
            let module = read_module(k, source)?;
            if hal::module_needs_hal(&module) && !ctx.module_names().contains(&"hal") {
                self.register_hal(&mut ctx)?;
            }
            if hal::module_needs_inline_hal(&module) && !ctx.module_names().contains(&"hal_inline")
            {
                // `--iree-execution-model=inline-dynamic`: the inline HAL
                // runs its dispatches on the calling thread.
                let modules = hal::inline_modules_with(self.device.clone())
                    .map_err(|e| (StatusCode::Internal, e.to_string()))?;
                for m in &modules {
                    ctx.register_host_module(m).map_err(link_error)?;
                }
            }
            if needs(&module, "io_parameters") && !ctx.module_names().contains(&"io_parameters") {
                self.register_io_parameters(&mut ctx, || {
                    format!(
                        "module '{}' imports io_parameters: pass its archives with parameters=",
                        module.name()
                    )
                })?;
            }
            let main = module.name().to_string();
            let mut exports = Vec::new();
            let mut declarations = Vec::new();
            let mut fenced = Vec::new();
            for e in module.exports() {
                if hal::uses_coarse_fences(&module, e.local_name) {
                    fenced.push(format!("{main}.{}", e.local_name));
                }
                if let Some(sig) = module.function_signature(e.internal_ordinal) {
                    if let Some((_, d)) =
                        sig.attrs.iter().find(|(k, _)| *k == "iree.abi.declaration")
                    {
                        declarations.push((format!("{main}.{}", e.local_name), d.to_string()));
                    }
                }
                if !e.local_name.starts_with("__") && !e.local_name.contains('$') {
                    exports.push(e.local_name.to_string());
                }
            }
            ctx.register_module(module).map_err(link_error)?;
            // Held briefly: readers of the names hold the GIL.
            let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
            names.declarations.extend(declarations);
            names.fenced.extend(fenced);
            names.main = main;
            names.exports = exports;
        }
        if let Some(index) = self.parameter_index() {
            index
                .check_intact()
                .map_err(|e| (e.code(), e.to_string()))?;
        }
        Ok(())
    }

    /// Registers the `hal` module for this context's device: the process's
    /// shared one for the device, or one of the context's own when its
    /// traces go to a callback.
    fn register_hal(&self, ctx: &mut Context) -> Result<(), LoadFailure> {
        if self.device_key.is_empty() {
            let m = hal::hal_module_sharing(hal::DeviceConfig::new(self.device.clone()))
                .map_err(|e| (StatusCode::Internal, e.to_string()))?;
            ctx.register_host_module(&m).map_err(link_error)?;
        } else {
            let m = shared_hal(&self.device_key, &self.device)?;
            ctx.register_host_module(&*m).map_err(link_error)?;
        }
        Ok(())
    }

    /// Registers the `io_parameters` module over this context's archives;
    /// `missing` is the error's text when the context has none.
    fn register_io_parameters(
        &self,
        ctx: &mut Context,
        missing: impl FnOnce() -> String,
    ) -> Result<(), LoadFailure> {
        let index = self
            .parameter_index()
            .ok_or_else(|| (StatusCode::NotFound, missing()))?;
        let m = io_parameters_module(index).map_err(|e| (StatusCode::Internal, e.to_string()))?;
        ctx.register_host_module(&m).map_err(link_error)?;
        Ok(())
    }

    /// The archives the `io_parameters` module reads, if any.
    fn parameter_index(&self) -> Option<Arc<ParameterIndex>> {
        self.index.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Makes `index` the archives of this context's `io_parameters`
    /// module: refused once that module is registered (a program imported
    /// it, or one of its functions was called), as its archives are then
    /// in use.
    fn set_parameters(&self, index: ParameterIndex) -> Result<(), LoadFailure> {
        let ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        if ctx.module_names().contains(&"io_parameters") {
            return Err((
                StatusCode::FailedPrecondition,
                "the context's io_parameters module is in use already (a program imported it or \
                 one of its functions was called): its parameter archives cannot change"
                    .to_string(),
            )
                .into());
        }
        *self.index.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(index));
        Ok(())
    }

    /// Registers the host module `name` irvm provides (`hal` or
    /// `io_parameters`) unless the context has it already: what
    /// `irvm.compat` does before calling one of its functions from Python
    /// (otherwise it is registered with the first program that imports it).
    fn ensure_host_module(&self, name: &str) -> Result<(), LoadFailure> {
        let mut ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        if ctx.module_names().contains(&name) {
            return Ok(());
        }
        match name {
            "hal" => self.register_hal(&mut ctx),
            "io_parameters" => self.register_io_parameters(&mut ctx, || {
                "the context has no parameter archives for io_parameters: pass them with \
                 parameters="
                    .to_string()
            }),
            _ => Err((
                StatusCode::InvalidArgument,
                format!("'{name}' is no host module irvm provides (hal, io_parameters)"),
            )
                .into()),
        }
    }

    /// Applies the per-call settings (fuel, deadline) and runs `f` on the
    /// context with the GIL released and Ctrl-C armed; a SIGINT raises
    /// `KeyboardInterrupt` (through Python's own handler) once `f` returns.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Context) -> Result<T, irvm::Trap> + Send,
    ) -> PyResult<T> {
        // The timeout counts from the call, so the wait for the module's
        // turn (another thread's call holding it) is within it.
        let deadline = self.deadline_from_now();
        let _turn = self.turn_within(py, deadline)?;
        crate::host_module::forget_raised();
        let outcome = self.interruptible(py, || {
            let mut ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
            if self.fuel.is_some() {
                ctx.set_fuel(self.fuel);
            }
            if deadline.is_some() {
                ctx.set_deadline(deadline);
            }
            f(&mut ctx)
        });
        // What a Python host function raised is the error's cause (or,
        // for KeyboardInterrupt, the error itself).
        outcome
            .and_then(|o| o.map_err(|t| from_trap(py, &t)))
            .map_err(|e| crate::host_module::with_cause(py, e))
    }

    /// This context's turn: at once when no other call runs, else waited
    /// for with the GIL released; Ctrl-C (on the main thread, when
    /// Python's handler raises) gives up the wait with `KeyboardInterrupt`
    /// and leaves the running call alone.
    /// A call or lookup made from inside a call on this context on the
    /// same thread (a trace callback) fails with FAILED_PRECONDITION: the
    /// running call holds the context, so waiting would never end.
    fn turn(&self, py: Python<'_>) -> PyResult<Turn<'_>> {
        self.turn_within(py, None)
    }

    /// When a call starting now must end by (the `timeout` setting).
    fn deadline_from_now(&self) -> Option<Instant> {
        self.timeout.and_then(|t| Instant::now().checked_add(t))
    }

    /// This context's turn, as [`LoadedModule::turn`], the wait given up
    /// with DEADLINE_EXCEEDED at `deadline` (a call's timeout covers its
    /// wait for the module).
    fn turn_within(&self, py: Python<'_>, deadline: Option<Instant>) -> PyResult<Turn<'_>> {
        if let Some(turn) = self.turns.try_take() {
            return Ok(turn);
        }
        if self.turns.held_here() {
            return Err(vm_error(
                py,
                StatusCode::FailedPrecondition,
                "a call or function lookup on this module from inside one of its own calls \
                 (a trace callback) would wait for that call forever: irvm runs one call at a \
                 time per module; make it after the call returns",
            ));
        }
        check_signals(py)?;
        let raises = crate::sigint::python_handler_raises(py)?;
        let (turn, interrupted) = py.detach(|| {
            let wait = crate::sigint::WaitGuard::new(raises);
            let turn = self
                .turns
                .take(|| wait.seen() || deadline.is_some_and(|d| Instant::now() >= d));
            (turn, wait.finish())
        });
        if interrupted {
            drop(turn);
            // SAFETY: called with the GIL held, on the main thread (the
            // guard arms only there); runs Python's signal handlers.
            if unsafe { pyo3::ffi::PyErr_CheckSignals() } != 0 {
                return Err(PyErr::fetch(py));
            }
            return self.turn_within(py, deadline);
        }
        turn.map_err(|why| match why {
            crate::turns::GaveUp::WouldWaitForever => vm_error(
                py,
                StatusCode::FailedPrecondition,
                "a call or function lookup on this module would wait forever: the call \
                 holding it (on another thread) waits for a module this thread's call \
                 holds (Python host functions calling each other's modules from two \
                 threads); irvm runs one call at a time per module",
            ),
            crate::turns::GaveUp::Asked if deadline.is_some_and(|d| Instant::now() >= d) => {
                vm_error(
                    py,
                    StatusCode::DeadlineExceeded,
                    "the call's timeout passed while it waited for the module (a call on \
                     another thread holds it); irvm runs one call at a time per module",
                )
            }
            crate::turns::GaveUp::Asked => {
                PyRuntimeError::new_err("gave up waiting for the module")
            }
        })
    }

    /// Runs `f` with the GIL released and Ctrl-C armed on this context's
    /// interrupt (when Python's SIGINT handler raises); a SIGINT raises
    /// `KeyboardInterrupt` (through Python's own handler) once `f` returns.
    fn interruptible<T: Send>(&self, py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
        check_signals(py)?;
        let raises = crate::sigint::python_handler_raises(py)?;
        let (outcome, interrupted) = py.detach(|| {
            let guard = crate::sigint::CallGuard::new(&self.interrupt, raises);
            let outcome = f();
            let interrupted = guard.finish();
            if interrupted {
                // One that came as the call returned must not cancel the next.
                self.interrupt.clear();
            }
            (outcome, interrupted)
        });
        if interrupted {
            // SAFETY: called with the GIL held, on the main thread (the
            // guard arms only there); runs Python's signal handlers.
            if unsafe { pyo3::ffi::PyErr_CheckSignals() } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(outcome)
    }
}

/// Runs Python's handlers of signals that came while the GIL was held
/// (a Ctrl-C while the arguments were converted): `KeyboardInterrupt`
/// then, before the call starts, rather than lost.
fn check_signals(py: Python<'_>) -> PyResult<()> {
    // SAFETY: called with the GIL held; runs pending signal handlers (on
    // the main thread only, a no-op elsewhere).
    if unsafe { pyo3::ffi::PyErr_CheckSignals() } != 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// The modules given to `load`, read with the GIL held.
enum Source {
    Path(String),
    Bytes(Vec<u8>),
    /// A `bytes` object's memory, not copied.
    Lent(LentBytes),
    /// A dynamic host module's spec: `lib.so[@entry][?key=value&...]`.
    Dynamic(String),
    /// A host module written in Python (`irvm.HostModule`), fixed.
    Host(crate::host_module::PyDefinedModule),
}

/// A path, or a dynamic host module's spec when it names a shared library.
fn path_source(path: String) -> Source {
    if DynamicModuleSpec::looks_dynamic(&path) {
        Source::Dynamic(path)
    } else {
        Source::Path(path)
    }
}

fn source_of(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(m) = obj.cast::<crate::host_module::PyHostModule>() {
        return Ok(Source::Host(m.get().fix(obj.py())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(path_source(s.to_str()?.to_string()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        // Immutable: used in place, kept alive by the module.
        let memory = crate::arguments::ArrayMemory::of_bytes(b);
        return Ok(Source::Lent(LentBytes(Arc::new(memory))));
    }
    let py = obj.py();
    let os = py.import("os")?;
    if obj.hasattr("__fspath__")? {
        let p = os.call_method1("fspath", (obj,))?;
        return Ok(path_source(p.extract()?));
    }
    // Any buffer: bytearray, memoryview, mmap, a uint8 array.
    match py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((obj,))
        .and_then(|m| m.call_method0("tobytes"))
    {
        Ok(b) => Ok(Source::Bytes(b.cast::<PyBytes>()?.as_bytes().to_vec())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "a module is a path, bytes or a buffer object, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// `hal.buffer_view.trace` delivered to `callback(key, arrays,
/// element_types)`: numpy arrays over the traced buffer views (as results
/// are) and their HAL element types (ints; the array's dtype cannot say
/// signless `i32` from `si32`). What the callback raises fails the call
/// (UNKNOWN, with the exception's text), as iree.runtime's debug sink does.
fn trace_hook(callback: Py<PyAny>) -> hal::TraceHook {
    hal::TraceHook(Arc::new(move |key: &str, views: &[irvm::Ref]| {
        Python::attach(|py| {
            let element_types: Vec<u32> = views
                .iter()
                .map(|r| {
                    r.downcast::<hal::BufferView>()
                        .map_or(0, |v| v.element_type.0)
                })
                .collect();
            let arrays = views
                .iter()
                .map(|r| crate::results::to_python(py, &Value::Ref(r.clone())))
                .collect::<PyResult<Vec<_>>>()
                .and_then(|a| PyList::new(py, a));
            // Ctrl-C while the callback runs is its own to catch or not;
            // what it raises is the failed call's cause (KeyboardInterrupt
            // the call's error itself), as a host function's.
            let code = crate::sigint::PythonCode::enter();
            let done = arrays
                .and_then(|a| callback.call1(py, (key, a, element_types)))
                .map(|_| ());
            let late = code.leave(py);
            done.and(late).map_err(|e| {
                crate::host_module::raised_trap(py, &format!("debug sink callback for '{key}'"), e)
            })
        })
    }))
}

/// The `hal` module for a device, made once per process and device (a
/// module registers in any number of contexts): its contexts share one
/// device configuration, so `local-task` starts its worker pool once, as
/// iree.runtime caches its device. Loading then costs no thread starts.
fn shared_hal(
    key: &str,
    options: &hal::DeviceOptions,
) -> Result<Arc<NativeModule<hal::HalState>>, (StatusCode, String)> {
    type Cache = Mutex<Vec<(String, Arc<NativeModule<hal::HalState>>)>>;
    static CACHE: Cache = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, m)) = cache.iter().find(|(k, _)| k == key) {
        return Ok(m.clone());
    }
    let m = hal::hal_module_sharing(hal::DeviceConfig::new(options.clone()))
        .map_err(|e| (StatusCode::Internal, e.to_string()))?;
    let m = Arc::new(m);
    cache.push((key.to_string(), m.clone()));
    Ok(m)
}

fn needs(module: &Module, name: &str) -> bool {
    module.dependencies().iter().any(|d| d.name == name)
        || module
            .imports()
            .iter()
            .any(|i| i.full_name.starts_with(&format!("{name}.")))
}

/// Load IREE VM modules and return them as one object whose exported
/// functions are attributes and items.
///
/// modules: paths (str or os.PathLike) of .vmfb (or .vmasm) files, bytes
///     (bytecode, or VM assembly text) or buffer objects; several link in
///     order (later modules import from earlier ones), and functions are
///     looked up in the last one. A path to a shared library
///     ("lib.so[@entry][?key=value]") is a dynamic host module, as
///     `irvm run --module` loads it; an irvm.HostModule is a host module
///     written in Python (its functions are then fixed).
/// device: "local-task" (dispatches over a worker pool, the default) or
///     "local-sync" (on the calling thread), for modules that use the hal.
/// parameters: parameter archives (.irpa, .safetensors, .gguf) for modules
///     that import io_parameters: a path, {scope: path or [paths]}, or a
///     list of paths and "scope=path" strings; an archive's bytes (bytes,
///     bytearray, memoryview) may stand where a path goes.
/// fuel: instructions each call (and loading) may execute
///     (ResourceExhaustedError beyond).
/// timeout: seconds each call (and loading) may run (DeadlineExceededError).
/// max_memory_bytes: most memory the programs may hold at once
///     (ResourceExhaustedError beyond): what they allocate during a call
///     or the loading; the inputs of one call, added up (copied or used in
///     place), may not be more either (checked before the call). Results
///     Python keeps are not counted once returned.
/// engine: "interp", "jit" or "auto" (the default): how bytecode runs; the
///     results are the same.
///
/// Calls release the GIL, so threads calling different modules run in
/// parallel; Ctrl-C interrupts a call on the main thread (KeyboardInterrupt)
/// and leaves the module usable. Errors are irvm.VmError subclasses.
#[pyfunction]
#[expect(
    clippy::too_many_arguments,
    reason = "the Python signature: one keyword argument each"
)]
#[pyo3(signature = (*modules, device="local-task", parameters=None, fuel=None, timeout=None, max_memory_bytes=None, engine=None))]
pub fn load(
    py: Python<'_>,
    modules: &Bound<'_, PyTuple>,
    device: &str,
    parameters: Option<&Bound<'_, PyAny>>,
    fuel: Option<u64>,
    timeout: Option<f64>,
    max_memory_bytes: Option<u64>,
    engine: Option<&str>,
) -> PyResult<LoadedModule> {
    if modules.is_empty() {
        return Err(PyTypeError::new_err("load() needs at least one module"));
    }
    refuse_a_host_module_given_twice(py, modules)?;
    let settings = Settings::new(
        py,
        device,
        parameters,
        fuel,
        timeout,
        max_memory_bytes,
        engine,
    )?;
    let loaded = context(settings);
    loaded.add(py, modules)?;
    Ok(loaded)
}

/// Refuses an `irvm.HostModule` given to `load` more than once: each
/// registration makes a state of its own and only the last one's functions
/// are reached (by the programs after it and by lookups), so the earlier
/// state would be made for nothing. iree.runtime's `VmContext` registers a
/// module given twice twice; `irvm.compat`'s does too (it adds through
/// `_add`, not here).
fn refuse_a_host_module_given_twice(py: Python<'_>, modules: &Bound<'_, PyTuple>) -> PyResult<()> {
    for (k, m) in modules.iter().enumerate() {
        let Ok(host) = m.cast::<crate::host_module::PyHostModule>() else {
            continue;
        };
        if let Some(first) = modules.iter().take(k).position(|earlier| earlier.is(&m)) {
            return Err(vm_error(
                py,
                StatusCode::InvalidArgument,
                &format!(
                    "host module '{}' is given twice (modules {first} and {k}): each would \
                     get a state of its own and only the last be used; pass it once, before \
                     the programs that import it",
                    host.get().name()
                ),
            ));
        }
    }
    Ok(())
}

/// A `Module` with no module loaded yet (`irvm.compat`'s contexts add
/// theirs with `_add`); `trace(key, arrays, element_types)` is given each
/// `hal.buffer_view.trace` (its own hal module then).
#[pyfunction]
#[expect(
    clippy::too_many_arguments,
    reason = "the Python signature: one keyword argument each"
)]
#[pyo3(signature = (device="local-task", parameters=None, fuel=None, timeout=None, max_memory_bytes=None, engine=None, trace=None))]
pub fn _context(
    py: Python<'_>,
    device: &str,
    parameters: Option<&Bound<'_, PyAny>>,
    fuel: Option<u64>,
    timeout: Option<f64>,
    max_memory_bytes: Option<u64>,
    engine: Option<&str>,
    trace: Option<Py<PyAny>>,
) -> PyResult<LoadedModule> {
    let settings = Settings::new(
        py,
        device,
        parameters,
        fuel,
        timeout,
        max_memory_bytes,
        engine,
    )?;
    let settings = match trace {
        Some(t) => settings.with_trace(t),
        None => settings,
    };
    Ok(context(settings))
}

fn context(settings: Settings) -> LoadedModule {
    LoadedModule {
        inner: Arc::new(Loaded::new(settings)),
        functions: Mutex::new(HashMap::new()),
    }
}

/// A module read from `source` (the `k`th given). Bytecode of up to
/// [`irvm::loader::PRIVATE_COPY_BYTES`] comes from [`module_cache`] when
/// equal bytes were loaded before.
fn read_module(k: usize, source: Source) -> Result<Module, (StatusCode, String)> {
    let invalid = |e: String| (StatusCode::InvalidArgument, e);
    let bytes = match source {
        Source::Path(p) => {
            let failed = |e: String| invalid(format!("loading module '{p}': {e}"));
            let bytes =
                ModuleBytes::read_or_map_file(Path::new(&p)).map_err(|e| failed(e.to_string()))?;
            if matches!(bytes, ModuleBytes::Mapped(_)) {
                return Module::from_bytes(bytes).map_err(|e| failed(e.to_string()));
            }
            if Module::looks_like_assembly(bytes.as_slice()) {
                return Module::from_file(&p).map_err(|e| failed(e.to_string()));
            }
            if let Some(m) = module_cache::cached(bytes.as_slice()) {
                return Ok(m);
            }
            let m = Module::from_bytes(bytes).map_err(|e| failed(e.to_string()))?;
            module_cache::keep(&m);
            return Ok(m);
        }
        Source::Bytes(b) => b,
        Source::Lent(lent) => {
            let bytes = (*lent.0).as_ref();
            if Module::looks_like_assembly(bytes) {
                // Assembled from a copy of the text.
                return read_module(k, Source::Bytes(bytes.to_vec()));
            }
            if let Some(m) = module_cache::cached(bytes) {
                return Ok(m);
            }
            let m = Module::from_bytes(ModuleBytes::Lent(lent))
                .map_err(|e| invalid(format!("loading module {k}: {e}")))?;
            module_cache::keep(&m);
            return Ok(m);
        }
        Source::Dynamic(spec) => {
            return Err(invalid(format!(
                "'{spec}' is a host module (a shared library), not a bytecode module"
            )))
        }
        Source::Host(m) => {
            return Err(invalid(format!(
                "'{}' is a host module written in Python, not a bytecode module",
                irvm::HostModule::name(&m)
            )))
        }
    };
    if Module::looks_like_assembly(&bytes) {
        let text = String::from_utf8(bytes)
            .map_err(|_| invalid(format!("loading module {k}: VM assembly is not UTF-8")))?;
        return Module::from_assembly(&text, &format!("<module {k}>"))
            .map_err(|e| invalid(format!("loading module {k}: {e}")));
    }
    if let Some(m) = module_cache::cached(&bytes) {
        return Ok(m);
    }
    let m = Module::from_bytes(bytes).map_err(|e| invalid(format!("loading module {k}: {e}")))?;
    module_cache::keep(&m);
    Ok(m)
}

/// The name, version, exports (with their reflection attributes) and imports of a
/// module, without loading it into a context: what `irvm.compat.VmModule`
/// shows before the module is added to one.
#[pyfunction]
pub fn _inspect(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let module =
        read_module(0, source_of(source)?).map_err(|(code, text)| from_text(py, &text, code))?;
    let exports = PyList::empty(py);
    for e in module.exports() {
        let attrs = PyDict::new(py);
        if let Some(sig) = module.function_signature(e.internal_ordinal) {
            for (k, v) in sig.attrs {
                attrs.set_item(k, v)?;
            }
            attrs.set_item("__cconv__", sig.calling_convention)?;
        }
        exports.append((e.local_name, attrs))?;
    }
    // Imported functions' full names, in import-ordinal order.
    let imports: Vec<&str> = module.imports().iter().map(|i| i.full_name).collect();
    let out = PyDict::new(py);
    out.set_item("name", module.name())?;
    out.set_item("version", module.version())?;
    out.set_item("exports", exports)?;
    out.set_item("imports", imports)?;
    Ok(out.into_any().unbind())
}

/// Why [`Loaded::add`] failed: a status and a text, and the trap when a
/// module's initializer failed (its frames become the error's
/// `.backtrace` and `.location`, as for a call).
pub struct LoadFailure {
    code: StatusCode,
    text: String,
    trap: Option<irvm::Trap>,
}

impl From<(StatusCode, String)> for LoadFailure {
    fn from((code, text): (StatusCode, String)) -> LoadFailure {
        LoadFailure {
            code,
            text,
            trap: None,
        }
    }
}

impl LoadFailure {
    /// The Python exception.
    fn into_py(self, py: Python<'_>) -> PyErr {
        match &self.trap {
            Some(trap) => crate::errors::from_text_and_trap(py, &self.text, trap),
            None => from_text(py, &self.text, self.code),
        }
    }
}

fn link_error(e: irvm::errors::LinkError) -> LoadFailure {
    let text = e.to_string();
    match e {
        irvm::errors::LinkError::Init { trap, .. }
        | irvm::errors::LinkError::ModuleMemory { trap, .. } => LoadFailure {
            code: trap.code,
            text,
            trap: Some(trap),
        },
        _ => (StatusCode::InvalidArgument, text).into(),
    }
}

/// Modules loaded into one context by `irvm.load`: `m.fn(...)`,
/// `m["fn"](...)` or `m["module.fn"](...)` calls an export.
#[pyclass(name = "Module", module = "irvm", frozen, weakref)]
pub struct LoadedModule {
    inner: Arc<Loaded>,
    functions: Mutex<HashMap<String, Py<Function>>>,
}

impl LoadedModule {
    /// Registers more modules in this context, in order.
    fn add(&self, py: Python<'_>, modules: &Bound<'_, PyTuple>) -> PyResult<()> {
        let sources = modules
            .iter()
            .map(|m| source_of(&m))
            .collect::<PyResult<Vec<_>>>()?;
        let inner = &self.inner;
        let deadline = inner.deadline_from_now();
        let _turn = inner.turn_within(py, deadline)?;
        crate::host_module::forget_raised();
        // Ctrl-C during a load (a long `__init`) as during a call. The
        // states Python host modules make are recorded with the GIL held,
        // as the cycle collector reads them (`__traverse__` must see the
        // same each time it looks during one collection).
        inner
            .interruptible(py, || {
                crate::host_module::collecting_states(|| inner.add(sources, deadline))
            })
            .and_then(|(added, states)| {
                inner
                    .states
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(states);
                added.map_err(|e| e.into_py(py))
            })
            .map_err(|e| crate::host_module::with_cause(py, e))?;
        // Names may now find functions of the new modules.
        self.functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(())
    }

    /// (the last module's name, its exports)
    fn names(&self) -> (String, Vec<String>) {
        let names = self.inner.names.lock().unwrap_or_else(|e| e.into_inner());
        (names.main.clone(), names.exports.clone())
    }

    fn function(&self, py: Python<'_>, name: &str) -> PyResult<Option<Py<Function>>> {
        if let Some(f) = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(Some(f.clone_ref(py)));
        }
        // Looked up in the context's turn, as calls are made: a call
        // running on another thread holds the context until it returns
        // (the wait can be given up), and one running on this thread (a
        // trace callback looking up a function) fails at once.
        let inner = &self.inner;
        let _turn = inner.turn(py)?;
        let (found, declared, fenced) = py.detach(|| {
            let ctx = inner.ctx.lock().unwrap_or_else(|e| e.into_inner());
            let names = inner.names.lock().unwrap_or_else(|e| e.into_inner());
            let full = if name.contains('.') {
                name.to_string()
            } else {
                format!("{}.{name}", names.main)
            };
            let found = ctx.function(&full).or_else(|_| ctx.function(name)).ok();
            let declared = found
                .as_ref()
                .and_then(|f| names.declarations.get(f.name()))
                .and_then(|d| declaration::parse(d));
            let fenced = found
                .as_ref()
                .is_some_and(|f| names.fenced.contains(f.name()));
            (found, declared, fenced)
        });
        let Some(func) = found else { return Ok(None) };
        let signature = signature_text(&func, declared.as_ref(), fenced);
        let f = Py::new(
            py,
            Function {
                inner: self.inner.clone(),
                func,
                declared,
                signature,
                fenced,
            },
        )?;
        self.functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), f.clone_ref(py));
        Ok(Some(f))
    }
}

impl LoadedModule {
    /// Whether this object is the only owner of its context: no `Function`
    /// but those its cache alone holds shares it. Only then may the states
    /// the context holds be shown to the cycle collector as this object's
    /// (and cleared when it is garbage): a `Function` held elsewhere still
    /// calls into the context.
    fn owns_its_context(&self, functions: &HashMap<String, Py<Function>>) -> bool {
        Arc::strong_count(&self.inner) == 1 + functions.len()
            && functions.values().all(|f| {
                // SAFETY: called during tp_traverse or tp_clear, with the
                // GIL held; `f` is alive (the cache holds it). Reading the
                // reference count calls nothing.
                unsafe { pyo3::ffi::Py_REFCNT(f.as_ptr()) == 1 }
            })
    }
}

#[pymethods]
impl LoadedModule {
    /// Python's cycle collector: the cached functions, and, when this
    /// object alone owns its context, the states of its Python host
    /// modules (a state holding this module is a cycle). Locks are only
    /// tried: one held (a call running) shows less, which never frees
    /// what is in use, only leaves a cycle for a later collection.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Ok(functions) = self.functions.try_lock() else {
            return Ok(());
        };
        for f in functions.values() {
            visit.call(f)?;
        }
        if !self.owns_its_context(&functions) {
            return Ok(());
        }
        let Ok(states) = self.inner.states.try_lock() else {
            return Ok(());
        };
        for slot in states.iter() {
            if let Ok(state) = slot.try_lock() {
                if let Some(state) = &*state {
                    visit.call(state)?;
                }
            }
        }
        Ok(())
    }

    /// Breaks a cycle through this garbage module: forgets the cached
    /// functions and, when it alone owns its context, the states there.
    fn __clear__(&self) {
        let mut dropped: Vec<Py<PyAny>> = Vec::new();
        let functions = {
            let Ok(mut functions) = self.functions.try_lock() else {
                return;
            };
            if self.owns_its_context(&functions) {
                if let Ok(states) = self.inner.states.try_lock() {
                    for slot in states.iter() {
                        if let Ok(mut state) = slot.try_lock() {
                            dropped.extend(state.take());
                        }
                    }
                }
            }
            std::mem::take(&mut *functions)
        };
        // Dropped after the locks are let go: their finalizers run Python.
        drop(functions);
        drop(dropped);
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Function>> {
        if !name.starts_with("__") {
            if let Some(f) = self.function(py, name)? {
                return Ok(f);
            }
        }
        let (main, exports) = self.names();
        Err(PyAttributeError::new_err(format!(
            "module '{main}' has no exported function '{name}' (exports: {})",
            exports.join(", ")
        )))
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Function>> {
        self.function(py, name)?.ok_or_else(|| {
            let (main, exports) = self.names();
            PyKeyError::new_err(format!(
                "no exported function '{name}' (exports of '{main}': {})",
                exports.join(", ")
            ))
        })
    }

    /// Loads more modules into this context, linked after those there
    /// (`irvm.compat`'s `SystemContext.add_vm_module`).
    #[pyo3(signature = (*modules))]
    fn _add(&self, py: Python<'_>, modules: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.add(py, modules)
    }

    /// Registers irvm's host module `name` (`hal` or `io_parameters`) in
    /// this context now, unless it is there (`irvm.compat`'s calls of its
    /// functions from Python).
    fn _ensure_host_module(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let inner = &self.inner;
        let _turn = inner.turn(py)?;
        py.detach(|| inner.ensure_host_module(name))
            .map_err(|e| e.into_py(py))
    }

    /// Replaces the archives of this context's `io_parameters` module
    /// (`parameters` as `load`'s), until that module is registered
    /// (`irvm.compat`'s io_parameters module registered in a context that
    /// exists already).
    fn _set_parameters(&self, py: Python<'_>, parameters: &Bound<'_, PyAny>) -> PyResult<()> {
        let index = crate::parameters::parameter_index(parameters)?;
        let inner = &self.inner;
        let _turn = inner.turn(py)?;
        py.detach(|| inner.set_parameters(index))
            .map_err(|e| e.into_py(py))
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        Ok(self.function(py, name)?.is_some())
    }

    fn __dir__(&self) -> Vec<String> {
        self.names().1
    }

    /// The exported functions of the last module, in order.
    #[getter]
    fn exports(&self) -> Vec<String> {
        self.names().1
    }

    /// The name of the last module (where bare function names are looked up).
    #[getter]
    fn name(&self) -> String {
        self.names().0
    }

    fn __repr__(&self) -> String {
        let (main, exports) = self.names();
        format!("<irvm.Module '{main}' exports: {}>", exports.join(", "))
    }
}

/// `name(%input0: tensor<4x8xf32>) -> (tensor<4x3xf32>)` from the
/// declaration, else from the calling convention's value types.
/// The fences of an async-external function (`fenced`) are not shown:
/// calls pass them.
fn signature_text(
    func: &Func,
    declared: Option<&(Vec<Declared>, Vec<Declared>)>,
    fenced: bool,
) -> String {
    let kind = |t: &ValType| match t {
        ValType::I32 => "i32",
        ValType::I64 => "i64",
        ValType::F32 => "f32",
        ValType::F64 => "f64",
        ValType::Ref => "ref",
    };
    let params = visible_params(func, fenced);
    let (args, results): (Vec<String>, Vec<String>) = match declared {
        Some((a, r)) if a.len() == params.len() => (
            a.iter()
                .map(|d| format!("{}: {}", d.name, d.text))
                .collect(),
            r.iter().map(|d| d.text.clone()).collect(),
        ),
        _ => (
            params.iter().map(|t| kind(t).to_string()).collect(),
            func.results().iter().map(|t| kind(t).to_string()).collect(),
        ),
    };
    format!(
        "{}({}) -> ({})",
        func.name(),
        args.join(", "),
        results.join(", ")
    )
}

/// The parameters a caller passes: all but an async-external function's
/// two fences.
fn visible_params(func: &Func, fenced: bool) -> &[ValType] {
    let params = func.params();
    if fenced {
        &params[..params.len().saturating_sub(2)]
    } else {
        params
    }
}

/// An exported function: `f(*args, copy=None)`.
///
/// Arguments: numpy arrays (any object with the buffer protocol, and
/// arrays of ml_dtypes' bfloat16 and float8 dtypes) for
/// tensors, checked against the declared shape and dtype before the call
/// (InvalidArgumentError naming the argument); lists and Python scalars
/// made into arrays of the declared dtype; int and float for scalar
/// arguments; None for a null reference. An array that is C-contiguous,
/// of the declared dtype and 64-byte aligned is used in place (the
/// program may write a writable one; a read-only one stays immutable); any
/// other is copied once, and copy=False raises ValueError instead of
/// copying.
///
/// Results: numpy arrays over the VM's buffers (no copy; they keep the
/// buffer alive after the module is gone; bf16 and float8 ones of
/// ml_dtypes' dtypes when it is installed, else of their bits as uint16
/// and uint8), int, float, lists, None; a tuple when there are several.
/// The GIL is released during the call.
///
/// A function compiled with `--iree-execution-model=async-external` is
/// called with its inputs only: the call passes a null wait fence and a
/// fresh signal fence, and raises the fence's failure (as `irvm run`
/// does; iree.runtime 3.13 asks the caller for the fences).
#[pyclass(name = "Function", module = "irvm", frozen, weakref)]
pub struct Function {
    inner: Arc<Loaded>,
    func: Func,
    declared: Option<(Vec<Declared>, Vec<Declared>)>,
    signature: String,
    /// An async-external function: the call appends its two fences.
    fenced: bool,
}

#[pymethods]
impl Function {
    /// The function's signature: argument names and tensor types when the
    /// module declares them (`iree.abi.declaration`), else value types.
    #[getter]
    fn signature(&self) -> String {
        self.signature.clone()
    }

    /// `module.function`.
    #[getter]
    fn name(&self) -> String {
        self.func.name().to_string()
    }

    /// How many arguments the function takes (`irvm.compat` checks calls
    /// against it to raise iree.runtime's error).
    #[getter]
    fn _arity(&self) -> usize {
        visible_params(&self.func, self.fenced).len()
    }

    /// How many results the function returns (`irvm.compat` tells one
    /// null ref, returned as None, from none).
    #[getter]
    fn _result_count(&self) -> usize {
        self.func.results().len()
    }

    fn __repr__(&self) -> String {
        format!("<irvm.Function {}>", self.signature)
    }

    /// `_as_given`: arrays are passed with their own shape and element
    /// type, unchecked against the declaration (irvm.compat's calls).
    #[pyo3(signature = (*args, copy=None, _as_given=false))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        copy: Option<bool>,
        _as_given: bool,
    ) -> PyResult<Py<PyAny>> {
        let params = visible_params(&self.func, self.fenced);
        if args.len() != params.len() {
            return Err(arguments::arity_error(
                self.func.name(),
                &self.signature,
                params.len(),
                args.len(),
            ));
        }
        let declared_args = self
            .declared
            .as_ref()
            .map(|(a, _)| a)
            .filter(|a| a.len() == params.len());
        let mut values = Vec::with_capacity(params.len());
        // The inputs' bytes together, checked against max_memory_bytes
        // before the call.
        let inputs = std::cell::Cell::new(0);
        for (k, (arg, &ty)) in args.iter().zip(params).enumerate() {
            let slot = Slot {
                function: self.func.name(),
                index: k,
                result: false,
                declared: declared_args.map(|a| &a[k]),
                copy,
                max_bytes: self.inner.max_input_bytes,
                inputs: &inputs,
                as_given: _as_given,
            };
            values.push(arguments::convert(&arg, ty, &slot)?);
        }
        let func = &self.func;
        let fence = self.fenced.then(|| hal::Fence::new(false));
        if let Some(fence) = &fence {
            values.push(Value::Ref(irvm::Ref::Null));
            values.push(Value::Ref(fence.clone().into_ref()));
        }
        let results: Vec<Value> = self.inner.run(py, |ctx| {
            let results = ctx.invoke(func, &values)?;
            match fence.as_ref().map(|f| f.outcome_after_call()) {
                Some(Err((code, message))) => Err(irvm::Trap::new(code, message)),
                _ => Ok(results),
            }
        })?;
        drop(values);
        // irvm.compat's calls get a `!vm.buffer` result as a VmBuffer (the
        // same buffer), irvm's as an array over its bytes.
        let result = |v: &Value| match v {
            Value::Ref(irvm::Ref::Buffer(b)) if _as_given => {
                Ok(Py::new(py, crate::vm_buffer::VmBuffer { buffer: b.clone() })?.into_any())
            }
            _ => crate::results::to_python(py, v),
        };
        match results.as_slice() {
            [] => Ok(py.None()),
            [one] => result(one),
            many => {
                let items = many.iter().map(result).collect::<PyResult<Vec<_>>>()?;
                Ok(PyTuple::new(py, items)?.into_any().unbind())
            }
        }
    }
}
