//! The `safetensors` reader (<https://github.com/huggingface/safetensors>).
//!
//! A file is an 8-byte little-endian header length `n`, `n` bytes of JSON
//! (an object: one member per tensor, `{"dtype", "shape", "data_offsets":
//! [begin, end]}`, and an optional `__metadata__` object of strings), then
//! the data section; `data_offsets` are relative to the data section, which
//! starts right after the header.
//!
//! Checked beyond what IREE checks (IREE reads only `data_offsets`): the
//! dtype is one the format defines, the shape is a list of integers, and
//! `end - begin` is exactly the tensor's size (elements times the dtype's
//! bits, a whole number of bytes), computed without overflow. Like IREE,
//! entries are listed in the header's order, a key that appears twice is
//! listed twice, and ranges of different tensors may overlap.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::bytes::u64_at;
use super::{ArchiveEntry, ArchiveError, EntryData, Format};

/// Every dtype of the format and its size in bits.
pub const DTYPES: &[(&str, u64)] = &[
    ("BOOL", 8),
    ("F4", 4),
    ("F6_E2M3", 6),
    ("F6_E3M2", 6),
    ("U8", 8),
    ("I8", 8),
    ("F8_E5M2", 8),
    ("F8_E4M3", 8),
    ("F8_E8M0", 8),
    ("I16", 16),
    ("U16", 16),
    ("F16", 16),
    ("BF16", 16),
    ("I32", 32),
    ("U32", 32),
    ("F32", 32),
    ("C64", 64),
    ("F64", 64),
    ("I64", 64),
    ("U64", 64),
];

/// The key of the header's free-form metadata.
pub const METADATA_KEY: &str = "__metadata__";

fn fail(offset: u64, message: String) -> ArchiveError {
    ArchiveError::new(Format::Safetensors, offset, message)
}

fn short(offset: u64, message: String) -> ArchiveError {
    ArchiveError::short(Format::Safetensors, offset, message)
}

