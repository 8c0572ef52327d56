//! Dynamic host modules: shared libraries that implement the
//! [`irvm_plugin_abi`] C ABI, loaded with libloading.
//!
//! A module flag names one as `path/libfoo.so`, optionally followed by
//! `@entry_name` (another entry point than `irvm_module_create`) and
//! `?key=value&key2=value2` (creation parameters the module sees), the form
//! `iree-run-module --module=` accepts for its dynamic modules.
//!
//! A loaded [`DynamicModule`] is a [`HostModule`]: its state converts the
//! VM's values to the ABI's raw values and back at every call.

use irvm_plugin_abi as abi;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::host::{HostFunctionDecl, HostModule, HostOutcome, HostState};
use crate::program::Signature;
use crate::trap::{StatusCode, Trap};
use crate::values::Value;

/// Why a dynamic module could not be loaded or called.
#[derive(Debug, thiserror::Error)]
pub enum DynamicModuleError {
    /// The shared library failed to load.
    #[error("failed to load dynamic module library '{path}': {source}")]
    Load {
        /// The library path.
        path: PathBuf,
        /// The loader's error.
        source: libloading::Error,
    },
    /// A required symbol is missing.
    #[error("dynamic module '{path}' does not export '{symbol}'{hint}")]
    MissingSymbol {
        /// The library path.
        path: PathBuf,
        /// The missing symbol.
        symbol: String,
        /// Extra advice.
        hint: &'static str,
    },
    /// The plugin was built for another ABI version.
    #[error("dynamic module '{path}' was built for plugin ABI version {found}, this irvm supports version {expected}")]
    AbiVersion {
        /// The library path.
        path: PathBuf,
        /// The plugin's version.
        found: u32,
        /// Ours.
        expected: u32,
    },
    /// The entry point reported an error.
    #[error("dynamic module '{path}' entry point '{entry}' failed: {message} (status {code})")]
    Create {
        /// The library path.
        path: PathBuf,
        /// The entry point.
        entry: String,
        /// IREE status code.
        code: u32,
        /// The plugin's message.
        message: String,
    },
    /// The plugin returned a module that breaks the ABI contract.
    #[error("dynamic module '{path}' returned an invalid module: {what}")]
    Invalid {
        /// The library path.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The module flag is malformed.
    #[error("malformed dynamic module spec '{spec}': {what}")]
    Spec {
        /// The flag value.
        spec: String,
        /// What is wrong.
        what: String,
    },
}

/// A parsed `path@entry?key=value&...` module flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicModuleSpec {
    /// The shared library.
    pub path: PathBuf,
    /// The entry point symbol.
    pub entry: String,
    /// Creation parameters, in order.
    pub params: Vec<(String, String)>,
}

impl DynamicModuleSpec {
    /// Parses a module flag value. `key` alone (no `=`) gives an empty value.
    pub fn parse(spec: &str) -> Result<DynamicModuleSpec, DynamicModuleError> {
        let bad = |what: &str| DynamicModuleError::Spec {
            spec: spec.to_string(),
            what: what.to_string(),
        };
        let (head, query) = match spec.split_once('?') {
            Some((h, q)) => (h, Some(q)),
            None => (spec, None),
        };
        let (path, entry) = match head.rsplit_once('@') {
            Some((p, e)) => {
                if e.is_empty() {
                    return Err(bad("empty entry point name after '@'"));
                }
                if !e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(bad("entry point must be a C identifier"));
                }
                (p, e.to_string())
            }
            None => (head, abi::DEFAULT_ENTRY_POINT.to_string()),
        };
        if path.is_empty() {
            return Err(bad("empty library path"));
        }
        let mut params = Vec::new();
        if let Some(q) = query {
            for pair in q.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                if k.is_empty() {
                    return Err(bad("parameter with an empty key"));
                }
                params.push((k.to_string(), v.to_string()));
            }
        }
        Ok(DynamicModuleSpec {
            path: PathBuf::from(path),
            entry,
            params,
        })
    }

    /// Whether a module flag names a shared library rather than a module file.
    pub fn looks_dynamic(spec: &str) -> bool {
        let head = spec.split('?').next().unwrap_or(spec);
        let path = head.rsplit_once('@').map(|(p, _)| p).unwrap_or(head);
        let name = Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        name.ends_with(".so")
            || name.contains(".so.")
            || name.ends_with(".dylib")
            || name.ends_with(".dll")
    }
}

