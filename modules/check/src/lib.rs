//! IREE's `check` module for irvm, built only on irvm's public embedding API
//! and the `hal` module's buffer views.
//!
//! IREE's end-to-end tests assert with the `check` dialect
//! (`check.expect_eq_const(%t, dense<...>)`, `check.expect_almost_eq`,
//! `check.expect_true`, ...), which iree-compile lowers to calls of an
//! optional import module `check` (version 0). [`check_module`] is that
//! module, with the five functions of IREE 3.13
//! (`runtime/src/iree/modules/check/module.cc`), their calling conventions
//! and semantics:
//!
//! | function | convention | passes when |
//! | --- | --- | --- |
//! | `expect_true(i32)` | `0i_v` | the operand is nonzero |
//! | `expect_false(i32)` | `0i_v` | the operand is zero |
//! | `expect_all_true(device, view)` | `0rr_v` | every element is nonzero (i8..i64 signless, signed or unsigned, f32, f64) |
//! | `expect_eq(device, lhs, rhs)` | `0rrr_v` | element types, shapes and bytes are equal |
//! | `expect_almost_eq(device, lhs, rhs, atol, rtol)` | `0rrrff_v` | element types and shapes are equal and every element is within `atol + rtol * abs(rhs)` (NumPy's `isclose`; f16, bf16, f32, f64 and the 8-bit floats) |
//!
//! A check that does not hold is not a trap: as gtest's `EXPECT_*`, it is
//! reported (to the [`FailureSink`] the module was made with, with the text
//! iree-check-module prints) and the program goes on. An element type a
//! function does not take, or a ref that is not a buffer view, is an error
//! of the call (INVALID_ARGUMENT), as in IREE.
//!
//! ```
//! use irvm::{Context, TypeRegistry};
//! use std::sync::{Arc, Mutex};
//!
//! let failures = Arc::new(Mutex::new(Vec::new()));
//! let sink = failures.clone();
//! let check = irvm_check::check_module(Arc::new(move |f: &irvm_check::CheckFailure| {
//!     sink.lock().unwrap().push(f.message.clone());
//! }))?;
//! let mut ctx = Context::new(&TypeRegistry::new());
//! ctx.register_host_module(&check)?;
//! let expect_true = ctx.function("check.expect_true")?;
//! ctx.invoke(&expect_true, &[irvm::Value::I32(0)])?;
//! assert!(failures.lock().unwrap()[0].ends_with("Expected 0 to be nonzero."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compare;
mod gtest_print;

use std::sync::Arc;

use irvm::{NativeModule, StatusCode, Trap, Value};
use irvm_hal::{BufferView, ElementType};

/// Version of the `check` module (programs import version 0 or later).
pub const CHECK_VERSION: u32 = 0;

/// The most elements of each buffer view a failure message prints (IREE's
/// check module formats them with `max_element_count` 1024).
pub const MESSAGE_MAX_ELEMENTS: usize = 1024;

/// A check that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailure {
    /// The function that reported it (`expect_eq`, ...).
    pub function: &'static str,
    /// gtest's text of the failure, as iree-check-module prints it after
    /// the `FILE:LINE: Failure` line (`Failed\nExpected equality of these
    /// values. ...`, or `Value of: operand\n  Actual: false\n...`).
    pub message: String,
}

/// Where the module reports the checks that do not hold, as they happen
/// (called on the thread that runs the program).
pub type FailureSink = Arc<dyn Fn(&CheckFailure) + Send + Sync>;

