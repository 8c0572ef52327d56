//! The assembler on arbitrary text: every input must assemble with
//! diagnostics or produce a module that loads; such a module printed in the
//! assembly form (`irvm dump --output=assembly`) must assemble again to the
//! same bytes, and, without a debug database or a backslash in its
//! strings, its disassembly (IREE's text) must assemble again to a module
//! with the same disassembly. Never a panic.
//!
//! The corpus is seeded with the assembly form of a few iree-compile
//! modules (`fuzz/seeds/asm/`), besides the hand-written `.vmasm` sources.
#![no_main]

use irvm::bytecode::disasm::{disassemble_module, DisasmOptions, TextForm};
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
    let Ok(module) = Module::from_bytes(bytes.clone()) else {
        return;
    };
    assembly_form_is_a_fixed_point(&module, &bytes);
    let Ok(listing) = disassemble_module(&module, &DisasmOptions::default()) else {
        return;
    };
    // Listings do not carry locations, and with a debug database calls
    // print by debug name; the fixed-point check is for modules without.
    if module.debug_database().is_some() {
        return;
    }
    // IREE's text prints strings as they are, as iree-dump-module does, so
    // a backslash in one (a `vm.fail` message, say) reads as an escape when
    // the listing is assembled again: such strings round-trip through the
    // assembly form only (checked above).
    if listing.contains('\\') {
        return;
    }
    let again = irvm::asm::assemble(&listing, "listing.vmasm")
        .unwrap_or_else(|e| panic!("disassembly does not reassemble:\n{e}\n{listing}"));
    let again = Module::from_bytes(again).expect("reassembled module loads");
    let listing2 = disassemble_module(&again, &DisasmOptions::default()).expect("disassembles");
    assert_eq!(listing, listing2, "round trip changed the listing");
});

/// A module `irvm as` wrote comes back byte for byte from its own assembly
/// form. (The form refuses only what it cannot say, e.g. rwdata segments,
/// which the assembler never writes.)
fn assembly_form_is_a_fixed_point(module: &Module, bytes: &[u8]) {
    let options = DisasmOptions {
        form: TextForm::Assembly,
        ..Default::default()
    };
    let form = disassemble_module(module, &options)
        .unwrap_or_else(|e| panic!("an assembled module has no assembly form: {e}"));
    let again = irvm::asm::assemble(&form, "form.vmasm")
        .unwrap_or_else(|e| panic!("the assembly form does not reassemble:\n{e}\n{form}"));
    if again != bytes {
        let second = Module::from_bytes(again)
            .ok()
            .and_then(|m| disassemble_module(&m, &options).ok())
            .unwrap_or_default();
        panic!("the assembly form reassembles to other bytes:\n{form}\n---\n{second}");
    }
}