/// The header's members in order, duplicates kept.
struct Members(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Members, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Value>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads every entry of a `.safetensors` file.
pub fn read(bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    let file_len = bytes.len() as u64;
    let header_len = u64_at(bytes, 0).ok_or_else(|| {
        short(
            0,
            format!(
                "file truncated: the 8-byte header length does not fit in the {file_len}-byte file"
            ),
        )
    })?;
    if header_len > file_len - 8 {
        return Err(short(
            0,
            format!(
                "the header says it is {header_len} bytes, but only {} follow the length",
                file_len - 8
            ),
        ));
    }
    let data_start = 8 + header_len;
    let data_len = file_len - data_start;
    let json = &bytes[8..data_start as usize];
    let Members(members) = serde_json::from_slice(json)
        .map_err(|e| fail(8, format!("the header is not a JSON object: {e}")))?;
    let mut entries = Vec::with_capacity(members.len());
    for (key, value) in members {
        let bad = |what: String| fail(8, format!("tensor `{key}`: {what}"));
        if key == METADATA_KEY {
            let ok = value
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string));
            if !ok {
                return Err(fail(
                    8,
                    format!("`{METADATA_KEY}` must be an object of strings"),
                ));
            }
            continue;
        }
        let Some(tensor) = value.as_object() else {
            return Err(bad("not a JSON object".into()));
        };
        let dtype = tensor
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no `dtype` string".into()))?;
        let bits = DTYPES
            .iter()
            .find(|(name, _)| *name == dtype)
            .map(|(_, bits)| *bits)
            .ok_or_else(|| bad(format!("unknown dtype `{dtype}`")))?;
        let shape: Vec<u64> = tensor
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|dims| dims.iter().map(Value::as_u64).collect())
            .ok_or_else(|| bad("`shape` is not a list of non-negative integers".into()))?;
        let offsets: Vec<u64> = tensor
            .get("data_offsets")
            .and_then(Value::as_array)
            .and_then(|o| o.iter().map(Value::as_u64).collect())
            .filter(|o: &Vec<u64>| o.len() == 2)
            .ok_or_else(|| bad("`data_offsets` is not a pair of non-negative integers".into()))?;
        let (begin, end) = (offsets[0], offsets[1]);
        if begin > end || end > data_len {
            return Err(bad(format!(
                "data offsets [{begin}, {end}] outside of the {data_len}-byte data section"
            )));
        }
        let shape_text = format!("{shape:?}");
        let size_bits = shape
            .iter()
            .try_fold(bits, |n, d| n.checked_mul(*d))
            .ok_or_else(|| bad(format!("{dtype} {shape_text} has more bits than fit in 64")))?;
        if size_bits % 8 != 0 {
            return Err(bad(format!(
                "{dtype} {shape_text} is {size_bits} bits, not a whole number of bytes"
            )));
        }
        if end - begin != size_bits / 8 {
            return Err(bad(format!(
                "{dtype} {shape_text} takes {} bytes, but data offsets [{begin}, {end}] hold {}",
                size_bits / 8,
                end - begin
            )));
        }
        entries.push(ArchiveEntry {
            info: format!("{dtype} {shape_text}"),
            data: EntryData::Data {
                offset: data_start + begin,
                length: end - begin,
            },
            key,
        });
    }
    Ok(entries)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A safetensors file of `header` (JSON) and `data`.
    pub(crate) fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn message(bytes: &[u8]) -> String {
        read(bytes).unwrap_err().message
    }

    #[test]
    fn reads_tensors_in_header_order_with_absolute_offsets() {
        let header = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"U8","shape":[],"data_offsets":[8,9]}}  "#;
        let bytes = file(header, &[0; 9]);
        let entries = read(&bytes).unwrap();
        let base = 8 + header.len() as u64;
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].key, "b");
        assert_eq!(entries[0].info, "F32 [2]");
        assert_eq!(
            entries[0].data,
            EntryData::Data {
                offset: base,
                length: 8
            }
        );
        assert_eq!(entries[1].key, "a");
        assert_eq!(
            entries[1].data,
            EntryData::Data {
                offset: base + 8,
                length: 1
            }
        );
    }

    #[test]
    fn every_dtype_has_its_size() {
        for (dtype, bits) in DTYPES {
            // 8 elements: a whole number of bytes for every width.
            let size = bits;
            let header =
                format!(r#"{{"t":{{"dtype":"{dtype}","shape":[2,4],"data_offsets":[0,{size}]}}}}"#);
            let entries = read(&file(&header, &vec![0; *size as usize])).unwrap();
            assert_eq!(entries[0].data.length(), *size, "{dtype}");
        }
        let header = r#"{"t":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#;
        assert!(message(&file(header, &[0])).contains("not a whole number of bytes"));
    }

    #[test]
    fn empty_files_and_empty_headers() {
        assert!(read(&file("{}", &[])).unwrap().is_empty());
        assert!(message(&[]).contains("truncated"));
        assert!(message(&[2, 0, 0, 0, 0, 0, 0]).contains("truncated"));
        assert!(message(&file("", &[])).contains("not a JSON object"));
        assert!(message(&file("[1]", &[])).contains("not a JSON object"));
    }

    #[test]
    fn hostile_headers_are_errors() {
        let one = |t: &str, data: &[u8]| message(&file(&format!(r#"{{"t":{t}}}"#), data));
        // Lying header length (u64::MAX and just one too many).
        let mut bytes = file("{}", &[]);
        bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(message(&bytes).contains("header says"));
        bytes[..8].copy_from_slice(&3u64.to_le_bytes());
        assert!(message(&bytes).contains("header says"));
        assert!(one(
            r#"{"dtype":"F32","shape":[1],"data_offsets":[4,0]}"#,
            &[0; 4]
        )
        .contains("outside"));
        assert!(one(
            r#"{"dtype":"F32","shape":[1],"data_offsets":[0,5]}"#,
            &[0; 4]
        )
        .contains("outside"));
        assert!(one(
            r#"{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]}"#,
            &[0; 4]
        )
        .contains("outside"));
        assert!(one(
            r#"{"dtype":"F32","shape":[2],"data_offsets":[0,4]}"#,
            &[0; 4]
        )
        .contains("takes 8 bytes"));
        assert!(one(
            r#"{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,4]}"#,
            &[0; 4]
        )
        .contains("more bits"));
        assert!(one(
            r#"{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}"#,
            &[0; 4]
        )
        .contains("unknown dtype `Q4`"));
        assert!(one(
            r#"{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}"#,
            &[0; 4]
        )
        .contains("shape"));
        assert!(
            one(r#"{"dtype":"F32","shape":[1],"data_offsets":[0]}"#, &[0; 4])
                .contains("data_offsets")
        );
        assert!(one(r#"{"shape":[1],"data_offsets":[0,4]}"#, &[0; 4]).contains("dtype"));
        assert!(one("7", &[0; 4]).contains("not a JSON object"));
        let bad_meta = file(r#"{"__metadata__":{"a":1}}"#, &[]);
        assert!(message(&bad_meta).contains("__metadata__"));
        // Deeply nested JSON is refused by the parser's depth limit, not a
        // stack overflow.
        let deep = format!(r#"{{"t":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
        assert!(message(&file(&deep, &[])).contains("not a JSON object"));
    }

    #[test]
    fn overlapping_ranges_and_duplicate_keys_are_listed_as_iree_lists_them() {
        let header = r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}"#;
        let entries = read(&file(header, &[1, 2, 3, 4])).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].key, entries[1].key);
    }

    #[test]
    fn truncated_at_every_byte_is_an_error() {
        let header = r#"{"a":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
        let bytes = file(header, &[1, 2, 3, 4]);
        assert_eq!(read(&bytes).unwrap().len(), 1);
        for n in 0..bytes.len() {
            assert!(read(&bytes[..n]).is_err(), "{n} bytes");
        }
    }
}