/// The `check` host module: register it in a context before modules that
/// import `check` (after the `hal` module, whose buffer views its functions
/// take). Each check that does not hold is handed to `on_failure`.
pub fn check_module(on_failure: FailureSink) -> Result<NativeModule<()>, irvm::loader::AbiError> {
    // One reporter per function (each closure owns its copy).
    let reporter = || {
        let sink = on_failure.clone();
        move |function: &'static str, message: String| sink(&CheckFailure { function, message })
    };
    let (r1, r2, r3, r4, r5) = (reporter(), reporter(), reporter(), reporter(), reporter());
    NativeModule::new("check", CHECK_VERSION)
        .func("expect_true", "0i_v", move |args| {
            let operand = i32_arg(args, 0, "expect_true")?;
            if operand == 0 {
                r1(
                    "expect_true",
                    format!(
                        "Value of: operand\n  Actual: false\nExpected: true\nExpected {operand} to be nonzero."
                    ),
                );
            }
            Ok(Vec::new())
        })?
        .func("expect_false", "0i_v", move |args| {
            let operand = i32_arg(args, 0, "expect_false")?;
            if operand != 0 {
                r2(
                    "expect_false",
                    format!(
                        "Value of: operand\n  Actual: true\nExpected: false\nExpected {operand} to be zero."
                    ),
                );
            }
            Ok(Vec::new())
        })?
        .func("expect_all_true", "0rr_v", move |args| {
            let view = view_arg(args, 1, "expect_all_true")?;
            let bytes = view_bytes(view)?;
            if let Some(message) = compare::all_true_failure(&bytes, view.element_type)? {
                r3("expect_all_true", message);
            }
            Ok(Vec::new())
        })?
        .func("expect_eq", "0rrr_v", move |args| {
            let lhs = view_arg(args, 1, "expect_eq")?;
            let rhs = view_arg(args, 2, "expect_eq")?;
            if let Some(message) = expect_eq(lhs, rhs)? {
                r4("expect_eq", message);
            }
            Ok(Vec::new())
        })?
        .func("expect_almost_eq", "0rrrff_v", move |args| {
            let lhs = view_arg(args, 1, "expect_almost_eq")?;
            let rhs = view_arg(args, 2, "expect_almost_eq")?;
            let atol = f32_arg(args, 3, "expect_almost_eq")?;
            let rtol = f32_arg(args, 4, "expect_almost_eq")?;
            if let Some(message) = expect_almost_eq(lhs, rhs, atol, rtol)? {
                r5("expect_almost_eq", message);
            }
            Ok(Vec::new())
        })
}

/// `check.expect_eq`'s message when `lhs` and `rhs` differ in element type,
/// shape or bytes.
fn expect_eq(lhs: &BufferView, rhs: &BufferView) -> Result<Option<String>, Trap> {
    let types_eq = lhs.element_type == rhs.element_type;
    let shapes_eq = lhs.shape == rhs.shape;
    // As IREE: the bytes are compared whatever the types and shapes.
    let contents_eq = view_bytes(lhs)? == view_bytes(rhs)?;
    if types_eq && shapes_eq && contents_eq {
        return Ok(None);
    }
    let mut text = String::from("Failed\nExpected equality of these values.");
    if !types_eq {
        text.push_str(" Element types do not match.");
    }
    if !shapes_eq {
        text.push_str(" Shapes do not match.");
    }
    if !contents_eq {
        text.push_str(" Contents does not match.");
    }
    push_operands(&mut text, lhs, rhs)?;
    Ok(Some(text))
}

/// `check.expect_almost_eq`'s message when `lhs` and `rhs` differ in
/// element type or shape, or an element of `lhs` is not within the
/// tolerances of `rhs`'s.
fn expect_almost_eq(
    lhs: &BufferView,
    rhs: &BufferView,
    atol: f32,
    rtol: f32,
) -> Result<Option<String>, Trap> {
    let types_eq = lhs.element_type == rhs.element_type;
    let shapes_eq = lhs.shape == rhs.shape;
    // The contents are compared only when they can be.
    let mismatch = if types_eq && shapes_eq {
        compare::first_not_close(
            &view_bytes(lhs)?,
            &view_bytes(rhs)?,
            lhs.element_type,
            atol,
            rtol,
        )?
    } else {
        None
    };
    if types_eq && shapes_eq && mismatch.is_none() {
        return Ok(None);
    }
    let mut text = String::from("Failed\nExpected near equality of these values.");
    if !types_eq {
        text.push_str(" Element types do not match.");
    }
    if !shapes_eq {
        text.push_str(" Shapes do not match.");
    }
    if let Some(m) = mismatch {
        text.push_str(&format!(
            " Contents does not match to tolerance parameters atol={}, rtol={}. The first \
             failure occurs at index {} as the lhs value {} differs from the rhs value {} by {}.",
            gtest_print::stream_f64(f64::from(atol)),
            gtest_print::stream_f64(f64::from(rtol)),
            m.index,
            gtest_print::stream_f64(m.lhs),
            gtest_print::stream_f64(m.rhs),
            gtest_print::scientific_3(m.rhs - m.lhs),
        ));
    }
    push_operands(&mut text, lhs, rhs)?;
    Ok(Some(text))
}

