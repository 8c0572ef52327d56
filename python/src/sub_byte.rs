//! Sub-byte tensors (`i4`, `si4`, `ui4`, `i2`: element widths that are not
//! whole bytes, packed as IREE packs them, `irvm_hal::subbyte`) between
//! Python and the VM. numpy has no dtype for them, so:
//!
//! - a result comes out as its elements unpacked one per byte, a copy
//!   (writes to it do not reach the VM's buffer): `int8` for signless and
//!   signed types (sign-extended, as IREE's tools print them), `uint8` for
//!   unsigned and opaque types and any other (their bits), `bool` for a
//!   1-bit integer; wider sub-byte types (`i12`) in the next power-of-two
//!   integer width. The array's exporter keeps the element type and the
//!   packed bytes (over the VM's buffer) for `irvm.compat`. They stay so
//!   with ml_dtypes installed (not its `int4`, `uint4`...): a result's
//!   dtype does not change with an optional package, numpy's own integers
//!   hold every value and work with every numpy function, and
//!   `.astype(ml_dtypes.int4)` gives the other form when it is wanted.
//! - an argument declared sub-byte takes an integer (or bool) array of one
//!   element per item, of the declared shape, each element checked against
//!   the type's range (signless `i4` in [-8, 15], as IREE bounds `i8` by
//!   [-128, 255]; `si4` [-8, 7]; `ui4` [0, 15]) and packed into a fresh
//!   buffer: the form results come out in reads back. ml_dtypes' sub-byte
//!   integers (`int4`, `uint4`, `int2`, `uint2`, `int1`, `uint1`) are such
//!   arrays too, each element the low bits of its byte (`widen_in_place`),
//!   for a sub-byte tensor only (not for `i8`: `ml_dtypes::as_bits`).
//! - `_packed_view` makes a buffer view of packed bytes as given
//!   (`irvm.compat`'s `HalBufferView(buffer, [4], INT_4)`).

use pyo3::prelude::*;

use irvm::{Buffer, HostRef, Ref, StatusCode};
use irvm_hal::{numerical, shape_text, subbyte, type_names, BufferView, ElementType, HalBuffer};

use crate::errors::{from_trap, vm_error};
use crate::results::{array_over, Exported, OpaqueRef};

/// How the elements of a sub-byte type `t` are held unpacked: the
/// struct-module format, bytes per element, and whether they are
/// sign-extended.
fn unpacked_form(t: ElementType) -> (&'static str, usize, bool) {
    let integer = t.numerical() & 0xF0 == numerical::INTEGER;
    if integer && t.bits() == 1 {
        return ("?", 1, false);
    }
    let signed = matches!(t.numerical(), numerical::INTEGER | numerical::SIGNED);
    let size = t.byte_size().next_power_of_two();
    let format = match (signed, size) {
        (true, 1) => "b",
        (true, 2) => "h",
        (true, 4) => "i",
        (true, _) => "q",
        (false, 1) => "B",
        (false, 2) => "H",
        (false, 4) => "I",
        (false, _) => "Q",
    };
    (format, size, signed)
}

/// The elements of `shape` (checked).
fn element_count(shape: &[i64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| {
        u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    })
}

