//! The integration tests of the `irvm` command line and of the library
//! through it, in one test binary (one link instead of one per file), a
//! module per topic. Helpers they share are in `tests/common`.
//!
//! Tests that need a process of their own have their own binary:
//! `tests/hostile.rs` (re-runs itself as a bounded child). The tests of the
//! library alone are in `vm/tests` and run with `cargo test -p irvm`.

#[path = "../common/mod.rs"]
mod common;

mod appends;
mod asm;
mod asm_checks;
mod asm_reference;
mod assembly_form;
mod check;
mod cli_bench;
mod cli_compat;
mod cli_run;
mod compatibility;
mod conformance;
mod corpus;
mod dap;
mod dap_pauses;
mod dap_requests;
mod dbg;
mod dbg_floats;
mod dbg_gdb_parity;
mod dbg_scripts;
mod dbg_shadowed;
mod dbg_words;
mod dbg_yields;
mod differential;
mod dump;
mod dynamic_modules;
mod import_calls;
mod jit;
mod jit_calls;
mod jit_shared;
mod layers;
mod limits;
mod linking;
mod load_refusals;
mod models;
mod native;
mod native_mutation;
mod numpy_io;
mod nvim_dap;
mod parameters;
mod params;
mod profile;
mod random_differential;
mod semantics;
mod subbyte;
mod vmvx_workers;
mod vscode;