/// An exported function of a dynamic module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicExport {
    /// Local name.
    pub name: String,
    /// Calling convention string.
    pub calling_convention: String,
}

struct Loaded {
    raw: abi::RawModule,
    // Keeps the code alive; dropped after `raw.destroy` ran.
    _library: libloading::Library,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        if let Some(destroy) = self.raw.destroy {
            // SAFETY: `raw.module` came from this library's entry point, all
            // states were dropped first (each holds an Arc to us), and the
            // library is still loaded (fields drop after this runs).
            unsafe { destroy(self.raw.module) };
        }
    }
}

// SAFETY: the ABI requires plugin modules to be usable from any thread; per
// state, calls are serialized by `&mut DynamicState`.
unsafe impl Send for Loaded {}
// SAFETY: as above; shared access only reads immutable module fields.
unsafe impl Sync for Loaded {}

/// A loaded dynamic module. Cheap to clone.
#[derive(Clone)]
pub struct DynamicModule {
    inner: Arc<Loaded>,
    name: String,
    version: u32,
    exports: Vec<DynamicExport>,
    path: PathBuf,
}

impl std::fmt::Debug for DynamicModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicModule")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("exports", &self.exports)
            .finish()
    }
}

/// How a dynamic call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicOutcome {
    /// Finished; results written.
    Done,
    /// Yielded; call [`DynamicState::resume`] later.
    Deferred,
}

/// An error returned by a dynamic module's function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DynamicCallError {
    /// IREE status code.
    pub code: u32,
    /// The module's message.
    pub message: String,
}

fn host_api() -> abi::HostApi {
    static HOST: &str = concat!("irvm ", env!("CARGO_PKG_VERSION"));
    abi::HostApi {
        size: std::mem::size_of::<abi::HostApi>() as u32,
        abi_version: abi::ABI_VERSION,
        host_version: abi::StrRef::new(HOST),
    }
}

impl DynamicModule {
    /// Loads the library named by a module flag (`path@entry?k=v&...`).
    pub fn load_spec(spec: &str) -> Result<DynamicModule, DynamicModuleError> {
        Self::load(&DynamicModuleSpec::parse(spec)?)
    }

