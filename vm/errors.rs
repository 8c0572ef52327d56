//! Every error type of the library, in one place. Each is defined beside
//! the layer that reports it (and documented there); this module gathers
//! them so a user can name any of them from one path, as
//! `irvm::errors::LoadError`.
//!
//! | error | reported by |
//! | --- | --- |
//! | [`LoadError`] | reading a module ([`Module::from_file`](crate::Module::from_file), [`Module::from_bytes`](crate::Module::from_bytes)) |
//! | [`AbiError`] | parsing a calling convention or reflection attribute |
//! | [`DebugError`] | reading a module's debug database |
//! | [`DecodeError`], [`DisasmError`] | decoding and printing bytecode |
//! | `AsmError`, `AsmErrors` (feature `asm`) | assembling VM assembly text |
//! | [`VerifyError`] | verifying a function when its module is registered |
//! | [`LinkError`] | registering a module in a [`Context`](crate::Context) (dependencies, imports, verification, `__init`) |
//! | [`LookupError`] | finding a function by name and signature |
//! | [`DynamicModuleError`], [`DynamicCallError`] | loading and calling a host module from a shared library |
//! | [`Trap`] (with [`StatusCode`], [`TrapFrame`]) | running code: every failure of a call |

#[cfg(feature = "asm")]
pub use crate::asm::{AsmError, AsmErrors};
pub use crate::bytecode::decode::DecodeError;
pub use crate::bytecode::disasm::DisasmError;
pub use crate::context::LinkError;
pub use crate::dynamic::{DynamicCallError, DynamicModuleError};
pub use crate::func::LookupError;
pub use crate::loader::{AbiError, DebugError, LoadError};
pub use crate::program::VerifyError;
pub use crate::trap::{StatusCode, Trap, TrapFrame};
