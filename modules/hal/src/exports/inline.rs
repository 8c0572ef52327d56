//! The `hal_inline` and `hal_loader` modules: what a program compiled with
//! `--iree-execution-model=inline-dynamic` imports instead of `hal`
//! (IREE's `runtime/src/iree/modules/hal/inline` and `.../loader`). There
//! is no device, queue or command buffer: buffers are allocated and
//! wrapped directly, and executables are loaded and dispatched at once, on
//! the calling thread. The buffer and buffer-view objects are the `hal`
//! module's, so the exports they share with it are its own.

use irvm::{Ref, StatusCode, Trap, Value};

use super::{
    buffer_length, buffer_subspan, buffer_view_assert, buffer_view_buffer, buffer_view_create,
    buffer_view_dim, buffer_view_element_type, buffer_view_encoding_type, buffer_view_rank,
    buffer_view_trace, executable_lookup_function, obj, one, Args, ExportFn, ExportResults,
    HalState,
};
use crate::executable::{Bindings, BoundRange, Dispatch, Executable};
use crate::objects::{hal_types, type_names, Allocator, HalBuffer};
use irvm::HostRef;

/// Version of the `hal_inline` module (iree-compile 3.13 asks for at least 0).
pub const HAL_INLINE_VERSION: u32 = 0;
/// Version of the `hal_loader` module (iree-compile 3.13 asks for at least 1).
pub const HAL_LOADER_VERSION: u32 = 1;

/// `hal_inline`'s exports, `(name, calling convention, implementation)`,
/// sorted by name as IREE's table is.
pub const INLINE_EXPORTS: &[(&str, &str, ExportFn)] = &[
    ("buffer.allocate", "0iI_rr", buffer_allocate),
    (
        "buffer.allocate.initialized",
        "0irII_rr",
        buffer_allocate_initialized,
    ),
    ("buffer.length", "0r_I", buffer_length),
    ("buffer.storage", "0r_r", buffer_storage),
    ("buffer.subspan", "0rII_r", buffer_subspan),
    ("buffer.wrap", "0rII_r", buffer_wrap),
    ("buffer_view.assert", "0rriiCID_v", buffer_view_assert),
    ("buffer_view.buffer", "0r_r", buffer_view_buffer),
    ("buffer_view.create", "0rIIiiCID_r", buffer_view_create),
    ("buffer_view.dim", "0ri_I", buffer_view_dim),
    ("buffer_view.element_type", "0r_i", buffer_view_element_type),
    (
        "buffer_view.encoding_type",
        "0r_i",
        buffer_view_encoding_type,
    ),
    ("buffer_view.rank", "0r_i", buffer_view_rank),
    ("buffer_view.trace", "0rCrD_v", buffer_view_trace),
    ("device.query.i64", "0rr_iI", device_query_i64),
];

/// `hal_loader`'s exports, sorted by name.
pub const LOADER_EXPORTS: &[(&str, &str, ExportFn)] = &[
    (
        "executable.dispatch",
        "0rIiiiCiDCrIID_v",
        executable_dispatch,
    ),
    ("executable.load", "0rrr_r", executable_load),
    (
        "executable.lookup.function",
        "0rr_I",
        executable_lookup_function,
    ),
    ("executable.query_support", "0r_i", executable_query_support),
];

/// A new buffer and its storage (`!hal.buffer`, `!vm.buffer`).
fn buffer_and_storage(buffer: HalBuffer) -> ExportResults {
    let storage = Value::Ref(buffer.storage.clone());
    ExportResults::two(obj(&hal_types::BUFFER, buffer), storage)
}

fn buffer_allocate(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let _alignment = a.i32()?;
    let size = a.i64()?;
    let buffer = Allocator::new()
        .allocate(size, &state.resources)
        .map_err(|t| a.error(t.code, t.message))?;
    Ok(buffer_and_storage(buffer))
}

fn buffer_allocate_initialized(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let _alignment = a.i32()?;
    let source = a.vm_buffer()?.clone();
    let offset = a.offset()?;
    let length = a.i64()?;
    let bytes = HalBuffer::over(source)?
        .subspan(offset, length)
        .and_then(|s| s.to_vec())
        .map_err(|t| a.error(t.code, format!("initial data: {}", t.message)))?;
    let buffer = Allocator::new()
        .allocate(bytes.len() as i64, &state.resources)
        .map_err(|t| a.error(t.code, t.message))?;
    buffer.with_bytes_mut(|b| b.copy_from_slice(&bytes))?;
    Ok(buffer_and_storage(buffer))
}

fn buffer_storage(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let buffer = a.buffer()?;
    // The bytes of this buffer only: its storage, or a view of its range.
    let storage = buffer
        .vm_view(0, -1)
        .map_err(|t| a.error(t.code, t.message))?;
    one(Value::Ref(storage))
}

fn buffer_wrap(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let source = a.vm_buffer()?.clone();
    let offset = a.offset()?;
    let length = a.i64()?;
    let buffer = HalBuffer::over(source)?
        .subspan(offset, length)
        .map_err(|t| a.error(t.code, format!("wrap: {}", t.message)))?;
    one(obj(&hal_types::BUFFER, buffer))
}

/// Only the `hal.cpu` category is known (IREE's inline module answers no
/// other: there is no device to ask about).
fn device_query_i64(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let category = a.string()?;
    let key = a.string()?;
    let known = (category == "hal.cpu")
        .then(|| state.device.query_i64(&category, &key))
        .flatten();
    Ok(match known {
        Some(v) => ExportResults::two(Value::I32(1), Value::I64(v)),
        None => ExportResults::two(Value::I32(0), Value::I64(0)),
    })
}