    /// Loads a library and creates its module.
    pub fn load(spec: &DynamicModuleSpec) -> Result<DynamicModule, DynamicModuleError> {
        let path = spec.path.clone();
        // SAFETY: loading a library runs its initializers; the user asked for
        // this library explicitly, as with iree-run-module's dynamic modules.
        let library = unsafe { libloading::Library::new(&spec.path) }.map_err(|source| {
            DynamicModuleError::Load {
                path: path.clone(),
                source,
            }
        })?;
        // SAFETY: the symbol's type is fixed by the ABI contract; we only call
        // it after checking it exists.
        let version_fn: libloading::Symbol<abi::AbiVersionFn> = unsafe {
            library.get(abi::ABI_VERSION_SYMBOL.as_bytes())
        }
        .map_err(|_| DynamicModuleError::MissingSymbol {
            path: path.clone(),
            symbol: abi::ABI_VERSION_SYMBOL.to_string(),
            hint:
                " (is this an irvm dynamic module? build it with irvm-plugin-abi's export_plugin!)",
        })?;
        // SAFETY: `irvm_plugin_abi_version` takes nothing and returns u32 in
        // every ABI version.
        let found = unsafe { version_fn() };
        if found != abi::ABI_VERSION {
            return Err(DynamicModuleError::AbiVersion {
                path,
                found,
                expected: abi::ABI_VERSION,
            });
        }
        // SAFETY: the ABI version matches, so the entry point has type CreateFn.
        let create: libloading::Symbol<abi::CreateFn> = unsafe {
            library.get(spec.entry.as_bytes())
        }
        .map_err(|_| DynamicModuleError::MissingSymbol {
            path: path.clone(),
            symbol: spec.entry.clone(),
            hint: "",
        })?;
        let host = host_api();
        let raw_params: Vec<abi::RawParam> = spec
            .params
            .iter()
            .map(|(k, v)| abi::RawParam {
                key: abi::StrRef::new(k),
                value: abi::StrRef::new(v),
            })
            .collect();
        let mut raw = abi::RawModule::empty();
        let mut err = abi::RawError::default();
        // SAFETY: all pointers are valid for the call; `raw_params` and the
        // strings they borrow outlive it.
        let status = unsafe {
            create(
                &host,
                raw_params.as_ptr(),
                raw_params.len(),
                &mut raw,
                &mut err,
            )
        };
        if status != abi::STATUS_OK {
            return Err(DynamicModuleError::Create {
                path,
                entry: spec.entry.clone(),
                code: err.code,
                message: err.message(),
            });
        }
        let loaded = Loaded {
            raw,
            _library: library,
        };
        let invalid = |what: &str| DynamicModuleError::Invalid {
            path: path.clone(),
            what: what.to_string(),
        };
        if (loaded.raw.size as usize) < std::mem::size_of::<abi::RawModule>()
            || loaded.raw.abi_version != abi::ABI_VERSION
        {
            return Err(invalid(
                "module struct is smaller than ABI version 1 requires",
            ));
        }
        let r = &loaded.raw;
        if r.create_state.is_none()
            || r.destroy_state.is_none()
            || r.begin_call.is_none()
            || r.resume_call.is_none()
        {
            return Err(invalid("a required function pointer is null"));
        }
        // SAFETY: the plugin keeps its name alive until destroy.
        let name = unsafe { r.name.as_str() }
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid("module name is empty or not UTF-8"))?
            .to_string();
        let mut exports = Vec::with_capacity(r.export_count as usize);
        if r.export_count > 0 && r.exports.is_null() {
            return Err(invalid("export table is null"));
        }
        for i in 0..r.export_count as usize {
            // SAFETY: the plugin promises `export_count` entries at `exports`.
            let e = unsafe { &*r.exports.add(i) };
            // SAFETY: export strings live until destroy.
            let (n, c) = unsafe { (e.name.as_str(), e.calling_convention.as_str()) };
            match (n, c) {
                (Some(n), Some(c)) if !n.is_empty() => exports.push(DynamicExport {
                    name: n.to_string(),
                    calling_convention: c.to_string(),
                }),
                _ => {
                    return Err(invalid(&format!(
                        "export {i} has an empty or non-UTF-8 name or calling convention"
                    )))
                }
            }
        }
        let version = r.version;
        Ok(DynamicModule {
            inner: Arc::new(loaded),
            name,
            version,
            exports,
            path,
        })
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The exported functions, by ordinal.
    pub fn exports(&self) -> &[DynamicExport] {
        &self.exports
    }

    /// The library it came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the per-context state.
    pub fn create_state(&self) -> Result<DynamicState, DynamicCallError> {
        let mut state: *mut c_void = std::ptr::null_mut();
        let mut err = abi::RawError::default();
        let f = self
            .inner
            .raw
            .create_state
            .ok_or_else(|| DynamicCallError {
                code: abi::status::INTERNAL,
                message: "create_state is null".into(),
            })?;
        // SAFETY: module pointer from the entry point; out-pointers valid.
        let status = unsafe { f(self.inner.raw.module, &mut state, &mut err) };
        if status != abi::STATUS_OK {
            return Err(DynamicCallError {
                code: err.code,
                message: err.message(),
            });
        }
        Ok(DynamicState {
            module: self.inner.clone(),
            state,
        })
    }
}

