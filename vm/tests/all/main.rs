//! The integration tests of the `irvm` library's public API, in one test
//! binary (one link instead of one per file), a module per topic. They use
//! the library alone: `cargo test -p irvm` runs them. Tests that drive the
//! `irvm` command line are in the repository's `tests/`.
//!
//! `tests/mutation.rs` has a binary of its own (it replaces the process's
//! panic hook while it runs).

/// Where the fixtures are: the repository's `tests/common/paths.rs`.
#[expect(dead_code, reason = "the topics use part of it")]
#[path = "../../../tests/common/paths.rs"]
mod paths;

mod api_types;
mod borrowed_host_args;
mod embedding;
mod embedding_attacks;
mod fused_loops;
mod host_results;
mod isa_table;
mod loader;
mod refcounts;
mod shared_buffers;
mod tracked;
mod verifier;
