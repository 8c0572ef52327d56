//! The C ABI between irvm and *dynamic host modules*: shared libraries that
//! `irvm run --module=libfoo.so` (or the embedding API) loads at run time, and
//! a safe Rust side for writing them.
//!
//! # The contract (ABI version 1)
//! A plugin library exports two C symbols:
//!
//! * `uint32_t irvm_plugin_abi_version(void)` — the [`ABI_VERSION`] it was
//!   built against. The host checks it *before* calling anything else, so a
//!   library built for another ABI fails with a clear error instead of
//!   undefined behaviour.
//! * an entry point, by default `irvm_module_create` ([`DEFAULT_ENTRY_POINT`];
//!   `libfoo.so@other_name` picks another), of type [`CreateFn`]:
//!   `uint32_t create(const HostApi* host, const RawParam* params,
//!   size_t param_count, RawModule* out_module, RawError* out_error)`.
//!   It returns [`STATUS_OK`] and fills `out_module`, or [`STATUS_ERROR`] and
//!   fills `out_error`. `params` are the `?key=value&key2=value2` pairs of the
//!   module flag, which the module sees at creation.
//!
//! [`HostApi`] and [`RawModule`] begin with `size` and `abi_version` fields:
//! new fields are only ever appended, so a host can serve older plugins (it
//! reads only the fields `size` covers) and a plugin can tell which host
//! functions exist.
//!
//! Values cross the boundary as [`RawValue`] (a kind tag and 64 bits).
//! Calling-convention strings (`0ii_i`, variadic `0CiDi_i`) describe the
//! argument list; a variadic span is passed as its element count (an i32)
//! followed by the elements, flattened. A call may return [`STATUS_DEFERRED`]:
//! the host then yields to its caller and later calls `resume_call` for the
//! same state until it returns [`STATUS_OK`] with the results.
//!
//! Rust plugins implement [`HostModulePlugin`] and use [`export_plugin!`],
//! which generates both symbols and catches panics at the boundary.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The ABI version this crate describes.
pub const ABI_VERSION: u32 = 1;
/// The entry point looked up when the module flag names none.
pub const DEFAULT_ENTRY_POINT: &str = "irvm_module_create";
/// The symbol that reports a plugin's ABI version.
pub const ABI_VERSION_SYMBOL: &str = "irvm_plugin_abi_version";

/// The call or creation succeeded.
pub const STATUS_OK: u32 = 0;
/// The call yielded; resume it later with `resume_call`.
pub const STATUS_DEFERRED: u32 = 1;
/// The call failed; the [`RawError`] holds the status code and message.
pub const STATUS_ERROR: u32 = 2;

/// [`RawValue::kind`] of an i32.
pub const KIND_I32: u32 = 0;
/// [`RawValue::kind`] of an i64.
pub const KIND_I64: u32 = 1;
/// [`RawValue::kind`] of an f32 (bits in the low 32 bits).
pub const KIND_F32: u32 = 2;
/// [`RawValue::kind`] of an f64.
pub const KIND_F64: u32 = 3;

/// A borrowed UTF-8 string: pointer and length (not NUL-terminated).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StrRef {
    /// First byte.
    pub ptr: *const u8,
    /// Length in bytes.
    pub len: usize,
}

impl StrRef {
    /// Borrows `s` (the caller keeps `s` alive while the `StrRef` is used).
    pub fn new(s: &str) -> StrRef {
        StrRef {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// Reads the string back; `None` if null or not UTF-8.
    ///
    /// # Safety
    /// `ptr..ptr+len` must be readable for `'a`.
    pub unsafe fn as_str<'a>(&self) -> Option<&'a str> {
        if self.ptr.is_null() {
            return if self.len == 0 { Some("") } else { None };
        }
        // SAFETY: the caller guarantees the range is readable for 'a.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        std::str::from_utf8(bytes).ok()
    }
}

/// One value crossing the ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawValue {
    /// One of the `KIND_*` constants.
    pub kind: u32,
    /// The value's bits (i32/f32 in the low half).
    pub bits: u64,
}

/// A `key=value` creation parameter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawParam {
    /// The key.
    pub key: StrRef,
    /// The value (empty when the flag had `key` alone).
    pub value: StrRef,
}