/// Per-context state of a dynamic module; dropped with its context.
pub struct DynamicState {
    module: Arc<Loaded>,
    state: *mut c_void,
}

// SAFETY: plugin states may move between threads (ABI contract); `&mut self`
// on calls serializes access.
unsafe impl Send for DynamicState {}

impl Drop for DynamicState {
    fn drop(&mut self) {
        if let Some(f) = self.module.raw.destroy_state {
            // SAFETY: the state came from create_state of this module and is
            // destroyed exactly once.
            unsafe { f(self.module.raw.module, self.state) };
        }
    }
}

fn check_status(status: u32, err: &abi::RawError) -> Result<DynamicOutcome, DynamicCallError> {
    match status {
        abi::STATUS_OK => Ok(DynamicOutcome::Done),
        abi::STATUS_DEFERRED => Ok(DynamicOutcome::Deferred),
        _ => Err(DynamicCallError {
            code: if err.code == 0 {
                abi::status::INTERNAL
            } else {
                err.code
            },
            message: err.message(),
        }),
    }
}

impl DynamicState {
    /// Begins a call of export `export` with flattened `args`; `results` must
    /// be preset to the expected kinds and is filled on [`DynamicOutcome::Done`].
    pub fn call(
        &mut self,
        export: u32,
        args: &[abi::RawValue],
        results: &mut [abi::RawValue],
    ) -> Result<DynamicOutcome, DynamicCallError> {
        let f = self.module.raw.begin_call.ok_or_else(|| DynamicCallError {
            code: abi::status::INTERNAL,
            message: "begin_call is null".into(),
        })?;
        let mut err = abi::RawError::default();
        // SAFETY: pointers and lengths describe live slices; state is ours.
        let status = unsafe {
            f(
                self.module.raw.module,
                self.state,
                export,
                args.as_ptr(),
                args.len(),
                results.as_mut_ptr(),
                results.len(),
                &mut err,
            )
        };
        check_status(status, &err)
    }

    /// Resumes a deferred call.
    pub fn resume(
        &mut self,
        export: u32,
        results: &mut [abi::RawValue],
    ) -> Result<DynamicOutcome, DynamicCallError> {
        let f = self
            .module
            .raw
            .resume_call
            .ok_or_else(|| DynamicCallError {
                code: abi::status::INTERNAL,
                message: "resume_call is null".into(),
            })?;
        let mut err = abi::RawError::default();
        // SAFETY: as in `call`.
        let status = unsafe {
            f(
                self.module.raw.module,
                self.state,
                export,
                results.as_mut_ptr(),
                results.len(),
                &mut err,
            )
        };
        check_status(status, &err)
    }
}

// ---------------------------------------------------------------------------
// Dynamic modules as host modules.

impl HostModule for DynamicModule {
    fn name(&self) -> &str {
        DynamicModule::name(self)
    }
    fn version(&self) -> u32 {
        DynamicModule::version(self)
    }
    fn functions(&self) -> Vec<HostFunctionDecl> {
        self.exports()
            .iter()
            .map(|e| HostFunctionDecl {
                name: e.name.clone(),
                calling_convention: e.calling_convention.clone(),
            })
            .collect()
    }
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        let state = self
            .create_state()
            .map_err(|e| Trap::new(StatusCode::from_u32(e.code), e.message))?;
        let results = self
            .exports()
            .iter()
            .map(|e| {
                Signature::parse(&e.calling_convention)
                    .map(|s| s.results)
                    .unwrap_or_default()
            })
            .collect();
        Ok(Box::new(DynamicHostState { state, results }))
    }
}

struct DynamicHostState {
    state: DynamicState,
    results: Vec<Vec<u8>>,
}