/// Appends `\n  lhs:\n    <lhs>\n  rhs:\n    <rhs>`, each view as
/// iree-run-module prints it.
fn push_operands(text: &mut String, lhs: &BufferView, rhs: &BufferView) -> Result<(), Trap> {
    text.push_str("\n  lhs:\n    ");
    text.push_str(&irvm_hal::format_buffer_view(lhs, MESSAGE_MAX_ELEMENTS)?);
    text.push_str("\n  rhs:\n    ");
    text.push_str(&irvm_hal::format_buffer_view(rhs, MESSAGE_MAX_ELEMENTS)?);
    Ok(())
}

/// The bytes of `view`: its dense byte length from the start of its buffer
/// (OUT_OF_RANGE when the buffer is shorter).
fn view_bytes(view: &BufferView) -> Result<Vec<u8>, Trap> {
    let length = dense_byte_length(view.element_count()?, view.element_type)?;
    let mut bytes = view.buffer.to_vec()?;
    if (bytes.len() as u64) < length {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "buffer view of {} holds {} bytes, fewer than its {length}",
                irvm_hal::shape_text(&view.shape, view.element_type),
                bytes.len()
            ),
        ));
    }
    bytes.truncate(length as usize);
    Ok(bytes)
}

/// Bytes `count` elements of `element_type` take densely packed (sub-byte
/// types rounded up to whole bytes, as IREE's dense byte count).
fn dense_byte_length(count: u64, element_type: ElementType) -> Result<u64, Trap> {
    count
        .checked_mul(u64::from(element_type.bits()))
        .map(|bits| bits.div_ceil(8))
        .ok_or_else(|| Trap::new(StatusCode::OutOfRange, "buffer view byte length overflows"))
}

/// Argument `index` of `function`, an i32.
fn i32_arg(args: &[Value], index: usize, function: &str) -> Result<i32, Trap> {
    match args.get(index) {
        Some(Value::I32(v)) => Ok(*v),
        _ => Err(bad_argument(function, index, "an i32")),
    }
}

/// Argument `index` of `function`, an f32.
fn f32_arg(args: &[Value], index: usize, function: &str) -> Result<f32, Trap> {
    match args.get(index) {
        Some(Value::F32(v)) => Ok(*v),
        _ => Err(bad_argument(function, index, "an f32")),
    }
}

/// Argument `index` of `function`, a `!hal.buffer_view`.
fn view_arg<'a>(args: &'a [Value], index: usize, function: &str) -> Result<&'a BufferView, Trap> {
    let Some(value) = args.get(index) else {
        return Err(bad_argument(function, index, "a !hal.buffer_view"));
    };
    if value.as_ref().is_none_or(|r| r.is_null()) {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!("check.{function}: argument {index} is a null ref, not a !hal.buffer_view"),
        ));
    }
    BufferView::from_value(value).ok_or_else(|| bad_argument(function, index, "a !hal.buffer_view"))
}

/// INVALID_ARGUMENT: argument `index` of `function` is not `what`.
fn bad_argument(function: &str, index: usize, what: &str) -> Trap {
    Trap::new(
        StatusCode::InvalidArgument,
        format!("check.{function}: argument {index} is not {what}"),
    )
}

/// INVALID_ARGUMENT: `element_type` is not one a function takes (IREE's
/// words).
fn unsupported(element_type: ElementType) -> Trap {
    Trap::new(
        StatusCode::InvalidArgument,
        format!("unsupported element type {}", element_type.name()),
    )
}
