//! IREE's `io_parameters` module for irvm: model weights kept outside the
//! module, in parameter archives (`.irpa`, `.safetensors`, `.gguf`).
//!
//! Modules compiled with external parameters (`iree-import-onnx
//! --externalize-params`, `iree-compile --iree-parameter-export=...`)
//! import `io_parameters`; `iree-run-module --parameters=[scope=]FILE`
//! provides it. Here:
//!
//! - [`ParameterIndex`]: the archives of each scope, memory-mapped; a key
//!   in two files of a scope resolves to the first added.
//! - [`io_parameters_module`]: the host module (`load`, `gather`,
//!   `scatter`, with IREE 3.13's calling conventions), on the hal's
//!   device, buffers and fences. Parameters whose mapped bytes are aligned
//!   become buffers over the mapping without a copy.
//! - [`archive`]: the format readers.

pub mod archive;
mod index;
mod module;

pub use self::index::{
    parse_parameter_flag, ArchiveFile, MemoryEntry, OpenMode, ParameterError, ParameterIndex,
    Resolved, SharedBytes,
};
pub use self::module::{io_parameters_module, ParametersState, IO_PARAMETERS_VERSION};
