//! Loading IREE bytecode modules: the FlatBuffer schema bindings, the archive
//! layout of `.vmfb` files, structural verification and zero-copy accessors.
//!
//! ```no_run
//! use irvm::loader::Module;
//!
//! let module = Module::from_file("fib.vmfb")?;
//! for export in module.exports() {
//!     let bytecode = module.function_bytecode(export.internal_ordinal).unwrap();
//!     println!("{}.{}: {} bytes", module.name(), export.local_name, bytecode.len());
//! }
//! # Ok::<(), irvm::loader::LoadError>(())
//! ```
//!
//! Files, one job each:
//! - `archive.rs`: ZIP header, size prefix, external rodata base.
//! - `verify.rs`: FlatBuffer verification and load-time invariants.
//! - `flatcc_rules.rs`: the structural rules IREE's verifier (flatcc) adds
//!   to the `flatbuffers` crate's (table sizes, zero offsets, unions).
//! - `module.rs`: [`Module`] and its accessors.
//! - `debug_db.rs`: lazy access to the debug database.
//! - `abi.rs`: calling conventions and reflection attributes.
//! - `schema.rs`: the flatc-generated bindings (crate-internal; hidden,
//!   reachable for irvm's own dump tool and tests).

pub mod abi;
pub mod archive;
mod bytes;
pub mod debug_db;
mod error;
mod features;
mod flatcc_rules;
mod module;
#[doc(hidden)]
pub mod schema;
mod verify;

pub use abi::{AbiError, CallingConvention, ValueKind};
pub use bytes::{AlignedBytes, FileMapping, LentBytes, ModuleBytes, PRIVATE_COPY_BYTES};
#[doc(hidden)]
pub use debug_db::LocationDef;
pub use debug_db::{DebugDatabase, DebugError, Location, SourceMap, SourcePosition};
pub use error::LoadError;
pub use features::{FeatureBits, SUPPORTED_FEATURES};
pub use module::{Dependency, ExportDecl, FunctionDescriptor, ImportDecl, Module, SignatureDecl};
pub use verify::{BYTECODE_VERSION_MAJOR, BYTECODE_VERSION_MINOR};
