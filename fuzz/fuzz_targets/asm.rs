//! The assembler on arbitrary text: every input must assemble with
//! diagnostics or produce a module that loads, and whose disassembly
//! assembles again to a module with the same disassembly. Never a panic.
#![no_main]

use irvm::bytecode::disasm::{disassemble_module, DisasmOptions};
use irvm::Module;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(bytes) = irvm::asm::assemble(text, "fuzz.vmasm") else {
        return;
    };
    // The assembler checks operands but not dataflow; the loader may still
    // refuse what it wrote (e.g. a register bank mismatch). It must not
    // panic.
    let Ok(module) = Module::from_bytes(bytes) else {
        return;
    };
    let Ok(listing) = disassemble_module(&module, &DisasmOptions::default()) else {
        return;
    };
    // Listings do not carry locations, and with a debug database calls
    // print by debug name; the fixed-point check is for modules without.
    if module.debug_database().is_some() {
        return;
    }
    let again = irvm::asm::assemble(&listing, "listing.vmasm")
        .unwrap_or_else(|e| panic!("disassembly does not reassemble:\n{e}\n{listing}"));
    let again = Module::from_bytes(again).expect("reassembled module loads");
    let listing2 = disassemble_module(&again, &DisasmOptions::default()).expect("disassembles");
    assert_eq!(listing, listing2, "round trip changed the listing");
});