/// Capacity of [`RawError::message`].
pub const ERROR_MESSAGE_CAPACITY: usize = 512;

/// An error reported by a plugin: an IREE status code and a message.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawError {
    /// IREE status code (e.g. 9 = FAILED_PRECONDITION, 13 = INTERNAL).
    pub code: u32,
    /// Bytes of `message` in use.
    pub len: u32,
    /// UTF-8 message, truncated to the capacity.
    pub message: [u8; ERROR_MESSAGE_CAPACITY],
}

impl Default for RawError {
    fn default() -> Self {
        RawError {
            code: 0,
            len: 0,
            message: [0; ERROR_MESSAGE_CAPACITY],
        }
    }
}

impl RawError {
    /// Sets code and message (truncated on a character boundary).
    pub fn set(&mut self, code: u32, message: &str) {
        let mut n = message.len().min(ERROR_MESSAGE_CAPACITY);
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        self.code = code;
        self.len = n as u32;
        self.message[..n].copy_from_slice(&message.as_bytes()[..n]);
    }

    /// The message text.
    pub fn message(&self) -> String {
        let n = (self.len as usize).min(ERROR_MESSAGE_CAPACITY);
        String::from_utf8_lossy(&self.message[..n]).into_owned()
    }
}

/// What the host offers a plugin. Fields are only ever appended.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HostApi {
    /// `size_of::<HostApi>()` as the host knows it.
    pub size: u32,
    /// The host's [`ABI_VERSION`].
    pub abi_version: u32,
    /// The host's name and version, e.g. `irvm 0.1.0`.
    pub host_version: StrRef,
}

/// One exported function of a plugin module.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawExport {
    /// Local name (without the module prefix).
    pub name: StrRef,
    /// Calling convention, e.g. `0ii_i`.
    pub calling_convention: StrRef,
}

/// Creates per-context state: returns a status, fills `out_state` or the error.
pub type CreateStateFn = unsafe extern "C" fn(
    module: *mut c_void,
    out_state: *mut *mut c_void,
    err: *mut RawError,
) -> u32;
/// Destroys per-context state made by [`CreateStateFn`].
pub type DestroyStateFn = unsafe extern "C" fn(module: *mut c_void, state: *mut c_void);
/// Begins a call of export `export` with `args`; on [`STATUS_OK`] writes `results`.
pub type BeginCallFn = unsafe extern "C" fn(
    module: *mut c_void,
    state: *mut c_void,
    export: u32,
    args: *const RawValue,
    arg_count: usize,
    results: *mut RawValue,
    result_count: usize,
    err: *mut RawError,
) -> u32;
/// Resumes a call that returned [`STATUS_DEFERRED`].
pub type ResumeCallFn = unsafe extern "C" fn(
    module: *mut c_void,
    state: *mut c_void,
    export: u32,
    results: *mut RawValue,
    result_count: usize,
    err: *mut RawError,
) -> u32;
/// Destroys the module (after all its states).
pub type DestroyFn = unsafe extern "C" fn(module: *mut c_void);

/// A module made by a plugin's entry point. Fields are only ever appended.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawModule {
    /// `size_of::<RawModule>()` as the plugin knows it.
    pub size: u32,
    /// The plugin's [`ABI_VERSION`].
    pub abi_version: u32,
    /// Opaque module pointer passed back to every function.
    pub module: *mut c_void,
    /// Module name (imports resolve against `name.export`).
    pub name: StrRef,
    /// Module version (checked against dependencies' minimum versions).
    pub version: u32,
    /// Number of entries in `exports`.
    pub export_count: u32,
    /// The exported functions; valid until `destroy`.
    pub exports: *const RawExport,
    /// See [`CreateStateFn`].
    pub create_state: Option<CreateStateFn>,
    /// See [`DestroyStateFn`].
    pub destroy_state: Option<DestroyStateFn>,
    /// See [`BeginCallFn`].
    pub begin_call: Option<BeginCallFn>,
    /// See [`ResumeCallFn`].
    pub resume_call: Option<ResumeCallFn>,
    /// See [`DestroyFn`].
    pub destroy: Option<DestroyFn>,
}

