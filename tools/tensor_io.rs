//! Tensor I/O for the commands that run code, as iree-run-module does it:
//! the `hal` module registered automatically for programs that import it,
//! `--input=2x3xf32=1,2,3,4,5,6` for `!hal.buffer_view` arguments, and
//! buffer-view results printed as `result[i]: hal.buffer_view` and the
//! tensor on the next line.

use std::sync::OnceLock;

use irvm::{Context, Module, Value};

use crate::hal;

/// The limits of the `hal` module this process registers (the command's
/// `--fuel`, `--timeout`, `--max-buffer-bytes` and `--max-memory-bytes`
/// also bound dispatches and hal allocations).
fn dispatch_limits() -> &'static hal::SharedLimits {
    static LIMITS: OnceLock<hal::SharedLimits> = OnceLock::new();
    LIMITS.get_or_init(Default::default)
}

/// Applies the command's limits to dispatches and hal allocations.
pub fn limit_dispatches(limits: hal::DispatchLimits) {
    *dispatch_limits().lock().unwrap_or_else(|e| e.into_inner()) = limits;
}

/// Whether `module` needs the `hal` module (it declares the dependency,
/// as iree-compile output does, or imports `hal.*` functions, as
/// hand-assembled modules may).
pub fn needs_hal(module: &Module) -> bool {
    module.dependencies().iter().any(|d| d.name == "hal")
        || module
            .imports()
            .iter()
            .any(|i| i.full_name.starts_with("hal."))
}

/// Registers the `hal` module in `ctx` unless a module named `hal` is
/// already there.
pub fn ensure_hal(ctx: &mut Context) -> Result<(), String> {
    if ctx.module_names().contains(&"hal") {
        return Ok(());
    }
    let module = hal::hal_module_with_limits(dispatch_limits().clone())
        .map_err(|e| format!("INTERNAL; building the hal module: {e}"))?;
    ctx.register_host_module(&module).map_err(|e| e.to_string())
}

/// Parses a reference-typed `--input` as a buffer view
/// (`4x8xf32=1`, `2x2xi32=[1 2][3 4]`, `f32=0.5`).
pub fn parse_buffer_view_input(text: &str) -> Result<Value, String> {
    hal::parse_buffer_view(text)
        .map(hal::BufferView::into_value)
        .map_err(|t| {
            format!(
                "{}; parsing input `{text}` as a buffer view: {}",
                t.code, t.message
            )
        })
}

/// iree-run-module's result flags: where results go and what they are
/// compared against.
#[derive(clap::Args, Clone, Debug)]
pub struct ResultArgs {
    /// Where each result goes, in order: `-` (stdout), `@file.npy` or
    /// `+file.npy` (write or append NumPy), `@file.bin`/`+file.bin` (raw
    /// bytes), or empty to skip it.
    #[arg(long = "output", allow_hyphen_values = true)]
    outputs: Vec<String>,
    /// Most elements of each printed tensor (`...` marks the cut).
    #[arg(long = "output_max_element_count", default_value_t = hal::DEFAULT_MAX_ELEMENTS)]
    max_elements: usize,
    /// The expected value of each result (`3xf32=1,2,3`); compared instead
    /// of printing; a mismatch exits with status 1.
    #[arg(long = "expected_output", allow_hyphen_values = true)]
    expected: Vec<String>,
    /// Absolute tolerance for f16 in approximate mode.
    #[arg(long = "expected_f16_threshold", default_value_t = 0.001)]
    f16_threshold: f64,
    /// Absolute tolerance for bf16 in approximate mode.
    #[arg(long = "expected_bf16_threshold", default_value_t = 0.01)]
    bf16_threshold: f64,
    /// Absolute tolerance for f32 in approximate mode.
    #[arg(long = "expected_f32_threshold", default_value_t = 0.0001)]
    f32_threshold: f64,
    /// Absolute tolerance for f64 in approximate mode.
    #[arg(long = "expected_f64_threshold", default_value_t = 0.0001)]
    f64_threshold: f64,
    /// Relative tolerance in approximate mode.
    #[arg(long = "expected_rtol", default_value_t = 1e-5)]
    rtol: f64,
    /// `approximate` (|actual - expected| <= atol + rtol * |expected|, NaN
    /// equals NaN) or `exact` (byte equality).
    #[arg(long = "equality_mode", default_value = "approximate")]
    equality_mode: String,
}

