//! Numbers as text, exactly as IREE's C tools read and write them: parsing
//! through the C library's `strtol`/`strtod` family ([`atoi_i32`],
//! [`atod`], …, as `iree_string_view_atoi_*` does) and printing as
//! `printf("%g")` ([`format_g`]). The assembler, the disassembler, value
//! printing, the command line's `--input` parsing and the debugger's
//! float literals ([`strtod_whole`]) share them, so a
//! number reads and prints the same everywhere.

mod format;
mod parse;

pub use format::{format_g, format_g_precision};
pub use parse::{
    assembler_f32, assembler_f64, atod, atof, atoi_i32, atoi_i64, atoi_u32, atoi_u64, strtod_whole,
    strtof_whole,
};