impl RawModule {
    /// An all-null module, for the host to pass as the out-parameter.
    pub fn empty() -> RawModule {
        RawModule {
            size: 0,
            abi_version: 0,
            module: std::ptr::null_mut(),
            name: StrRef {
                ptr: std::ptr::null(),
                len: 0,
            },
            version: 0,
            export_count: 0,
            exports: std::ptr::null(),
            create_state: None,
            destroy_state: None,
            begin_call: None,
            resume_call: None,
            destroy: None,
        }
    }
}

/// The entry point's type (see the crate docs).
pub type CreateFn = unsafe extern "C" fn(
    host: *const HostApi,
    params: *const RawParam,
    param_count: usize,
    out_module: *mut RawModule,
    err: *mut RawError,
) -> u32;
/// The type of the [`ABI_VERSION_SYMBOL`] function.
pub type AbiVersionFn = unsafe extern "C" fn() -> u32;

// ---------------------------------------------------------------------------
// The safe side, for plugins written in Rust.
// ---------------------------------------------------------------------------

/// A scalar value as a Rust plugin sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// 32-bit integer.
    I32(i32),
    /// 64-bit integer.
    I64(i64),
    /// 32-bit float.
    F32(f32),
    /// 64-bit float.
    F64(f64),
}

impl Value {
    /// Converts from the ABI form; `None` for an unknown kind.
    pub fn from_raw(v: RawValue) -> Option<Value> {
        Some(match v.kind {
            KIND_I32 => Value::I32(v.bits as u32 as i32),
            KIND_I64 => Value::I64(v.bits as i64),
            KIND_F32 => Value::F32(f32::from_bits(v.bits as u32)),
            KIND_F64 => Value::F64(f64::from_bits(v.bits)),
            _ => return None,
        })
    }

    /// Converts to the ABI form.
    pub fn to_raw(self) -> RawValue {
        match self {
            Value::I32(x) => RawValue {
                kind: KIND_I32,
                bits: x as u32 as u64,
            },
            Value::I64(x) => RawValue {
                kind: KIND_I64,
                bits: x as u64,
            },
            Value::F32(x) => RawValue {
                kind: KIND_F32,
                bits: x.to_bits() as u64,
            },
            Value::F64(x) => RawValue {
                kind: KIND_F64,
                bits: x.to_bits(),
            },
        }
    }

    /// The i32 inside, if this is one.
    pub fn as_i32(self) -> Option<i32> {
        match self {
            Value::I32(x) => Some(x),
            _ => None,
        }
    }
}

/// IREE status codes a plugin may report.
pub mod status {
    /// INVALID_ARGUMENT
    pub const INVALID_ARGUMENT: u32 = 3;
    /// NOT_FOUND
    pub const NOT_FOUND: u32 = 5;
    /// FAILED_PRECONDITION
    pub const FAILED_PRECONDITION: u32 = 9;
    /// OUT_OF_RANGE
    pub const OUT_OF_RANGE: u32 = 11;
    /// UNIMPLEMENTED
    pub const UNIMPLEMENTED: u32 = 12;
    /// INTERNAL
    pub const INTERNAL: u32 = 13;
}

/// An error from a Rust plugin: status code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginError {
    /// IREE status code (see [`status`]).
    pub code: u32,
    /// What went wrong.
    pub message: String,
}

impl PluginError {
    /// An error with `code` and `message`.
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        PluginError {
            code,
            message: message.into(),
        }
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Finished; the results were written.
    Done,
    /// Yielded; the host will call `resume` later.
    Deferred,
}

/// An exported function of a Rust plugin.
#[derive(Clone, Debug)]
pub struct Export {
    /// Local name.
    pub name: String,
    /// Calling convention, e.g. `0ii_i`.
    pub calling_convention: String,
}

