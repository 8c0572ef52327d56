//! irvm: loads, links, runs and debugs IREE VM bytecode modules (`.vmfb`).
//!
//! The crate is one package with several source roots (see `ARCHITECTURE.md`):
//! [`modules`] reads module files, [`isa`] describes every instruction once,
//! and the rest of `vm/` decodes, disassembles and executes them.

#[path = "../modules/mod.rs"]
pub mod modules;

pub mod asm;
mod budget;
pub mod context;
mod cycles;
pub mod debug;
pub mod debugger;
pub mod decode;
pub mod disasm;
pub mod dynamic;
mod exec;
pub mod host;
pub mod isa;
pub mod native;
mod program;
pub mod refs;
pub mod trap;
pub mod value;

pub use context::{CallState, Context, FrameInfo, Func, Instance, Limits, LinkError};
pub use debug::{Control, ExecView, ExecutionTracer, InterruptHandle, Observer};
pub use host::{HostFunctionDecl, HostModule, HostOutcome, HostState};
pub use modules::Module;
pub use native::{HostRef, HostResults, HostValue, IntoHostFunc, NativeModule};
pub use program::VerifyError;
pub use refs::{Buffer, List, Ref, RefType, TypeDef, ValueType};
pub use trap::{StatusCode, Trap, TrapFrame};
pub use value::Value;

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
    assert_send_sync::<NativeModule<()>>();
};