/// A sub-byte buffer view result as a numpy array of its elements, one per
/// byte (see the module's doc); never reads past `buffer`.
pub fn unpacked_result(
    py: Python<'_>,
    buffer: &HalBuffer,
    shape: &[i64],
    t: ElementType,
) -> PyResult<Py<PyAny>> {
    let what = shape_text(shape, t);
    let Some(count) = element_count(shape) else {
        return Err(vm_error(
            py,
            StatusCode::InvalidArgument,
            &format!("a result has an invalid shape {shape:?}"),
        ));
    };
    if t.bits() > subbyte::MAX_BITS {
        return Err(vm_error(
            py,
            StatusCode::Unimplemented,
            &format!(
                "a {what} result cannot be unpacked: its {}-bit elements are wider than 64 bits",
                t.bits()
            ),
        ));
    }
    let need = irvm_hal::view_byte_size(shape, t).map_err(|e| from_trap(py, &e))?;
    if buffer.length < need {
        return Err(vm_error(
            py,
            StatusCode::OutOfRange,
            &format!(
                "a result's {}-byte buffer is shorter than its {what} shape needs ({need} bytes packed)",
                buffer.length
            ),
        ));
    }
    let (format, size, signed) = unpacked_form(t);
    let unpacked_len = count
        .checked_mul(size as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            vm_error(
                py,
                StatusCode::ResourceExhausted,
                &format!("a {what} result is too large to unpack"),
            )
        })?;
    let packed_len = i64::try_from(need).map_err(|_| {
        vm_error(
            py,
            StatusCode::OutOfRange,
            &format!("a {what} result is too large to map"),
        )
    })?;
    let packed = array_over(
        py,
        buffer,
        &[packed_len],
        ElementType::new(numerical::UNSIGNED, 8),
    )?;
    let storage = buffer
        .storage
        .buffer("a result's buffer")
        .map_err(|e| from_trap(py, &e))?;
    let bits = t.bits();
    let unpacked = storage.with_bytes(|all| {
        let start = usize::try_from(buffer.offset).ok()?;
        let bytes = all.get(start..start.checked_add(usize::try_from(need).ok()?)?)?;
        subbyte::unpack_into(bits, count, bytes, signed, size)
    });
    let Some(unpacked) = unpacked else {
        return Err(vm_error(
            py,
            StatusCode::OutOfRange,
            &format!("a {what} result's bytes lie outside its buffer"),
        ));
    };
    let copy = std::sync::Arc::new(Buffer::from_vec(unpacked));
    let ptr = Buffer::with_raw_parts(&[&*copy], |parts| parts[0].ptr as usize)
        .map_err(|e| from_trap(py, &e))?;
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let array = Exported {
        storage: copy,
        ptr,
        len: unpacked_len,
        readonly: false,
        format,
        itemsize: size,
        shape: &dims,
        element_type: t,
        packed: Some(packed),
    }
    .into_array(py)?;
    Ok(array.unbind())
}

/// The range of values an element of sub-byte type `want` takes from
/// Python: signless integers both signed and unsigned (`i4` in [-8, 15]),
/// signed ones signed, anything else its bits unsigned.
fn range_of(want: ElementType) -> (i128, i128) {
    let bits = want.bits().min(subbyte::MAX_BITS);
    let half = 1i128 << (bits - 1);
    match want.numerical() {
        numerical::INTEGER => (-half, 2 * half - 1),
        numerical::SIGNED => (-half, half - 1),
        _ => (0, 2 * half - 1),
    }
}

/// Replaces each byte of `items` by the value of its low `bits` bits
/// (`bits` below 8), sign-extended when `signed`: ml_dtypes' `int4`
/// holds -3 as `0x0D` and reads only those bits, whatever the others.
pub fn widen_in_place(items: &mut [u8], bits: u32, signed: bool) {
    let bits = bits.clamp(1, 8);
    let unused = 8 - bits;
    for item in items {
        *item = if signed {
            (((*item << unused) as i8) >> unused) as u8
        } else {
            (*item << unused) >> unused
        };
    }
}