/// A host module implemented in Rust and exposed through the C ABI by
/// [`export_plugin!`].
pub trait HostModulePlugin: Send + Sync + 'static {
    /// Per-context state, created with each context and dropped with it.
    type State: Send + 'static;
    /// The module name.
    fn name(&self) -> &str;
    /// The module version.
    fn version(&self) -> u32 {
        0
    }
    /// The exported functions, in ordinal order.
    fn exports(&self) -> Vec<Export>;
    /// Makes the state of a new context.
    fn create_state(&self) -> Result<Self::State, PluginError>;
    /// Begins a call of export `export`.
    fn call(
        &self,
        state: &mut Self::State,
        export: usize,
        args: &[Value],
        results: &mut [Value],
    ) -> Result<Outcome, PluginError>;
    /// Resumes a call that returned [`Outcome::Deferred`].
    fn resume(
        &self,
        state: &mut Self::State,
        export: usize,
        results: &mut [Value],
    ) -> Result<Outcome, PluginError> {
        let _ = (state, export, results);
        Err(PluginError::new(
            status::UNIMPLEMENTED,
            "this module never defers, so it cannot resume",
        ))
    }
}

/// Reads creation parameters into owned pairs.
///
/// # Safety
/// `params` must point to `count` valid [`RawParam`]s (or be null with 0).
pub unsafe fn read_params(
    params: *const RawParam,
    count: usize,
) -> Result<Vec<(String, String)>, PluginError> {
    if count == 0 || params.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: the caller guarantees `count` readable entries.
    let raw = unsafe { std::slice::from_raw_parts(params, count) };
    raw.iter()
        .map(|p| {
            // SAFETY: the host keeps the strings alive during creation.
            let key = unsafe { p.key.as_str() };
            // SAFETY: as above.
            let value = unsafe { p.value.as_str() };
            match (key, value) {
                (Some(k), Some(v)) => Ok((k.to_string(), v.to_string())),
                _ => Err(PluginError::new(
                    status::INVALID_ARGUMENT,
                    "parameter is not UTF-8",
                )),
            }
        })
        .collect()
}

/// A plugin constructor: receives the creation parameters.
pub type MakeFn<P> = fn(&[(String, String)]) -> Result<P, PluginError>;

/// Glue used by [`export_plugin!`]; not for direct use.
#[doc(hidden)]
pub mod glue {
    use super::*;

    struct Glue<P: HostModulePlugin> {
        plugin: P,
        // Owned strings the RawExport pointers borrow from.
        _names: Vec<Export>,
        raw_exports: Vec<RawExport>,
        name: String,
    }

    fn report(err: *mut RawError, e: &PluginError) -> u32 {
        if !err.is_null() {
            // SAFETY: the host passes a valid, writable RawError.
            unsafe { (*err).set(e.code, &e.message) };
        }
        STATUS_ERROR
    }

