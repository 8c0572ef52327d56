//! Host modules: functions written in Rust (or loaded from shared libraries)
//! that bytecode modules import by name.
//!
//! A [`HostModule`] describes the module (name, version, functions with
//! their calling conventions, the ref types it defines) and creates one
//! [`HostState`] per context. [`crate::NativeModule`] (`vm/native.rs`)
//! builds one from plain Rust closures; a [`crate::DynamicModule`]
//! (`vm/dynamic.rs`) is one loaded from a shared library.

use crate::trap::{StatusCode, Trap};
use crate::values::Value;

/// How a host call ended.
#[derive(Clone, Debug)]
pub enum HostOutcome {
    /// Finished with these results.
    Done(Vec<Value>),
    /// The call yielded; the VM will call [`HostState::resume`] later.
    Deferred,
}

/// How a call made with [`HostState::call_into`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostStatus {
    /// Finished; its results are in the vector the caller passed.
    Finished,
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
    /// Calls function `index`, appending its results to `results` (empty
    /// on entry): the form the interpreter calls, one vector serving every
    /// call of a context. The default calls [`HostState::call`] and moves its
    /// vector in; a state whose calls are hot writes into `results` instead,
    /// so a call allocates nothing for its results.
    fn call_into(
        &mut self,
        index: usize,
        args: &[Value],
        results: &mut Vec<Value>,
    ) -> Result<HostStatus, Trap> {
        match self.call(index, args)? {
            HostOutcome::Done(values) => {
                *results = values;
                Ok(HostStatus::Finished)
            }
            HostOutcome::Deferred => Ok(HostStatus::Deferred),
        }
    }
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
