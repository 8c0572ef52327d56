//! IREE's `hal` module for irvm, built only on irvm's public embedding API.
//!
//! Programs `iree-compile` makes from tensor code import `hal` (version 7)
//! and carry their kernels as executables. This crate provides:
//!
//! - [`hal_module`]: the `hal` host module with all 60 exports of IREE
//!   3.13 (`runtime/src/iree/modules/hal/exports.inl`) linking under their
//!   calling conventions. Channels and collectives check their arguments
//!   as IREE's do (INVALID_ARGUMENT for a ref of the wrong type), then fail
//!   with UNIMPLEMENTED naming the function ([`UNIMPLEMENTED`]); the rest
//!   run on a synchronous CPU device (files from memory are read-only, as
//!   in IREE).
//! - vmvx executables (`vmvx-bytecode-fb`): each is a bytecode module loaded
//!   into a private context behind the `vmvx` module ([`vmvx_module`]:
//!   its 32 microkernels, elementwise, copy, fill and the data-tiling
//!   pack/mmt4d/unpack/query_tile_sizes); dispatches call its entry
//!   functions once per workgroup.
//! - [`BufferView`]: tensors in and out (`BufferView::from_slice`,
//!   `to_vec`), and [`parse_buffer_view`]/[`format_buffer_view`] for the
//!   text forms iree-run-module reads and prints.
//!
//! Stopping a call: the context's interrupt and deadline are checked
//! before every workgroup. On `local-task`, a call that can be stopped (its
//! context handed out an interrupt handle or has a deadline) is also
//! stopped *during* a long native workgroup: it returns CANCELLED or
//! DEADLINE_EXCEEDED at once, and the workgroups already running end in
//! the background. Until they do, the context's next call waits for them
//! (and can be stopped while it waits: [`irvm::BackgroundWork`]), and their
//! buffers wait for anyone who touches them ([`irvm::NativeRegionLease`]);
//! dropping the context, its modules or the buffers meanwhile is safe. On
//! `local-sync` the workgroup running ends first (`native/region.rs`).
//!
//! ```no_run
//! use irvm::{Context, TypeRegistry, Module};
//! use irvm_hal::{hal_module, BufferView};
//!
//! let mut ctx = Context::new(&TypeRegistry::new());
//! ctx.register_host_module(&hal_module().unwrap()).unwrap();
//! ctx.register_module(Module::from_file("mlp.vmfb").unwrap()).unwrap();
//! let predict = ctx.function("module.predict").unwrap();
//! let x = BufferView::from_slice(&[4, 8], &[1.0f32; 32]).unwrap();
//! let out = ctx.invoke(&predict, &[x.into_value()]).unwrap();
//! let y = BufferView::from_value(&out[0]).unwrap().to_vec::<f32>().unwrap();
//! ```

mod command;
mod device;
mod element;
mod executable;
mod exports;
mod fp8;
mod fpu;
pub mod native;
pub mod numpy_dtype;
mod objects;
pub mod subbyte;
mod text;
mod vmvx;
mod vmvx_grid;
mod vmvx_modules;
mod workers;

pub use self::command::{Binding, BufferRef, Command, CommandBuffer, Workgroups};
pub use self::device::{
    default_workers, DeviceConfig, DeviceKind, DeviceOptions, DispatchEvent, DispatchHook,
    TraceHook, MAX_WORKERS,
};
pub use self::element::{numerical, ElementType};
pub use self::executable::{
    supports_format, Bindings, BoundRange, Dispatch, Executable, ENTRY_SIGNATURE, MAX_WORKGROUPS,
    VMVX_FORMAT,
};
pub use self::exports::inline::{
    HAL_INLINE_VERSION, HAL_LOADER_VERSION, INLINE_EXPORTS, LOADER_EXPORTS,
};
pub use self::exports::{signal_after, Args, ExportResults, File, HalState, EXPORTS};
pub use self::objects::{
    shape_text, type_names, view_byte_size, Allocator, BufferView, Device, Element, Fence,
    HalBuffer,
};
pub use self::text::{
    format_buffer_view, parse_buffer_view, parse_buffer_view_within, TensorType,
    DEFAULT_MAX_ELEMENTS,
};
pub use self::vmvx::{vmvx_module, UNIMPLEMENTED_KERNELS};

