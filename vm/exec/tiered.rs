//! What a frame runs: a verified function together with the compiling
//! tier's slot for it.
//!
//! The program layer (`crate::program`) knows nothing of compiled code; the
//! executor pairs each of a context's functions with its [`JitSlot`] here,
//! so that a frame reaches both through the one pointer it holds
//! ([`FuncRef`](super::FuncRef)) and the interpreter's checks of the slot
//! cost no more than a field read.

use std::sync::Arc;

use crate::jit::{JitSlot, SharedCode};
use crate::program::Function;

/// A verified function and its slot in the compiling tier (heat, machine
/// code), owned by the context's module list (`BytecodeInstance::funcs`).
///
/// Dereferences to the [`Function`], so the interpreter reads its code,
/// register counts and signature as before.
#[derive(Debug)]
pub(crate) struct TieredFunction {
    /// The pre-decoded, verified function.
    function: Function,
    /// Machine code for this function, once hot (`vm/jit`).
    pub jit: JitSlot,
}

impl TieredFunction {
    /// `function`, not compiled yet; its machine code shared with the
    /// other contexts of its module through `shared`.
    pub(crate) fn new(function: Function, shared: Arc<SharedCode>) -> TieredFunction {
        TieredFunction {
            function,
            jit: JitSlot::new(shared),
        }
    }
}

impl std::ops::Deref for TieredFunction {
    type Target = Function;
    #[inline(always)]
    fn deref(&self) -> &Function {
        &self.function
    }
}
