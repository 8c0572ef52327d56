//! NumPy `.npy` arrays as iree-run-module reads and writes them
//! (`--input=@x.npy`, `--output=@x.npy`, `--expected_output=@x.npy`):
//! IREE's dtype mapping in both directions (kind letter and byte width to
//! numerical type and bit width, so `|b1` is an 8-bit boolean, `<u2` a
//! `ui16`, `<i4` an `si32`), its header dictionary rules and its messages.
//! Errors are `CODE; message` strings, as the rest of the tensor I/O.

use std::io::BufRead;

use irvm_hal as hal;

/// The longest `.npy` header read (NumPy writes a few hundred bytes; IREE
/// reads any length: this bound keeps a hostile file from making irvm
/// allocate gigabytes for a header).
const MAX_HEADER: usize = 1 << 20;

/// Most dimensions a shape may have (IREE's bound).
const MAX_RANK: usize = 128;

pub use hal::numpy_dtype::{descr, element_type};

/// The next `key: value` of a header dictionary's text, and what follows
/// it; values are `True`, `False`, `'text'` or `(tuple)`, each followed by
/// a comma, as IREE's scanner takes them.
fn next_entry(dict: &str) -> Result<(&str, &str, &str), String> {
    let bad = || "INVALID_ARGUMENT; malformed header dict".to_string();
    let (key, rest) = dict.split_once(':').ok_or_else(bad)?;
    let key = key.strip_prefix('\'').unwrap_or(key);
    let key = key.strip_suffix('\'').unwrap_or(key);
    let rest = rest.trim();
    let (value, rest) = if let Some(r) = rest.strip_prefix("True") {
        ("True", r)
    } else if let Some(r) = rest.strip_prefix("False") {
        ("False", r)
    } else if let Some(r) = rest.strip_prefix('\'') {
        r.split_once('\'').unwrap_or((r, ""))
    } else if let Some(r) = rest.strip_prefix('(') {
        r.split_once(')').unwrap_or((r, ""))
    } else {
        return Err(bad());
    };
    let rest = rest.strip_prefix(',').ok_or_else(bad)?;
    Ok((key, value, rest.trim()))
}

/// The dimensions of a shape tuple's text (`2, 3`, `4,` or empty).
fn shape(text: &str) -> Result<Vec<i64>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let text = text.strip_suffix(',').unwrap_or(text);
    let rank = text.matches(',').count() + 1;
    if rank > MAX_RANK {
        return Err(format!(
            "INVALID_ARGUMENT; shape rank {rank} too large; be reasonable please"
        ));
    }
    text.split(',')
        .enumerate()
        .map(|(i, d)| {
            let d = d.trim();
            irvm::number_text::atoi_u64(d)
                .map(|v| v as i64)
                .ok_or_else(|| format!("INVALID_ARGUMENT; invalid dimension {i} value {d}"))
        })
        .collect()
}

/// Reads the next array of a `.npy` stream (versions 1 to 3; several
/// arrays may follow each other in one file). Only the array's bytes are
/// read, after `check_size` has accepted their count, so an endless or
/// huge file costs no more than the array.
pub fn read(
    reader: &mut impl BufRead,
    check_size: impl Fn(u64) -> Result<(), String>,
) -> Result<hal::BufferView, String> {
    let at_end = reader
        .fill_buf()
        .map_err(|e| format!("UNKNOWN; reading: {e}"))?
        .is_empty();
    if at_end {
        return Err("OUT_OF_RANGE; end-of-file".into());
    }
    let mut prefix = [0u8; 8];
    reader
        .read_exact(&mut prefix)
        .map_err(|_| "OUT_OF_RANGE; unable to read entire header prefix".to_string())?;
    if &prefix[..6] != b"\x93NUMPY" {
        return Err("INVALID_ARGUMENT; npy header magic mismatch".into());
    }
    let (major, minor) = (prefix[6], prefix[7]);
    if major == 0 || major > 3 {
        return Err(format!(
            "UNIMPLEMENTED; npy version {major}.{minor} not supported"
        ));
    }
    let header_len = if major == 1 {
        let mut len = [0u8; 2];
        reader.read_exact(&mut len).map_err(|_| {
            format!("OUT_OF_RANGE; failed to read version {major}.{minor} 2-byte header length")
        })?;
        u16::from_le_bytes(len) as usize
    } else {
        let mut len = [0u8; 4];
        reader.read_exact(&mut len).map_err(|_| {
            format!("OUT_OF_RANGE; failed to read version {major}.{minor} 4-byte header length")
        })?;
        u32::from_le_bytes(len) as usize
    };
    if header_len > MAX_HEADER {
        return Err(format!(
            "RESOURCE_EXHAUSTED; a header of {header_len} bytes (irvm reads at most {MAX_HEADER})"
        ));
    }
    let mut header = vec![0u8; header_len];
    reader
        .read_exact(&mut header)
        .map_err(|_| format!("OUT_OF_RANGE; failed to read header string of {header_len} bytes"))?;
    let header = String::from_utf8_lossy(&header);
    let header = header.trim();
    let header = header.strip_prefix('{').unwrap_or(header);
    let mut dict = header.strip_suffix('}').unwrap_or(header);
    // Keys in any order; a key given again overrides, unknown keys are
    // skipped; no `fortran_order` leaves the encoding opaque (0), as IREE.
    let (mut ty, mut encoding, mut dims) = (hal::ElementType(0), 0u32, Vec::new());
    while !dict.is_empty() {
        let (key, value, rest) = next_entry(dict)?;
        match key {
            "descr" => ty = element_type(value)?,
            "fortran_order" if value == "False" => encoding = 1,
            "fortran_order" => {
                return Err("UNIMPLEMENTED; fortran order arrays not supported".into())
            }
            "shape" => dims = shape(value)?,
            _ => {}
        }
        dict = rest;
    }
    let count = dims
        .iter()
        .try_fold(1u64, |a, &d| {
            u64::try_from(d).ok().and_then(|d| a.checked_mul(d))
        })
        .ok_or_else(|| "INVALID_ARGUMENT; shape too large".to_string())?;
    let len = count
        .checked_mul(ty.byte_size() as u64)
        .ok_or_else(|| "INVALID_ARGUMENT; shape too large".to_string())?;
    check_size(len)?;
    // Read straight into the view's buffer (no second copy).
    let mut view = hal::BufferView::written_by(&dims, ty, |b| {
        crate::tensor_io::read_exactly_into(&mut *reader, b).map_err(|t| {
            irvm::Trap::new(
                t.code,
                format!("{}; failed to read npy contents of {len} bytes", t.message),
            )
        })
    })
    .map_err(|t| format!("{}; {}", t.code, t.message))?;
    view.encoding = encoding;
    Ok(view)
}

