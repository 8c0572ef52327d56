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

/// The `result[i]: ...` text of a buffer-view result, or `None` for other
/// values.
pub fn format_buffer_view_result(index: usize, value: &Value) -> Option<Result<String, String>> {
    let view = hal::BufferView::from_value(value)?;
    Some(
        hal::format_buffer_view(view, hal::DEFAULT_MAX_ELEMENTS)
            .map(|text| format!("result[{index}]: hal.buffer_view\n{text}"))
            .map_err(|t| format!("{}; formatting result {index}: {}", t.code, t.message)),
    )
}