use irvm::NativeModule;

/// Version of the `hal` module (programs require at least 7).
pub const HAL_VERSION: u32 = 7;

/// The exports irvm links but does not implement yet.
pub const UNIMPLEMENTED: &[&str] = &[
    "channel.create",
    "channel.rank_and_count",
    "channel.split",
    "command_buffer.collective",
];

/// Whether `module` needs the `hal` module registered before it: it
/// declares the dependency (as iree-compile's output does), imports
/// `hal.*` functions (as hand-assembled modules may), or names a hal type
/// without calling the hal and without the inline HAL (iree-compile's
/// `func.func @id(%a: tensor<4xf32>) -> tensor<4xf32>` passes a
/// `!hal.buffer_view` through; IREE's tools have the hal's types
/// registered for every module).
pub fn module_needs_hal(module: &irvm::Module) -> bool {
    module.dependencies().iter().any(|d| d.name == "hal")
        || module
            .imports()
            .iter()
            .any(|i| i.full_name.starts_with("hal."))
        || (!module_needs_inline_hal(module)
            && module.types().iter().any(|t| t.starts_with("!hal.")))
}

/// Whether export `name` of `module` uses the async-external calling
/// model: its reflection attribute `iree.abi.model` is `coarse-fences`
/// (what IREE's tools ask before appending fences), so its last two
/// parameters are a wait fence and a signal fence. Callers pass a null wait
/// fence and a fresh [`Fence`] to signal, then ask it
/// [`Fence::outcome_after_call`].
pub fn uses_coarse_fences(module: &irvm::Module, name: &str) -> bool {
    module
        .export(name)
        .and_then(|e| module.function_signature(e.internal_ordinal))
        .is_some_and(|sig| {
            sig.attrs
                .iter()
                .any(|&(k, v)| k == "iree.abi.model" && v == "coarse-fences")
        })
}

/// Whether `module` imports the inline HAL (`hal_inline`, `hal_loader`:
/// `--iree-execution-model=inline-dynamic`), [`inline_modules_with`].
pub fn module_needs_inline_hal(module: &irvm::Module) -> bool {
    module
        .dependencies()
        .iter()
        .any(|d| d.name == "hal_inline" || d.name == "hal_loader")
}

/// The `hal` host module: register it in a context before modules that
/// import `hal`. Its allocations are charged to the context's memory budget
/// ([`irvm::Limits::max_memory_bytes`], each at most
/// [`irvm::Limits::max_buffer_bytes`]), and dispatched kernels (and a
/// vmvx executable's `__init`) run on the context's fuel, deadline,
/// interrupt, budget and stack, buffer and list limits
/// ([`irvm::ContextResources::run_within`]).
pub fn hal_module() -> Result<NativeModule<HalState>, irvm::loader::AbiError> {
    hal_module_with(DeviceOptions::default())
}

/// [`hal_module`] with a device made with `options`: `local-sync` or
/// `local-task` and its worker count, and whether native executables load.
///
/// ```
/// use irvm_hal::{hal_module_with, DeviceKind, DeviceOptions};
///
/// // Untrusted modules: vmvx bytecode only, on the calling thread.
/// let options = DeviceOptions {
///     kind: DeviceKind::Sync,
///     native_executables: false,
///     ..DeviceOptions::default()
/// };
/// let hal = hal_module_with(options)?;
/// # Ok::<(), irvm::loader::AbiError>(())
/// ```
pub fn hal_module_with(
    options: DeviceOptions,
) -> Result<NativeModule<HalState>, irvm::loader::AbiError> {
    hal_module_from(move |resources| HalState::with_device(resources.clone(), options.clone()))
}

/// [`hal_module_with`] whose contexts all use one device configuration,
/// `config`, and so one `local-task` worker pool (started at the first
/// dispatch of any of them, shared by those running at once): for
/// embedders that make many short-lived contexts, as IREE's Python runtime
/// reuses one cached device. The module itself may be registered in any
/// number of contexts.
pub fn hal_module_sharing(
    config: std::sync::Arc<DeviceConfig>,
) -> Result<NativeModule<HalState>, irvm::loader::AbiError> {
    hal_module_from(move |resources| {
        HalState::on_device(resources.clone(), Device::new(config.clone()))
    })
}

