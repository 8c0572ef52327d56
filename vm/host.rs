//! Host modules: functions written in Rust (or loaded from shared libraries)
//! that bytecode modules import by name.
//!
//! A [`HostModule`] describes the module (name, version, functions with
//! their calling conventions, the ref types it defines) and creates one
//! [`HostState`] per context. [`crate::NativeModule`] (`vm/native.rs`)
//! builds one from plain Rust closures.

use crate::dynamic::{DynamicModule, DynamicOutcome, DynamicState};
use crate::program::Signature;
use crate::trap::{StatusCode, Trap};
use crate::value::Value;

/// How a host call ended.
#[derive(Clone, Debug)]
pub enum HostOutcome {
    /// Finished with these results.
    Done(Vec<Value>),
    /// The call yielded; the VM will call [`HostState::resume`] later.
    Deferred,
}

/// A host module's function table entry.
#[derive(Clone, Debug)]
pub struct HostFunctionDecl {
    /// Local name (without the module prefix).
    pub name: String,
    /// Calling convention (`0ii_i`, `0CiDi_i`).
    pub calling_convention: String,
}

/// Per-context state of a host module: it executes the calls.
///
/// Arguments arrive flattened; a variadic span arrives as its element count
/// (an `i32`) followed by its elements. The state moves with its context
/// to whichever thread uses the context, hence `Send`.
pub trait HostState: Send {
    /// Calls function `index` of the module's table.
    fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap>;
    /// Resumes a call of function `index` that returned
    /// [`HostOutcome::Deferred`].
    fn resume(&mut self, index: usize) -> Result<HostOutcome, Trap> {
        let _ = index;
        Err(Trap::new(
            StatusCode::FailedPrecondition,
            "host function does not support resumption",
        ))
    }
}

/// A module implemented by the host. One module may be registered in
/// contexts on several threads, hence `Send + Sync`.
pub trait HostModule: Send + Sync {
    /// The module name imports refer to (`yieldable_test`).
    fn name(&self) -> &str;
    /// The module version (checked against dependencies' minimum versions).
    fn version(&self) -> u32;
    /// The exported functions.
    fn functions(&self) -> Vec<HostFunctionDecl>;
    /// Creates the module's state for one context.
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap>;
    /// Creates the module's state for the context `resources` belongs to
    /// (what [`crate::Context::register_host_module`] calls). The default
    /// ignores them and calls [`HostModule::instantiate`]; a module whose
    /// state allocates or runs bytecode on the caller's behalf overrides it
    /// to charge the caller's memory budget and fuel.
    fn instantiate_in(
        &self,
        resources: &crate::ContextResources,
    ) -> Result<Box<dyn HostState>, Trap> {
        let _ = resources;
        self.instantiate()
    }
    /// Names (without `!`) of the ref types the module defines; registered
    /// when the module is, so bytecode type tables can name them.
    fn ref_types(&self) -> Vec<String> {
        Vec::new()
    }
}

// ---------------------------------------------------------------------------
// Dynamic (shared-library) modules as host modules.

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

fn to_raw(v: &Value) -> Result<irvm_plugin_abi::RawValue, Trap> {
    use irvm_plugin_abi as abi;
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
    fn result_slots(&self, index: usize) -> Vec<irvm_plugin_abi::RawValue> {
        use irvm_plugin_abi as abi;
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

    fn finish(outcome: DynamicOutcome, raw: &[irvm_plugin_abi::RawValue]) -> HostOutcome {
        use irvm_plugin_abi as abi;
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
