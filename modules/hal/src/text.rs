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

    /// Bytes of a dense tensor of this type; an error when it does not fit
    /// in memory's address space.
    pub fn byte_length(&self) -> Result<u64, Trap> {
        element_count(&self.shape)?
            .checked_mul(self.element_type.byte_size() as u64)
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
    format_elements(&bytes, shape, view.element_type, &mut budget, &mut out)?;
    Ok(out)
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
    fn long_rows_are_cut() {
        let v = parse_buffer_view("2x3xi32=1 2 3 4 5 6").unwrap();
        assert_eq!(format_buffer_view(&v, 4).unwrap(), "2x3xi32=[1 2 3][4...]");
    }
}
