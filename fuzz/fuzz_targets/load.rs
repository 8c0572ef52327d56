//! Loader, verifier, linker and disassembler on arbitrary bytes: every
//! input must load with an error or load, link (modules without imports)
//! and disassemble, never panic.
#![no_main]

use irvm::bytecode::disasm::{disassemble_module, DisasmOptions};
use irvm::{Context, Module, TypeRegistry};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = Module::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = disassemble_module(&module, &DisasmOptions::default());
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.set_fuel(Some(10_000));
    let _ = ctx.register_module(module);
});