fn executable_query_support(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let format = a.string()?;
    one(i32::from(crate::executable::supports_format(
        &state.device.config,
        &format,
    )))
}

fn executable_load(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let format = a.string()?;
    let data = a.vm_buffer()?.buffer("executable data")?.to_vec();
    let constants = super::executable_constants(a)?;
    let config = state.device.config.clone();
    let executable = Executable::load(&format, data, &constants, state.resources.clone(), &config)
        .map_err(|t| a.error(t.code, t.message))?;
    one(obj(&hal_types::EXECUTABLE, executable))
}

fn executable_dispatch(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    // (Declared first: the dispatch's borrows of it end before it drops.)
    let location = state.resources.call_site().map(|l| l.to_string());
    let executable: HostRef<Executable> = a.object(type_names::EXECUTABLE)?;
    let function = a.i64()?;
    let workgroups = [a.i32()? as u32, a.i32()? as u32, a.i32()? as u32];
    let n = a.count()?;
    let constants = (0..n)
        .map(|_| a.i32().map(|v| v as u32))
        .collect::<Result<Vec<_>, _>>()?;
    let n = a.count()?;
    if n > super::MAX_DISPATCH_BINDINGS {
        return Err(a.error(
            StatusCode::OutOfRange,
            format!("binding count {n} > {}", super::MAX_DISPATCH_BINDINGS),
        ));
    }
    // The bound ranges, held here: the dispatch borrows them.
    let mut ranges: Vec<(Ref, u64, u64)> = Vec::with_capacity(n);
    for _ in 0..n {
        let buffer = a.vm_buffer()?.clone();
        let offset = a.offset()?;
        let length = a.i64()?;
        // -1: to the end of the buffer.
        let length = match (length, &buffer) {
            (-1, Ref::Buffer(b)) => (b.len() as u64).saturating_sub(offset),
            (l, _) => u64::try_from(l).map_err(|_| {
                a.error(
                    StatusCode::OutOfRange,
                    format!("negative binding length {l}"),
                )
            })?,
        };
        ranges.push((buffer, offset, length));
    }
    let bindings: Bindings = ranges
        .iter()
        .map(|(buffer, offset, length)| BoundRange {
            buffer,
            offset: *offset,
            length: *length,
        })
        .collect();
    // IREE issues the inline HAL's dispatches without flushing denormals
    // (on the calling thread: the modules' device is `local-sync`).
    crate::fpu::keeping_denormals(|| {
        executable.dispatch(Dispatch {
            function,
            workgroups,
            constants: &constants,
            bindings,
            location: location.as_deref(),
        })
    })
    .map_err(|t| a.error(t.code, t.message))?;
    super::none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(
        state: &mut HalState,
        table: &[(&str, &str, ExportFn)],
        name: &str,
        args: &[Value],
    ) -> Result<Vec<Value>, Trap> {
        let (_, _, f) = table.iter().find(|e| e.0 == name).unwrap();
        let mut results = Vec::new();
        f(state, &mut Args::in_module("hal_inline", name, args))?.take_into(&mut results);
        Ok(results)
    }

    #[test]
    fn tables_are_sorted_as_iree_looks_them_up() {
        for table in [INLINE_EXPORTS, LOADER_EXPORTS] {
            let names: Vec<&str> = table.iter().map(|e| e.0).collect();
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(names, sorted);
        }
        assert!(crate::inline_modules_with(crate::DeviceOptions::default()).is_ok());
    }

    #[test]
    fn a_buffer_allocated_inline_is_its_storage_and_wraps_back() {
        let mut state = HalState::new(irvm::ContextResources::detached());
        let made = call(
            &mut state,
            INLINE_EXPORTS,
            "buffer.allocate",
            &[Value::I32(64), Value::I64(16)],
        )
        .unwrap();
        let [buffer, storage] = [made[0].clone(), made[1].clone()];
        let Value::Ref(Ref::Buffer(bytes)) = &storage else {
            panic!("storage is a !vm.buffer: {storage:?}");
        };
        assert_eq!(bytes.len(), 16);
        let length = call(&mut state, INLINE_EXPORTS, "buffer.length", &[buffer]).unwrap();
        assert!(matches!(length[0], Value::I64(16)));
        // A wrap of bytes 4..12 of the storage is 8 bytes long; one past
        // the end is refused.
        let wrapped = call(
            &mut state,
            INLINE_EXPORTS,
            "buffer.wrap",
            &[storage.clone(), Value::I64(4), Value::I64(8)],
        )
        .unwrap();
        let length = call(&mut state, INLINE_EXPORTS, "buffer.length", &wrapped).unwrap();
        assert!(matches!(length[0], Value::I64(8)));
        let err = call(
            &mut state,
            INLINE_EXPORTS,
            "buffer.wrap",
            &[storage, Value::I64(12), Value::I64(8)],
        )
        .unwrap_err();
        assert_eq!(err.code, StatusCode::OutOfRange, "{err}");
    }

    #[test]
    fn the_inline_device_answers_only_cpu_queries() {
        let mut state = HalState::new(irvm::ContextResources::detached());
        let text = |s: &str| Value::Ref(Ref::from(irvm::Buffer::from_vec(s.as_bytes().to_vec())));
        let ask = |state: &mut HalState, category: &str, key: &str| {
            let r = call(
                state,
                INLINE_EXPORTS,
                "device.query.i64",
                &[text(category), text(key)],
            )
            .unwrap();
            matches!(r[0], Value::I32(1))
        };
        // The hal device answers these; the inline module does not.
        assert!(state.device.query_i64("hal.device.id", "local*").is_some());
        assert!(!ask(&mut state, "hal.device.id", "local*"));
        assert!(!ask(
            &mut state,
            "hal.executable.format",
            "vmvx-bytecode-fb"
        ));
    }
}