/// The `.npy` file iree-run-module writes for an array of `dims` and
/// element type `ty` holding `data`: version 1.0 (2.0 for a dictionary
/// over 65535 bytes), the dictionary padded with spaces and a newline to
/// a multiple of 64 bytes, then the bytes.
pub fn write(dims: &[i64], ty: hal::ElementType, data: &[u8]) -> Result<Vec<u8>, String> {
    let shape = match dims {
        [d] => format!("{d},"),
        dims => dims
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({shape}), }}",
        descr(ty)?
    );
    let v2 = dict.len() > 65535;
    let length_bytes = if v2 { 4 } else { 2 };
    let unpadded = 8 + length_bytes + dict.len() + 1;
    let padding = unpadded.next_multiple_of(64) - unpadded;
    let header_len = dict.len() + padding + 1;
    let mut out = Vec::with_capacity(unpadded + padding + data.len());
    out.extend_from_slice(b"\x93NUMPY");
    out.extend_from_slice(&[if v2 { 2 } else { 1 }, 0]);
    if v2 {
        let len = u32::try_from(header_len)
            .map_err(|_| "INVALID_ARGUMENT; npy header too long".to_string())?;
        out.extend_from_slice(&len.to_le_bytes());
    } else {
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + padding, b' ');
    out.push(b'\n');
    out.extend_from_slice(data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_map_as_in_iree() {
        for (descr_text, name, back) in [
            ("|b1", "i1", "|b1"),
            ("<u2", "ui16", "<u2"),
            ("|u1", "ui8", "|u1"),
            ("<i4", "si32", "<i4"),
            ("i8", "si64", "<i8"),
            ("=f8", "f64", "<f8"),
            ("<f2", "f16", "<f2"),
            ("<c8", "cf64", "<c8"),
        ] {
            let ty = element_type(descr_text).unwrap();
            assert_eq!(ty.name(), name, "{descr_text}");
            assert_eq!(descr(ty).unwrap(), back, "{descr_text}");
        }
        assert_eq!(element_type("|b1").unwrap().byte_size(), 1);
        assert!(element_type(">f4").unwrap_err().contains("big-endian"));
        assert!(element_type("<U3")
            .unwrap_err()
            .contains("unsupported data type U"));
        assert!(element_type("<fx").unwrap_err().contains("byte width"));
        assert!(element_type("<").unwrap_err().contains("missing kind"));
        assert!(descr(hal::ElementType::BF16).is_err());
    }

    #[test]
    fn a_zero_d_array_round_trips() {
        let bytes = write(&[], hal::ElementType::I32, &7i32.to_le_bytes()).unwrap();
        assert_eq!(bytes.len(), 132);
        assert!(bytes.starts_with(
            b"\x93NUMPY\x01\x00\x76\x00{'descr': '<i4', 'fortran_order': False, 'shape': (), }"
        ));
        let view = read(&mut &bytes[..], |_| Ok(())).unwrap();
        assert!(view.shape.is_empty());
        assert_eq!(view.element_type.name(), "si32");
    }

    #[test]
    fn malformed_headers_are_refused_with_iree_words() {
        let with = |dict: &str| {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            b.extend_from_slice(dict.as_bytes());
            read(&mut &b[..], |_| Ok(())).map(|_| ()).unwrap_err()
        };
        assert!(with("{'descr' '<f4', }").contains("malformed header dict"));
        assert!(with("{'descr': <f4, }").contains("malformed header dict"));
        assert!(with("{'fortran_order': True, }").contains("fortran order"));
        assert!(with("{'shape': (2, x), }").contains("invalid dimension 1 value x"));
        assert!(read(&mut &b""[..], |_| Ok(()))
            .map(|_| ())
            .unwrap_err()
            .contains("end-of-file"));
        assert!(read(&mut &b"\x93NUMPX\x01\x00"[..], |_| Ok(()))
            .map(|_| ())
            .unwrap_err()
            .contains("magic mismatch"));
    }
}
