//! irvm loads, links, runs and debugs IREE VM bytecode modules (`.vmfb`,
//! or VM assembly text).
//!
//! A [`Module`] is a loaded file. A [`Context`] is one program: the modules
//! registered in it (bytecode modules and host modules written in Rust,
//! [`NativeModule`]), their state, and the links between their imports and
//! exports. Functions are found by name and called with typed signatures
//! ([`TypedFunc`]) or with [`Value`] slices; failures are [`Trap`]s with a
//! status code, a message and a backtrace. A context can move to another
//! thread (it is used from one thread at a time).
//!
//! ```
//! use irvm::{Context, TypeRegistry, Module, NativeModule};
//!
//! // A module (here assembled from text; `Module::from_file` loads .vmfb)
//! // that imports a host function.
//! let module = Module::from_assembly(
//!     r#"
//! vm.module @app version 0
//! vm.import @env.twice cconv "0i_i"
//! vm.export @add_twice
//! vm.func @add_twice(%i0: i32, %i1: i32) -> (i32) {
//! ^bb0:
//!   %i2 = vm.add.i32 %i0, %i1
//!   %i2 = vm.call @env.twice(%i2)
//!   vm.return %i2
//! }
//! "#,
//!     "app.vmasm",
//! )?;
//!
//! let registry = TypeRegistry::new();
//! let mut ctx = Context::new(&registry);
//! // Host functions are plain closures; their types give the calling
//! // convention (`0i_i`).
//! ctx.register_host_module(&NativeModule::new("env", 1).wrap("twice", |x: i32| 2 * x))?;
//! ctx.register_module(module)?; // links `env.twice`, runs `__init`
//!
//! // Checked once against the function's signature, then called with Rust
//! // values; several results come back as a tuple.
//! let add_twice = ctx.typed_func::<(i32, i32), i32>("add_twice")?;
//! assert_eq!(add_twice.call(&mut ctx, (20, 1))?, 42);
//!
//! // The context moves to another thread.
//! let answer = std::thread::spawn(move || add_twice.call(&mut ctx, (1, 2)))
//!     .join()
//!     .unwrap()?;
//! assert_eq!(answer, 6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Beside the items on this page: `asm` assembles VM assembly (cargo
//! feature `asm`, on by default, which also lets [`Module::from_file`] read
//! `.vmasm` text), [`bytecode::disasm`] prints a module as
//! `iree-dump-module` does and [`bytecode::decode`] walks a function's
//! bytecode, [`dynamic`] loads host modules from shared libraries, and [`loader`] has
//! the loader's accessors for a module's imports, exports, rodata and debug
//! database.
//! Resource limits are [`Limits`] (with [`Context::set_fuel`],
//! [`Context::set_deadline`] and [`Context::interrupt_handle`]); tools that
//! watch every instruction attach an [`Observer`].
//!
//! The crate is the `vm/` package of the irvm workspace; the command line,
//! the source-level debugger behind `irvm dbg` (`irvm-debugger`, built on
//! this API) and the host modules are packages of their own (see
//! `ARCHITECTURE.md`).

#![warn(missing_docs)]

pub mod loader;

#[cfg(feature = "asm")]
pub mod asm;
mod budget;
pub mod bytecode;
mod context;
mod debug;
pub mod dynamic;
pub mod errors;
mod exec;
pub mod file_map;
mod func;
mod host;
mod jit;
mod module_source;
mod native;
pub mod number_text;
pub mod profile;
mod program;
mod resources;
mod stop;
mod tier;
mod trap;
mod values;

pub use context::{CallState, Context, FrameInfo, Limits, TypeRegistry};
pub use debug::{Control, ExecView, ExecutionTracer, InterruptHandle, Observer};
pub use dynamic::DynamicModule;
pub use func::{CallParams, CallResults, Func, HostRef, HostValue, TypedFunc, ValType};
pub use host::{HostFunctionDecl, HostModule, HostOutcome, HostState, HostStatus};
pub use jit::{CompileRefusal, LeftToInterpreter};
pub use loader::Module;
pub use native::{HostResults, IntoHostFunc, NativeModule};
pub use resources::{BackgroundWork, ContextResources, MemoryCharge, StopCheck};
pub use tier::Tier;
pub use trap::{StatusCode, Trap, TrapFrame};
pub use values::{
    Buffer, BufferPool, ElementType, HostObject, List, NativeRegionLease, RawBytes, Ref, RefType,
    RegionLease, TypeDef, Value, BUFFER_ALIGNMENT,
};

// Compile-time checks: contexts and what calls return move between threads.
const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send::<Context>();
    assert_send::<CallState>();
    assert_send_sync::<Value>();
    assert_send_sync::<Ref>();
    assert_send_sync::<Trap>();
    assert_send_sync::<Module>();
    assert_send_sync::<Func>();
    assert_send_sync::<TypedFunc<(i32, i64), (f32, Ref)>>();
    assert_send_sync::<errors::LookupError>();
    assert_send::<CallState<(i32, f64)>>();
    assert_send_sync::<NativeModule<()>>();
};
