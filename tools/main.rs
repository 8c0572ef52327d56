//! `irvm`: the command-line tool.
fn main() {}
