//! The `safetensors` parameter archive reader on arbitrary bytes (what is checked:
//! `params_check.rs`).
#![no_main]

mod params_check;

use irvm_io_parameters::archive::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| params_check::check(Format::Safetensors, data));