/// The `hal_inline` and `hal_loader` host modules a program compiled with
/// `--iree-execution-model=inline-dynamic` imports instead of `hal`
/// (allocation without a device, executables loaded and dispatched at once
/// on the calling thread), with a device made with `options` for the
/// executables (its formats, and whether native ones load). Register both
/// before such a program.
pub fn inline_modules_with(
    options: DeviceOptions,
) -> Result<[NativeModule<HalState>; 2], irvm::loader::AbiError> {
    let sync = DeviceOptions {
        kind: DeviceKind::Sync,
        ..options
    };
    let inline = table_module(
        "hal_inline",
        HAL_INLINE_VERSION,
        &[type_names::BUFFER, type_names::BUFFER_VIEW],
        INLINE_EXPORTS,
        sync.clone(),
    )?;
    let loader = table_module(
        "hal_loader",
        HAL_LOADER_VERSION,
        &[type_names::EXECUTABLE],
        LOADER_EXPORTS,
        sync,
    )?;
    Ok([inline, loader])
}

/// A host module `name` of the exports in `table`, each context's state
/// a [`HalState`] on a device made with `options`.
fn table_module(
    name: &'static str,
    version: u32,
    types: &[&str],
    table: &'static [(&'static str, &'static str, exports::ExportFn)],
    options: DeviceOptions,
) -> Result<NativeModule<HalState>, irvm::loader::AbiError> {
    let mut module = NativeModule::with_context_state(name, version, move |resources| {
        HalState::with_device(resources.clone(), options.clone())
    });
    for ty in types {
        module = module.ref_type(*ty);
    }
    for &(function, cconv, f) in table {
        module = module.func_with_state_into(
            function,
            cconv,
            move |state: &mut HalState, args, results| {
                let mut outcome = f(state, &mut exports::Args::in_module(name, function, args));
                match &mut outcome {
                    Ok(values) => {
                        values.take_into(results);
                        Ok(())
                    }
                    Err(_) => outcome.map(drop),
                }
            },
        )?;
    }
    Ok(module)
}

fn hal_module_from(
    state: impl Fn(&irvm::ContextResources) -> HalState + Send + Sync + 'static,
) -> Result<NativeModule<HalState>, irvm::loader::AbiError> {
    let mut module = NativeModule::with_context_state("hal", HAL_VERSION, state);
    for name in type_names::ALL {
        module = module.ref_type(*name);
    }
    for &(name, cconv, implementation) in EXPORTS {
        module = match implementation {
            Some(f) => module.func_with_state_into(
                name,
                cconv,
                move |state: &mut HalState, args, results| {
                    // (The results are moved out where the export left
                    // them: `?` would copy them whole first.)
                    let mut outcome = f(state, &mut exports::Args::new(name, args));
                    match &mut outcome {
                        Ok(values) => {
                            values.take_into(results);
                            Ok(())
                        }
                        Err(_) => outcome.map(drop),
                    }
                },
            )?,
            None => module.func_with_state(name, cconv, move |_: &mut HalState, args| {
                Err(exports::unimplemented::refuse(name, args))
            })?,
        };
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_sixty_exports_link_with_their_conventions() {
        let m = hal_module().unwrap();
        assert_eq!(EXPORTS.len(), 60);
        assert_eq!(
            m.signature("command_buffer.dispatch"),
            Some("0rrIiiiICiDCiirIID_v")
        );
        let unimplemented: Vec<&str> = EXPORTS
            .iter()
            .filter(|e| e.2.is_none())
            .map(|e| e.0)
            .collect();
        assert_eq!(unimplemented, UNIMPLEMENTED);
        let mut names: Vec<&str> = EXPORTS.iter().map(|e| e.0).collect();
        let sorted = names.clone();
        names.sort();
        assert_eq!(names, sorted);
    }
}

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn host_objects_are_send_and_sync() {
        assert_send_sync::<super::HalState>();
        assert_send_sync::<super::BufferView>();
        assert_send_sync::<super::HalBuffer>();
        assert_send_sync::<super::CommandBuffer>();
        assert_send_sync::<super::Executable>();
        assert_send_sync::<super::Fence>();
        assert_send_sync::<super::Device>();
    }
}

/// The repository's README.md, whose Rust examples (the library and this
/// crate together) are compiled as this crate's doctests, so they keep up
/// with the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;