/// What became of the results.
pub enum Outcome {
    /// Printed, written or matched.
    Done,
    /// `--expected_output` did not match (exit status 1).
    Mismatch,
}

impl ResultArgs {
    /// Prints, writes or checks `results` as the flags say; `plain`
    /// formats a result that is not a buffer view (`i32=5`, printed as
    /// `result[i]: i32=5`).
    pub fn emit(
        &self,
        results: &[Value],
        plain: impl Fn(&Value) -> Result<String, String>,
    ) -> Result<Outcome, String> {
        if !self.expected.is_empty() {
            return self.compare(results);
        }
        if self.outputs.is_empty() {
            for (i, v) in results.iter().enumerate() {
                match hal::BufferView::from_value(v) {
                    Some(view) => {
                        let text = self.format(view, i)?;
                        outln!("result[{i}]: hal.buffer_view\n{text}");
                    }
                    None => outln!("result[{i}]: {}", plain(v)?),
                }
            }
            return Ok(Outcome::Done);
        }
        if self.outputs.len() != results.len() {
            return Err(format!(
                "OUT_OF_RANGE; {} outputs specified but the provided variant list only has {} \
                 elements; outputting results",
                self.outputs.len(),
                results.len()
            ));
        }
        for (i, (target, v)) in self.outputs.iter().zip(results).enumerate() {
            self.output(i, target, v, &plain)?;
        }
        Ok(Outcome::Done)
    }

    fn format(&self, view: &hal::BufferView, i: usize) -> Result<String, String> {
        hal::format_buffer_view(view, self.max_elements)
            .map_err(|t| format!("{}; formatting result {i}: {}", t.code, t.message))
    }

    fn output(
        &self,
        i: usize,
        target: &str,
        v: &Value,
        plain: &dyn Fn(&Value) -> Result<String, String>,
    ) -> Result<(), String> {
        if target.is_empty() {
            return Ok(());
        }
        let view = hal::BufferView::from_value(v);
        if target == "-" {
            match view {
                Some(view) => outln!("hal.buffer_view\n{}", self.format(view, i)?),
                None => outln!("{}", plain(v)?),
            }
            return Ok(());
        }
        let (append, path) = match (target.strip_prefix('@'), target.strip_prefix('+')) {
            (Some(p), _) => (false, p),
            (_, Some(p)) => (true, p),
            _ => {
                return Err(format!(
                    "INVALID_ARGUMENT; output `{target}`: expected `-`, `@file` or `+file`"
                ))
            }
        };
        let view = view.ok_or_else(|| {
            format!(
                "UNIMPLEMENTED; output {i} is not a buffer view and cannot be written to `{path}`"
            )
        })?;
        let data = view
            .buffer
            .to_vec()
            .map_err(|t| format!("{}; reading result {i}: {}", t.code, t.message))?;
        let bytes = if path.ends_with(".npy") {
            let mut out = npy_header(view).map_err(|e| format!("{e}; writing `{path}`"))?;
            out.extend_from_slice(&data);
            out
        } else {
            data
        };
        use std::io::Write;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
            .and_then(|mut f| f.write_all(&bytes));
        file.map_err(|e| format!("UNAVAILABLE; writing result {i} to `{path}`: {e}"))
    }

