//! The `gguf` parameter archive reader on arbitrary bytes: every input is
//! read or refused with an error, never a panic, and every entry read lies
//! in the input (a DATA range inside it, a SPLAT pattern of 1 to 16 bytes).
#![no_main]

use irvm_io_parameters::archive::{read_entries, EntryData, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(entries) = read_entries(Format::Gguf, data) else {
        return;
    };
    for e in entries {
        match e.data {
            EntryData::Data { offset, length } => {
                let end = offset.checked_add(length).expect("range wraps");
                assert!(end <= data.len() as u64, "{} past the end", e.key);
            }
            EntryData::Splat { pattern, .. } => {
                assert!((1..=16).contains(&pattern.len()), "{} pattern", e.key);
            }
        }
    }
});
