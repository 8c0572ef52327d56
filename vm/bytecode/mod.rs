//! The byte format of IREE VM bytecode, and what reads and prints it.
//!
//! - [`isa`]: the instruction table, the one description of every
//!   instruction's opcode, mnemonic and operand layout (public for irvm's
//!   own tools, tests and fuzz targets only: hidden, no stability promise).
//! - [`decode`]: walks a function's bytecode and yields typed
//!   [`Instruction`](decode::Instruction)s with their offsets.
//! - [`disasm`]: prints a module as VM assembly text, as
//!   `iree-dump-module --output=disassembly` does, or in the assembly form
//!   the assembler reads back into the same module (`TextForm::Assembly`).
//!
//! The layers above read bytecode only through these: the verifier and
//! pre-decoder (`program`), the debugger, and the assembler (`asm`, the
//! disassembler's inverse, which writes it: a sibling layer, since it
//! writes whole modules and is an optional feature).

pub mod decode;
pub mod disasm;
#[doc(hidden)]
pub mod isa;
