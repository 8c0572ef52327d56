//! Tensors as text, the way iree-run-module reads `--input=2x3xf32=1,2,3,4,5,6`
//! and prints results (`4x3xf32=[4.1 3.8 4.3][...]`).

use irvm::{StatusCode, Trap};

use super::element::ElementType;
use super::objects::{element_count, shape_text, BufferView};

/// Default `--output_max_element_count` of iree-run-module.
pub const DEFAULT_MAX_ELEMENTS: usize = 1024;

fn invalid(message: String) -> Trap {
    Trap::new(StatusCode::InvalidArgument, message)
}

/// Parses `2x3xf32=1 2 3 4 5 6` (elements separated by spaces, commas or
/// brackets; one value fills the whole tensor; no value gives zeros).
pub fn parse_buffer_view(text: &str) -> Result<BufferView, Trap> {
    parse_buffer_view_within(text, u64::MAX)
}

/// A tensor's shape and element type, as written before the `=` of an
/// input (`2x3xf32`, `f32`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorType {
    /// Dimensions, outermost first.
    pub shape: Vec<i64>,
    /// Element type.
    pub element_type: ElementType,
}

impl TensorType {
    /// Parses `2x3xf32` (no allocation: the size is only computed).
    pub fn parse(text: &str) -> Result<TensorType, Trap> {
        let (shape_str, type_str) = match text.rfind('x') {
            Some(k) => (&text[..k], &text[k + 1..]),
            None => ("", text),
        };
        let mut shape = Vec::new();
        if !shape_str.is_empty() {
            for dim in shape_str.split('x') {
                let d = dim
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|d| *d >= 0)
                    .ok_or_else(|| invalid(format!("invalid shape dimension '{dim}'")))?;
                shape.push(d);
                if shape.len() > 128 {
                    return Err(Trap::new(
                        StatusCode::ResourceExhausted,
                        "a shape rank over 128 is excessive",
                    ));
                }
            }
        }
        let element_type = ElementType::parse(type_str).map_err(invalid)?;
        Ok(TensorType {
            shape,
            element_type,
        })
    }

    /// Bytes of a dense tensor of this type (sub-byte elements packed, as
    /// IREE sizes a buffer view: `4xi4` is 2 bytes); an error when it does
    /// not fit in memory's address space.
    pub fn byte_length(&self) -> Result<u64, Trap> {
        self.element_type
            .packed_byte_count(element_count(&self.shape)?)
            .filter(|n| usize::try_from(*n).is_ok())
            .ok_or_else(|| {
                invalid(format!(
                    "tensor {} is too large",
                    shape_text(&self.shape, self.element_type)
                ))
            })
    }
}

/// [`parse_buffer_view`] refusing, before allocating, a tensor of more
/// than `max_bytes` bytes (RESOURCE_EXHAUSTED); memory that cannot be had
/// is an error too, not an abort.
pub fn parse_buffer_view_within(text: &str, max_bytes: u64) -> Result<BufferView, Trap> {
    let value = text.trim();
    let value = value.strip_prefix('"').unwrap_or(value);
    let value = value.strip_suffix('"').unwrap_or(value);
    if value.is_empty() {
        return Err(invalid("empty string input".into()));
    }
    let (shape_and_type, data) = value.split_once('=').unwrap_or((value, ""));
    let TensorType {
        shape,
        element_type,
    } = TensorType::parse(shape_and_type)?;
    let count = element_count(&shape)?;
    let size = element_type.byte_size();
    let total = TensorType {
        shape: shape.clone(),
        element_type,
    }
    .byte_length()?;
    if total > max_bytes {
        return Err(Trap::new(
            StatusCode::ResourceExhausted,
            format!(
                "a {shape_and_type} tensor takes {total} bytes, over the memory limit of \
                 {max_bytes} bytes"
            ),
        ));
    }
    let tokens: Vec<&str> = data
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|t| !t.is_empty())
        .collect();
    let count = count as usize;
    if element_type.is_sub_byte() {
        return parse_packed(&shape, element_type, &tokens, count, total);
    }
    if tokens.len() > count {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "output data buffer overflow: element_capacity={count} < dst_i={}+",
                count
            ),
        ));
    }
    // Parsed straight into the view's buffer (no second copy of a large
    // input), a splat repeated in place; as the reference, a bad element
    // is reported before too few of them.
    BufferView::written_by(&shape, element_type, |bytes| {
        for (k, token) in tokens.iter().enumerate() {
            element_type
                .parse_element(token, &mut bytes[k * size..(k + 1) * size])
                .map_err(invalid)?;
        }
        if tokens.len() == 1 && count > 1 {
            repeat_first_element(bytes, size);
        } else if !tokens.is_empty() && tokens.len() < count {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "input data string underflow: dst_i={} < element_capacity={count}",
                    tokens.len()
                ),
            ));
        }
        Ok(())
    })
}

