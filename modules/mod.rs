//! Loading IREE bytecode modules (`.vmfb`): the FlatBuffer schema bindings,
//! the archive layout, structural verification, zero-copy accessors, the
//! debug database and the function ABI (calling conventions, reflection).
//!
//! ```no_run
//! let module = irvm::modules::Module::from_file("fib.vmfb")?;
//! println!("{} exports {:?}", module.name(), module.exports());
//! # Ok::<(), irvm::modules::LoadError>(())
//! ```

pub mod abi;
mod archive;
pub mod debug_db;
mod error;
mod module;
pub mod schema;

pub use abi::{CallingConvention, ValueKind};
pub use debug_db::{DebugDatabase, Location, SourceMap};
pub use error::LoadError;
pub use module::{
    Dependency, ExportDecl, FunctionDescriptor, ImportDecl, Module, ModuleBytes, SignatureDecl,
    SUPPORTED_BYTECODE_MAJOR, SUPPORTED_BYTECODE_MINOR, SUPPORTED_FEATURES,
};
pub use schema::FeatureBits;