    fn guarded(err: *mut RawError, f: impl FnOnce() -> Result<u32, PluginError>) -> u32 {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => report(err, &e),
            Err(_) => report(
                err,
                &PluginError::new(status::INTERNAL, "host module panicked"),
            ),
        }
    }

    /// Implements the entry point for plugin type `P`.
    ///
    /// # Safety
    /// Pointers as described by [`CreateFn`].
    pub unsafe fn create<P: HostModulePlugin>(
        host: *const HostApi,
        params: *const RawParam,
        param_count: usize,
        out: *mut RawModule,
        err: *mut RawError,
        make: MakeFn<P>,
    ) -> u32 {
        guarded(err, || {
            if host.is_null() || out.is_null() {
                return Err(PluginError::new(
                    status::INVALID_ARGUMENT,
                    "null host api or output",
                ));
            }
            // SAFETY: checked non-null; the host passes a valid HostApi.
            let host_abi = unsafe { (*host).abi_version };
            if host_abi < ABI_VERSION {
                return Err(PluginError::new(
                    status::FAILED_PRECONDITION,
                    format!("host ABI version {host_abi} is older than the plugin's {ABI_VERSION}"),
                ));
            }
            // SAFETY: the host passes `param_count` valid parameters.
            let params = unsafe { read_params(params, param_count) }?;
            let plugin = make(&params)?;
            let names = plugin.exports();
            let raw_exports = names
                .iter()
                .map(|e| RawExport {
                    name: StrRef::new(&e.name),
                    calling_convention: StrRef::new(&e.calling_convention),
                })
                .collect::<Vec<_>>();
            let name = plugin.name().to_string();
            let glue = Box::new(Glue {
                plugin,
                _names: names,
                raw_exports,
                name,
            });
            let raw = RawModule {
                size: std::mem::size_of::<RawModule>() as u32,
                abi_version: ABI_VERSION,
                module: std::ptr::null_mut(),
                name: StrRef::new(&glue.name),
                version: glue.plugin.version(),
                export_count: glue.raw_exports.len() as u32,
                exports: glue.raw_exports.as_ptr(),
                create_state: Some(create_state::<P>),
                destroy_state: Some(destroy_state::<P>),
                begin_call: Some(begin_call::<P>),
                resume_call: Some(resume_call::<P>),
                destroy: Some(destroy::<P>),
            };
            // The heap addresses of the strings and exports do not move when
            // the box pointer is handed out.
            let module = Box::into_raw(glue) as *mut c_void;
            // SAFETY: `out` was checked non-null and is writable per the ABI.
            unsafe { *out = RawModule { module, ..raw } };
            Ok(STATUS_OK)
        })
    }

    fn glue_ref<'a, P: HostModulePlugin>(module: *mut c_void) -> Result<&'a Glue<P>, PluginError> {
        if module.is_null() {
            return Err(PluginError::new(status::INVALID_ARGUMENT, "null module"));
        }
        // SAFETY: `module` is the pointer `create` produced from a Box<Glue<P>>
        // and stays valid until `destroy`.
        Ok(unsafe { &*(module as *const Glue<P>) })
    }

    unsafe extern "C" fn create_state<P: HostModulePlugin>(
        module: *mut c_void,
        out_state: *mut *mut c_void,
        err: *mut RawError,
    ) -> u32 {
        guarded(err, || {
            let glue = glue_ref::<P>(module)?;
            let state = glue.plugin.create_state()?;
            if out_state.is_null() {
                return Err(PluginError::new(
                    status::INVALID_ARGUMENT,
                    "null state output",
                ));
            }
            // SAFETY: checked non-null; the host passes a writable slot.
            unsafe { *out_state = Box::into_raw(Box::new(state)) as *mut c_void };
            Ok(STATUS_OK)
        })
    }

    unsafe extern "C" fn destroy_state<P: HostModulePlugin>(
        _module: *mut c_void,
        state: *mut c_void,
    ) {
        if !state.is_null() {
            let _ = catch_unwind(|| {
                // SAFETY: `state` came from Box::into_raw in create_state and
                // the host destroys each state exactly once.
                drop(unsafe { Box::from_raw(state as *mut P::State) });
            });
        }
    }

    fn to_values(args: *const RawValue, count: usize) -> Result<Vec<Value>, PluginError> {
        if count == 0 {
            return Ok(Vec::new());
        }
        if args.is_null() {
            return Err(PluginError::new(status::INVALID_ARGUMENT, "null arguments"));
        }
        // SAFETY: the host passes `count` readable values.
        let raw = unsafe { std::slice::from_raw_parts(args, count) };
        raw.iter()
            .map(|v| {
                Value::from_raw(*v).ok_or_else(|| {
                    PluginError::new(
                        status::INVALID_ARGUMENT,
                        format!("unknown value kind {}", v.kind),
                    )
                })
            })
            .collect()
    }

    fn write_results(
        out: *mut RawValue,
        count: usize,
        values: &[Value],
    ) -> Result<(), PluginError> {
        if count == 0 {
            return Ok(());
        }
        if out.is_null() {
            return Err(PluginError::new(status::INVALID_ARGUMENT, "null results"));
        }
        // SAFETY: the host passes `count` writable values.
        let raw = unsafe { std::slice::from_raw_parts_mut(out, count) };
        for (r, v) in raw.iter_mut().zip(values) {
            *r = v.to_raw();
        }
        Ok(())
    }

    fn result_template(out: *mut RawValue, count: usize) -> Result<Vec<Value>, PluginError> {
        if count == 0 {
            return Ok(Vec::new());
        }
        if out.is_null() {
            return Err(PluginError::new(status::INVALID_ARGUMENT, "null results"));
        }
        // SAFETY: the host passes `count` values whose kinds are preset.
        let raw = unsafe { std::slice::from_raw_parts(out, count) };
        Ok(raw
            .iter()
            .map(|v| Value::from_raw(*v).unwrap_or(Value::I32(0)))
            .collect())
    }

    fn state_mut<'a, P: HostModulePlugin>(
        state: *mut c_void,
    ) -> Result<&'a mut P::State, PluginError> {
        if state.is_null() {
            return Err(PluginError::new(status::INVALID_ARGUMENT, "null state"));
        }
        // SAFETY: `state` came from create_state for this plugin type and the
        // host never calls into one state from two threads at once.
        Ok(unsafe { &mut *(state as *mut P::State) })
    }

    fn finish(
        outcome: Outcome,
        out: *mut RawValue,
        count: usize,
        values: &[Value],
    ) -> Result<u32, PluginError> {
        match outcome {
            Outcome::Done => {
                write_results(out, count, values)?;
                Ok(STATUS_OK)
            }
            Outcome::Deferred => Ok(STATUS_DEFERRED),
        }
    }

    unsafe extern "C" fn begin_call<P: HostModulePlugin>(
        module: *mut c_void,
        state: *mut c_void,
        export: u32,
        args: *const RawValue,
        arg_count: usize,
        results: *mut RawValue,
        result_count: usize,
        err: *mut RawError,
    ) -> u32 {
        guarded(err, || {
            let glue = glue_ref::<P>(module)?;
            let state = state_mut::<P>(state)?;
            let args = to_values(args, arg_count)?;
            let mut out = result_template(results, result_count)?;
            let outcome = glue.plugin.call(state, export as usize, &args, &mut out)?;
            finish(outcome, results, result_count, &out)
        })
    }

    unsafe extern "C" fn resume_call<P: HostModulePlugin>(
        module: *mut c_void,
        state: *mut c_void,
        export: u32,
        results: *mut RawValue,
        result_count: usize,
        err: *mut RawError,
    ) -> u32 {
        guarded(err, || {
            let glue = glue_ref::<P>(module)?;
            let state = state_mut::<P>(state)?;
            let mut out = result_template(results, result_count)?;
            let outcome = glue.plugin.resume(state, export as usize, &mut out)?;
            finish(outcome, results, result_count, &out)
        })
    }

    unsafe extern "C" fn destroy<P: HostModulePlugin>(module: *mut c_void) {
        if !module.is_null() {
            let _ = catch_unwind(|| {
                // SAFETY: `module` came from Box::into_raw in `create` and the
                // host destroys it exactly once, after all its states.
                drop(unsafe { Box::from_raw(module as *mut Glue<P>) });
            });
        }
    }
}