/// The elements of a sub-byte tensor (`4xi4`), `total` bytes packed.
/// What IREE reads is read as IREE reads it: `iree_hal_parse_buffer_elements`
/// has no case for these types, so each value is one byte of the packed
/// buffer in two hex digits (`4xi4=21,C4` is 1, 2, 4, -4; the dense byte
/// count of the type per value: 4 hex digits for `i12`), as many values as
/// whole such units fit in the buffer, one value splatted over them, no
/// value zeros. irvm also reads one value per element, in decimal (the
/// form it prints: `4xi4=1,2,4,-4`), where IREE, given more values than
/// units, refuses the input.
fn parse_packed(
    shape: &[i64],
    element_type: ElementType,
    tokens: &[&str],
    count: usize,
    total: u64,
) -> Result<BufferView, Trap> {
    let size = element_type.byte_size();
    let capacity = usize::try_from(total).unwrap_or(usize::MAX) / size;
    let per_element = tokens.len() == count && count > capacity;
    if tokens.len() > capacity && !per_element {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "output data buffer overflow: element_capacity={capacity} < dst_i={capacity}+;                  a {} tensor takes {capacity} packed value(s) of {} hex digits, or {count}                  elements",
                shape_text(shape, element_type),
                size * 2
            ),
        ));
    }
    BufferView::written_by(shape, element_type, |bytes| {
        if per_element {
            let bits = element_type.bits();
            for (k, token) in tokens.iter().enumerate() {
                let value = crate::subbyte::parse(element_type, token).map_err(invalid)?;
                crate::subbyte::set(bytes, bits, k as u64, value);
            }
            return Ok(());
        }
        for (k, token) in tokens.iter().enumerate() {
            element_type
                .parse_element(token, &mut bytes[k * size..(k + 1) * size])
                .map_err(invalid)?;
        }
        if tokens.len() == 1 && capacity > 1 {
            repeat_first_element(&mut bytes[..capacity * size], size);
        } else if !tokens.is_empty() && tokens.len() < capacity {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "input data string underflow: dst_i={} < element_capacity={capacity}",
                    tokens.len()
                ),
            ));
        }
        Ok(())
    })
}

/// Copies the first `size` bytes of `bytes` over the rest, element after
/// element: 64-byte blocks of the pattern (a `memset` when its bytes are
/// all one) where `size` divides 64, so a splat of gigabytes fills at
/// memory speed.
fn repeat_first_element(bytes: &mut [u8], size: usize) {
    if size == 0 || bytes.len() <= size {
        return;
    }
    let (first, rest) = bytes.split_at_mut(size);
    if 64 % size == 0 {
        crate::command::fill_pattern(rest, first);
    } else {
        for chunk in rest.chunks_exact_mut(size) {
            chunk.copy_from_slice(first);
        }
    }
}

/// Prints `view` as iree-run-module does: `4x3xf32=[a b c][d e f]`, at most
/// `max_elements` elements (`...` marks a cut row).
pub fn format_buffer_view(view: &BufferView, max_elements: usize) -> Result<String, Trap> {
    let bytes = view.buffer.to_vec()?;
    let mut out = shape_text(&view.shape, view.element_type);
    out.push('=');
    let mut budget = max_elements;
    let shape: &[i64] = if view.shape.is_empty() {
        &[1]
    } else {
        &view.shape
    };
    if view.element_type.is_sub_byte() {
        let need = crate::objects::view_byte_size(shape, view.element_type)?;
        if (bytes.len() as u64) < need {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "input data underflow: data_length={} < expected={need}",
                    bytes.len()
                ),
            ));
        }
        let mut next = 0u64;
        format_packed(
            &bytes,
            shape,
            view.element_type,
            &mut next,
            &mut budget,
            &mut out,
        )?;
    } else {
        format_elements(&bytes, shape, view.element_type, &mut budget, &mut out)?;
    }
    Ok(out)
}

/// The elements of a sub-byte tensor, unpacked one by one (element `*next`
/// first) and printed by [`crate::subbyte::format`], laid out as
/// [`format_elements`] lays out others. IREE's formatter steps through the
/// buffer one dense byte per element, so it fails on every packed tensor
/// (`OUT_OF_RANGE; printing results`); irvm prints the elements.
fn format_packed(
    data: &[u8],
    shape: &[i64],
    ty: ElementType,
    next: &mut u64,
    budget: &mut usize,
    out: &mut String,
) -> Result<(), Trap> {
    let underflow = || {
        Trap::new(
            StatusCode::OutOfRange,
            format!("input data underflow: data_length={}", data.len()),
        )
    };
    match shape {
        [] => Ok(()),
        [n] => {
            let n = usize::try_from(*n).map_err(|_| underflow())?;
            let count = n.min(*budget);
            *budget -= count;
            for i in 0..count {
                if i > 0 {
                    out.push(' ');
                }
                let raw =
                    crate::subbyte::get(data, ty.bits(), *next + i as u64).ok_or_else(|| {
                        Trap::new(
                            StatusCode::Unimplemented,
                            format!("{}-bit elements cannot be printed", ty.bits()),
                        )
                    })?;
                out.push_str(&crate::subbyte::format(ty, raw));
            }
            *next += n as u64;
            if count < n {
                out.push_str("...");
            }
            Ok(())
        }
        [n, inner @ ..] => {
            let n = usize::try_from(*n).map_err(|_| underflow())?;
            for _ in 0..n {
                out.push('[');
                format_packed(data, inner, ty, next, budget, out)?;
                out.push(']');
            }
            Ok(())
        }
    }
}