fn to_raw(v: &Value) -> Result<abi::RawValue, Trap> {
    Ok(match v {
        Value::I32(x) => abi::RawValue {
            kind: abi::KIND_I32,
            bits: *x as u32 as u64,
        },
        Value::I64(x) => abi::RawValue {
            kind: abi::KIND_I64,
            bits: *x as u64,
        },
        Value::F32(x) => abi::RawValue {
            kind: abi::KIND_F32,
            bits: x.to_bits() as u64,
        },
        Value::F64(x) => abi::RawValue {
            kind: abi::KIND_F64,
            bits: x.to_bits(),
        },
        _ => {
            return Err(Trap::new(
                StatusCode::Unimplemented,
                "dynamic modules cannot take references",
            ))
        }
    })
}

impl DynamicHostState {
    fn result_slots(&self, index: usize) -> Vec<abi::RawValue> {
        self.results
            .get(index)
            .map(|kinds| {
                kinds
                    .iter()
                    .map(|k| abi::RawValue {
                        kind: match k {
                            b'I' => abi::KIND_I64,
                            b'f' => abi::KIND_F32,
                            b'F' => abi::KIND_F64,
                            _ => abi::KIND_I32,
                        },
                        bits: 0,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn finish(outcome: DynamicOutcome, raw: &[abi::RawValue]) -> HostOutcome {
        match outcome {
            DynamicOutcome::Deferred => HostOutcome::Deferred,
            DynamicOutcome::Done => HostOutcome::Done(
                raw.iter()
                    .map(|r| match r.kind {
                        abi::KIND_I64 => Value::I64(r.bits as i64),
                        abi::KIND_F32 => Value::F32(f32::from_bits(r.bits as u32)),
                        abi::KIND_F64 => Value::F64(f64::from_bits(r.bits)),
                        _ => Value::I32(r.bits as u32 as i32),
                    })
                    .collect(),
            ),
        }
    }
}

impl HostState for DynamicHostState {
    fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap> {
        let raw_args = args.iter().map(to_raw).collect::<Result<Vec<_>, _>>()?;
        let mut results = self.result_slots(index);
        let outcome = self
            .state
            .call(index as u32, &raw_args, &mut results)
            .map_err(|e| Trap::new(StatusCode::from_u32(e.code), e.message))?;
        Ok(Self::finish(outcome, &results))
    }

    fn resume(&mut self, index: usize) -> Result<HostOutcome, Trap> {
        let mut results = self.result_slots(index);
        let outcome = self
            .state
            .resume(index as u32, &mut results)
            .map_err(|e| Trap::new(StatusCode::from_u32(e.code), e.message))?;
        Ok(Self::finish(outcome, &results))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "dlopen is not supported by Miri")]
    fn parses_specs() {
        let s = DynamicModuleSpec::parse("target/libfoo.so@make_foo?a=1&b=two&flag").unwrap();
        assert_eq!(s.path, PathBuf::from("target/libfoo.so"));
        assert_eq!(s.entry, "make_foo");
        assert_eq!(
            s.params,
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "two".into()),
                ("flag".into(), "".into())
            ]
        );
        let d = DynamicModuleSpec::parse("libx.so").unwrap();
        assert_eq!(d.entry, abi::DEFAULT_ENTRY_POINT);
        assert!(d.params.is_empty());
        assert!(DynamicModuleSpec::parse("libx.so@").is_err());
        assert!(DynamicModuleSpec::parse("libx.so@bad-name").is_err());
        assert!(DynamicModuleSpec::parse("?a=b").is_err());
        assert!(DynamicModuleSpec::parse("libx.so?=b").is_err());
        assert!(DynamicModuleSpec::looks_dynamic("a/libfoo.so@e?x=1"));
        assert!(!DynamicModuleSpec::looks_dynamic("a/foo.vmfb"));
    }

    #[test]
    #[cfg_attr(miri, ignore = "dlopen is not supported by Miri")]
    fn missing_library_is_a_clear_error() {
        let e = DynamicModule::load_spec("/nonexistent/libnope.so").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/libnope.so"), "{e}");
    }
}
