//! The per-module state of a context: what registering a module leaves
//! behind for the interpreter — a bytecode module's verified functions,
//! import links ([`ImportTarget`]), rodata buffers and globals (rwdata and
//! ref globals, charged to the context's memory budget), or a host
//! module's [`HostState`].

use std::collections::HashMap;
use std::sync::Arc;

use crate::budget::{Charge, MemoryBudget};
use crate::exec::TieredFunction;
use crate::host::HostState;
use crate::loader::Module;
use crate::program::Signature;
use crate::trap::{StatusCode, Trap};
use crate::values::{Buffer, Ref, TypeDef};

/// Where an import of a bytecode module leads.
#[derive(Clone, Debug)]
pub(crate) enum ImportTarget {
    /// An optional import nobody provides.
    Unresolved,
    /// An internal function of another bytecode module of the context.
    Bytecode { module: u32, ordinal: u32 },
    /// A function of a host module.
    Host { module: u32, index: u32 },
}

/// A bytecode module registered in a context, with its state.
pub(crate) struct BytecodeInstance {
    pub module: Module,
    pub name: String,
    pub funcs: Vec<Arc<TieredFunction>>,
    pub signatures: Vec<Signature>,
    pub import_sigs: Vec<Arc<Signature>>,
    pub import_names: Vec<String>,
    pub imports: Vec<ImportTarget>,
    pub types: Vec<TypeDef>,
    pub rodata: Vec<Arc<Buffer>>,
    pub rwdata: Vec<u8>,
    pub global_refs: Vec<Ref>,
    /// The globals' share of the context's memory budget.
    pub _state_charge: crate::budget::Charge,
    /// The module's bytes held in memory, charged to the context's budget
    /// for as long as it is registered (`Module::heap_bytes`).
    pub _module_charge: crate::budget::Charge,
    pub exports: HashMap<String, u32>,
    pub names: Vec<Option<String>>,
}

/// A host module registered in a context, with its state.
pub(crate) struct HostInstance {
    pub name: String,
    pub version: u32,
    pub funcs: Vec<(String, Signature)>,
    pub state: Box<dyn HostState>,
}

/// A registered module of either kind.
pub(crate) enum Registered {
    Bytecode(Box<BytecodeInstance>),
    Host(HostInstance),
}

impl Registered {
    /// The name the module was registered under.
    pub(super) fn name(&self) -> &str {
        match self {
            Registered::Bytecode(b) => &b.name,
            Registered::Host(h) => &h.name,
        }
    }
    /// The module's version (checked against dependencies).
    pub(super) fn version(&self) -> u32 {
        match self {
            Registered::Bytecode(b) => b.module.version(),
            Registered::Host(h) => h.version,
        }
    }
    /// Finds export `name`: (target, signature).
    pub(super) fn export(&self, index: u32, name: &str) -> Option<(ImportTarget, Signature)> {
        match self {
            Registered::Bytecode(b) => {
                let &ord = b.exports.get(name)?;
                Some((
                    ImportTarget::Bytecode {
                        module: index,
                        ordinal: ord,
                    },
                    b.signatures[ord as usize].clone(),
                ))
            }
            Registered::Host(h) => {
                let i = h.funcs.iter().position(|(n, _)| n == name)?;
                Some((
                    ImportTarget::Host {
                        module: index,
                        index: i as u32,
                    },
                    h.funcs[i].1.clone(),
                ))
            }
        }
    }
}

/// A module's rodata segments as read-only buffers over the module's bytes
/// (no copy; each keeps the module alive).
pub(super) fn rodata_buffers(module: &Module) -> Vec<Arc<Buffer>> {
    (0..module.rodata_count())
        .map(|i| {
            let range = module.rodata_range(i).unwrap_or(0..0);
            Arc::new(Buffer::rodata(module.clone(), range))
        })
        .collect()
}

/// A bytecode module's globals, zeroed: `rwdata` bytes of primitive
/// globals and `refs` null ref globals, with the memory they hold.
pub(super) struct Globals {
    pub rwdata: Vec<u8>,
    pub refs: Vec<Ref>,
    /// Their share of the context's memory budget.
    pub charge: Charge,
}

impl Globals {
    /// Charges `bytes` of primitive globals and `refs` ref globals to
    /// `memory` and allocates them fallibly (their sizes come from the
    /// module file, bounded by `Limits` beforehand).
    pub(super) fn allocate(
        memory: &Arc<MemoryBudget>,
        bytes: usize,
        refs: usize,
    ) -> Result<Globals, Trap> {
        let state_bytes = (bytes as u64)
            .saturating_add((refs as u64).saturating_mul(std::mem::size_of::<Ref>() as u64));
        let charge = Charge::new(memory, state_bytes, "the module's globals")?;
        let no_memory = || {
            Trap::new(
                StatusCode::ResourceExhausted,
                format!("cannot allocate {state_bytes} bytes of module globals"),
            )
        };
        let mut rwdata = Vec::new();
        rwdata.try_reserve_exact(bytes).map_err(|_| no_memory())?;
        rwdata.resize(bytes, 0u8);
        let mut global_refs = Vec::new();
        global_refs
            .try_reserve_exact(refs)
            .map_err(|_| no_memory())?;
        global_refs.resize(refs, Ref::Null);
        Ok(Globals {
            rwdata,
            refs: global_refs,
            charge,
        })
    }
}