fn format_elements(
    data: &[u8],
    shape: &[i64],
    ty: ElementType,
    budget: &mut usize,
    out: &mut String,
) -> Result<(), Trap> {
    let underflow = || {
        Trap::new(
            StatusCode::OutOfRange,
            format!("input data underflow: data_length={}", data.len()),
        )
    };
    let size = ty.byte_size();
    match shape {
        [] => Ok(()),
        [n] => {
            let n = usize::try_from(*n).map_err(|_| underflow())?;
            let count = n.min(*budget);
            if count.checked_mul(size).is_none_or(|b| data.len() < b) {
                return Err(underflow());
            }
            *budget -= count;
            for i in 0..count {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&ty.format_element(&data[i * size..(i + 1) * size]));
            }
            if count < n {
                out.push_str("...");
            }
            Ok(())
        }
        [n, inner @ ..] => {
            let n = usize::try_from(*n).map_err(|_| underflow())?;
            let stride = usize::try_from(element_count(inner)?)
                .ok()
                .and_then(|c| c.checked_mul(size))
                .ok_or_else(underflow)?;
            if stride.checked_mul(n).is_none_or(|b| data.len() < b) {
                return Err(underflow());
            }
            for i in 0..n {
                out.push('[');
                format_elements(&data[i * stride..(i + 1) * stride], inner, ty, budget, out)?;
                out.push(']');
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        format_buffer_view(&parse_buffer_view(text).unwrap(), DEFAULT_MAX_ELEMENTS).unwrap()
    }

    #[test]
    fn inputs_parse_like_iree() {
        assert_eq!(round("2x3xf32=1,2,3,4,5,6"), "2x3xf32=[1 2 3][4 5 6]");
        assert_eq!(round("2x3xi32=[1 2 3][4 5 6]"), "2x3xi32=[1 2 3][4 5 6]");
        assert_eq!(round("2x2xf32=1.5"), "2x2xf32=[1.5 1.5][1.5 1.5]");
        assert_eq!(round("3xi8=1 -2 3"), "3xi8=1 -2 3");
        assert_eq!(round("f32=2.5"), "f32=2.5");
        assert_eq!(round("0x4xf32="), "0x4xf32=");
        assert_eq!(round("2xi64="), "2xi64=0 0");
        assert!(parse_buffer_view("2xf32=1,2,3").is_err());
        assert!(parse_buffer_view("3xf32=1,2").is_err());
        assert!(parse_buffer_view("2xq3=1").is_err());
    }

    #[test]
    fn sub_byte_tensors_are_packed_read_as_iree_reads_them_and_printed_per_element() {
        let bytes = |text: &str| parse_buffer_view(text).unwrap().buffer.to_vec().unwrap();
        // IREE's form: one packed byte per value, two hex digits.
        assert_eq!(bytes("4xi4=21,C4"), [0x21, 0xC4]);
        assert_eq!(bytes("4xi4=1F"), [0x1F, 0x1F]);
        assert_eq!(bytes("4xi4="), [0, 0]);
        assert_eq!(bytes("4xi2=E4"), [0xE4]);
        // irvm's: one decimal value per element.
        assert_eq!(bytes("4xi4=1,2,4,-4"), [0x21, 0xC4]);
        assert_eq!(bytes("3xi4=1,2,-1"), [0x21, 0x0F]);
        assert_eq!(round("4xi4=21,C4"), "4xi4=1 2 4 -4");
        assert_eq!(round("2x2xui4=21,C4"), "2x2xui4=[1 2][4 12]");
        assert_eq!(round("4xi2=0,1,-2,-1"), "4xi2=0 1 -2 -1");
        let v = parse_buffer_view("2x4xi4=1,2,3,4,5,6,7,-8").unwrap();
        assert_eq!(format_buffer_view(&v, 5).unwrap(), "2x4xi4=[1 2 3 4][5...]");
        // As IREE: three values for two bytes overflow, one too few underflows.
        assert!(parse_buffer_view("4xi4=12,34,56").is_err());
        assert!(parse_buffer_view("8xi4=12,34,56").is_err());
        assert!(parse_buffer_view("4xi4=1,2,3,16").is_err());
        // i1 is IREE's 8-bit boolean: one byte per element.
        assert_eq!(bytes("3xi1=01,00,01"), [1, 0, 1]);
    }

    #[test]
    fn long_rows_are_cut() {
        let v = parse_buffer_view("2x3xi32=1 2 3 4 5 6").unwrap();
        assert_eq!(format_buffer_view(&v, 4).unwrap(), "2x3xi32=[1 2 3][4...]");
    }
}