/// Packs `count` elements, each `itemsize` bytes little-endian in
/// `elements` (signed when `signed`), as `want` elements; the index and
/// value of the first element out of `want`'s range when one is.
pub fn pack(
    elements: &[u8],
    itemsize: usize,
    signed: bool,
    want: ElementType,
    count: u64,
) -> Result<Vec<u8>, String> {
    let bits = want.bits();
    if bits == 0 || bits > subbyte::MAX_BITS || !(1..=8).contains(&itemsize) {
        return Err(format!(
            "{}-bit elements cannot be packed from {itemsize}-byte items",
            bits
        ));
    }
    let need = want
        .packed_byte_count(count)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{count} {} elements are too many", want.name()))?;
    let (lo, hi) = range_of(want);
    let mut out = vec![0u8; need];
    for (k, item) in elements
        .chunks_exact(itemsize)
        .take(count as usize)
        .enumerate()
    {
        let mut word = [0u8; 8];
        word[..itemsize].copy_from_slice(item);
        let raw = u64::from_le_bytes(word);
        let value = if signed {
            let unused = 64 - 8 * itemsize as u32;
            i128::from(((raw << unused) as i64) >> unused)
        } else {
            i128::from(raw)
        };
        if !(lo..=hi).contains(&value) {
            return Err(format!(
                "element {k} ({value}) does not fit in {} (range [{lo}, {hi}])",
                want.name()
            ));
        }
        if !subbyte::set(&mut out, bits, k as u64, value as u64) {
            return Err(format!("element {k} lies past the packed bytes"));
        }
    }
    Ok(out)
}

/// A `!hal.buffer_view` of `shape` and `element_type` over a copy of the
/// first bytes of `data` (anything with the buffer protocol): its packed
/// bytes as given, for `irvm.compat`'s buffer views of types numpy has no
/// dtype for. ValueError when `data` is shorter than the view needs.
#[pyfunction]
pub fn _packed_view(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    shape: Vec<i64>,
    element_type: u32,
) -> PyResult<OpaqueRef> {
    let t = ElementType(element_type);
    let need = irvm_hal::view_byte_size(&shape, t).map_err(|e| from_trap(py, &e))?;
    let bytes: Vec<u8> = py
        .import("builtins")?
        .getattr("bytes")?
        .call1((data,))?
        .extract()?;
    let need = usize::try_from(need).unwrap_or(usize::MAX);
    if bytes.len() < need {
        return Err(vm_error(
            py,
            StatusCode::OutOfRange,
            &format!(
                "a {} buffer view needs {need} bytes; {} given",
                shape_text(&shape, t),
                bytes.len()
            ),
        ));
    }
    let storage = Buffer::from_vec(bytes[..need].to_vec());
    let hal = HalBuffer::over(Ref::from(storage)).map_err(|e| from_trap(py, &e))?;
    let view = BufferView {
        buffer: HostRef::new(type_names::BUFFER, hal),
        shape,
        element_type: t,
        encoding: 1,
    };
    let value = view.into_value();
    match value {
        irvm::Value::Ref(r) => Ok(OpaqueRef { value: r }),
        _ => Err(vm_error(
            py,
            StatusCode::Internal,
            "a buffer view is not a reference",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_pack_as_iree_packs_them_and_out_of_range_ones_are_named() {
        let i4 = ElementType::new(numerical::INTEGER, 4);
        let elements = [1u8, 2, 4, (-4i8) as u8];
        assert_eq!(pack(&elements, 1, true, i4, 4), Ok(vec![0x21, 0xC4]));
        let err = pack(&[16u8], 1, false, i4, 1).unwrap_err();
        assert!(err.contains("element 0 (16)"), "{err}");
        let si4 = ElementType::new(numerical::SIGNED, 4);
        assert!(pack(&[8u8], 1, false, si4, 1).is_err());
        assert_eq!(unpacked_form(i4), ("b", 1, true));
        let mut items = [0x0Du8, 0xF3, 0x08, 0x07];
        widen_in_place(&mut items, 4, true);
        assert_eq!(items, [(-3i8) as u8, 3, (-8i8) as u8, 7]);
        let mut items = [0xFDu8, 0x13];
        widen_in_place(&mut items, 4, false);
        assert_eq!(items, [13, 3]);
        assert_eq!(
            unpacked_form(ElementType::new(numerical::UNSIGNED, 4)),
            ("B", 1, false)
        );
        assert_eq!(
            unpacked_form(ElementType::new(numerical::INTEGER, 1)),
            ("?", 1, false)
        );
    }
}