    fn compare(&self, results: &[Value]) -> Result<Outcome, String> {
        if self.expected.len() != results.len() {
            outln!(
                "[FAILED] expected {} list elements but {} provided",
                self.expected.len(),
                results.len()
            );
            return Ok(Outcome::Mismatch);
        }
        let exact = match self.equality_mode.as_str() {
            "exact" => true,
            "approximate" => false,
            other => {
                return Err(format!(
                    "INVALID_ARGUMENT; --equality_mode `{other}`: expected `approximate` or `exact`"
                ))
            }
        };
        let mut all = true;
        for (i, (text, v)) in self.expected.iter().zip(results).enumerate() {
            let want = hal::parse_buffer_view(text).map_err(|t| {
                format!(
                    "{}; {}; parsing expected function outputs",
                    t.code, t.message
                )
            })?;
            let Some(have) = hal::BufferView::from_value(v) else {
                outln!("[FAILED] result[{i}]: expected a buffer view, got {v}");
                all = false;
                continue;
            };
            if let Some(why) = self.mismatch(&want, have, exact)? {
                all = false;
                let expected_text = self.format(&want, i)?;
                outln!(
                    "[FAILED] result[{i}]: {why}; expected that the view is equal to contents of \
                     a view of {}\n  expected:\n{expected_text}\n  actual:\n{}",
                    hal::shape_text(&want.shape, want.element_type),
                    self.format(have, i)?
                );
            }
        }
        if all {
            outln!("[SUCCESS] all function outputs matched their expected values.");
            Ok(Outcome::Done)
        } else {
            Ok(Outcome::Mismatch)
        }
    }

    /// Why `have` does not match `want`, or `None`.
    fn mismatch(
        &self,
        want: &hal::BufferView,
        have: &hal::BufferView,
        exact: bool,
    ) -> Result<Option<String>, String> {
        if want.shape != have.shape || want.element_type != have.element_type {
            return Ok(Some(format!(
                "metadata is {}; expected that the view matches {}",
                hal::shape_text(&have.shape, have.element_type),
                hal::shape_text(&want.shape, want.element_type)
            )));
        }
        let read = |v: &hal::BufferView| {
            v.buffer
                .to_vec()
                .map_err(|t| format!("{}; {}", t.code, t.message))
        };
        let (a, b) = (read(have)?, read(want)?);
        let ty = have.element_type;
        let size = ty.byte_size().max(1);
        let atol = match ty.name().as_str() {
            "f16" => Some(self.f16_threshold),
            "bf16" => Some(self.bf16_threshold),
            "f32" => Some(self.f32_threshold),
            "f64" => Some(self.f64_threshold),
            _ => None,
        };
        for (k, (x, y)) in a.chunks_exact(size).zip(b.chunks_exact(size)).enumerate() {
            let equal = match (exact, atol) {
                (false, Some(atol)) => {
                    let (x, y) = (ty.element_as_f64(x), ty.element_as_f64(y));
                    (x.is_nan() && y.is_nan()) || (x - y).abs() <= atol + self.rtol * y.abs()
                }
                _ => x == y,
            };
            if !equal {
                return Ok(Some(format!(
                    "element at index {k} ({}) does not match the expected ({})",
                    ty.format_element(x),
                    ty.format_element(y)
                )));
            }
        }
        Ok(None)
    }
}

/// The NumPy `.npy` (version 1.0) header of `view`: magic, header length,
/// the dict padded with spaces to a multiple of 64 bytes in all.
fn npy_header(view: &hal::BufferView) -> Result<Vec<u8>, String> {
    let descr = match view.element_type.name().as_str() {
        "f16" => "<f2",
        "f32" => "<f4",
        "f64" => "<f8",
        "i1" => "|b1",
        "i8" | "si8" => "|i1",
        "ui8" => "|u1",
        "i16" | "si16" => "<i2",
        "ui16" => "<u2",
        "i32" | "si32" => "<i4",
        "ui32" => "<u4",
        "i64" | "si64" => "<i8",
        "ui64" => "<u8",
        other => {
            return Err(format!(
                "UNIMPLEMENTED; no NumPy type for element type {other}"
            ))
        }
    };
    let shape = match view.shape.as_slice() {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let total = (10 + dict.len() + 1).div_ceil(64) * 64;
    while 10 + dict.len() + 1 < total {
        dict.push(' ');
    }
    dict.push('\n');
    let len = u16::try_from(dict.len()).map_err(|_| "INVALID_ARGUMENT; npy header too long")?;
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    Ok(out)
}