/// Exports a Rust [`HostModulePlugin`] through the C ABI.
///
/// `export_plugin!(make)` defines `irvm_plugin_abi_version` and the default
/// entry point `irvm_module_create`; `export_plugin!(make, entry_name)` uses
/// another entry name. `make` is a
/// `fn(&[(String, String)]) -> Result<P, PluginError>` receiving the
/// creation parameters.
#[macro_export]
macro_rules! export_plugin {
    ($make:path) => {
        $crate::export_plugin!($make, irvm_module_create);
    };
    ($make:path, $entry:ident) => {
        /// Reports the plugin ABI version this library was built against.
        #[no_mangle]
        pub extern "C" fn irvm_plugin_abi_version() -> u32 {
            $crate::ABI_VERSION
        }

        /// Creates the host module (irvm plugin entry point).
        ///
        /// # Safety
        /// Called by the irvm host with pointers valid per the ABI.
        #[no_mangle]
        pub unsafe extern "C" fn $entry(
            host: *const $crate::HostApi,
            params: *const $crate::RawParam,
            param_count: usize,
            out_module: *mut $crate::RawModule,
            err: *mut $crate::RawError,
        ) -> u32 {
            // SAFETY: forwarded from the host, which upholds the ABI contract.
            unsafe { $crate::glue::create(host, params, param_count, out_module, err, $make) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        for v in [
            Value::I32(-3),
            Value::I64(i64::MIN),
            Value::F32(1.5),
            Value::F64(-0.25),
        ] {
            assert_eq!(Value::from_raw(v.to_raw()), Some(v));
        }
        assert_eq!(Value::from_raw(RawValue { kind: 9, bits: 0 }), None);
    }

    #[test]
    fn error_message_truncates_on_char_boundary() {
        let mut e = RawError::default();
        let long = "é".repeat(400);
        e.set(13, &long);
        assert!(e.message().chars().all(|c| c == 'é'));
        assert!(e.len as usize <= ERROR_MESSAGE_CAPACITY);
    }
}
