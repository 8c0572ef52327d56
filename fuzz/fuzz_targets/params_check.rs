//! What the `params_*` targets check, shared: `format`'s reader on
//! arbitrary bytes reads or refuses every input with an error, never a
//! panic, and every entry it reads lies in the input (a DATA range inside
//! it, a SPLAT pattern of 1 to 16 bytes).

use irvm_io_parameters::archive::{read_entries, EntryData, Format};

pub fn check(format: Format, data: &[u8]) {
    let Ok(entries) = read_entries(format, data) else {
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
}
