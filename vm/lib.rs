//! irvm: loads, links, runs and debugs IREE VM bytecode modules (`.vmfb`).
//!
//! The crate is one package with several source roots (see `ARCHITECTURE.md`):
//! [`modules`] reads module files, [`isa`] describes every instruction once,
//! and the rest of `vm/` decodes, disassembles and executes them.

#[path = "../modules/mod.rs"]
pub mod modules;

pub mod decode;
pub mod dynamic;
pub mod isa;
