//! `irvm._irvm.MappedBytes`: the base of `irvm.compat.MappedMemory`, the
//! bytes of a mapped HAL buffer exported through the buffer protocol as
//! iree.runtime's `MappedMemory` exports them: one dimension of unsigned
//! bytes, read-only (`memoryview(m)`, `np.frombuffer(m, ...)`).
//!
//! The object holds a buffer-protocol view of the array it maps (taken
//! when it is made, released when it is freed): the array, and the VM
//! memory at the end of its `base` chain, stay alive and in place while
//! the mapping lives, and a memoryview of the mapping holds the mapping.
//! A memoryview therefore outlives the buffer view it came from without
//! pointing at freed memory.

use std::ffi::c_int;

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;

/// A buffer-protocol view of the mapped object, held until the mapping
/// is freed.
struct HeldView {
    /// The exporter's view (boxed: it does not move while held).
    view: Box<ffi::Py_buffer>,
}

// SAFETY: the view is only read (its `buf` and `len`) and released while
// the GIL is held: `MappedBytes` is made in `new` under the GIL and freed
// by the interpreter's deallocation, also under the GIL. Nothing touches
// it without the GIL, from whichever thread.
unsafe impl Send for HeldView {}
// SAFETY: as for `Send`: every access is under the GIL, which serializes
// them; the view is never written after it is taken.
unsafe impl Sync for HeldView {}

impl Drop for HeldView {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful
        // `PyObject_GetBuffer` and is released exactly once, here; the GIL
        // is held (see the `Send` impl: only the interpreter frees it).
        unsafe { ffi::PyBuffer_Release(&mut *self.view) }
    }
}

/// Read-only bytes of a mapped buffer (subclassed by
/// `irvm.compat.MappedMemory`).
#[pyclass(name = "MappedBytes", module = "irvm._irvm", frozen, subclass)]
pub struct MappedBytes {
    held: HeldView,
}

#[pymethods]
impl MappedBytes {
    /// Maps `array`'s bytes (any C-contiguous object with the buffer
    /// protocol), keeping it alive and in place until this object is freed.
    #[new]
    fn new(array: &Bound<'_, PyAny>) -> PyResult<MappedBytes> {
        let mut view: Box<ffi::Py_buffer> = Box::new(
            // SAFETY: Py_buffer is a plain C struct; all-zero is the state
            // PyObject_GetBuffer expects to fill.
            unsafe { std::mem::zeroed() },
        );
        // SAFETY: `array` is a live object (borrowed under the GIL) and
        // `view` a writable Py_buffer; PyBUF_SIMPLE asks for contiguous
        // bytes, which the exporter refuses (an error set) when it has
        // none to give.
        let rc = unsafe { ffi::PyObject_GetBuffer(array.as_ptr(), &mut *view, ffi::PyBUF_SIMPLE) };
        if rc != 0 {
            return Err(PyErr::take(array.py()).unwrap_or_else(|| {
                PyTypeError::new_err(format!(
                    "MappedMemory: {} has no contiguous bytes to map",
                    array
                        .get_type()
                        .name()
                        .map_or_else(|_| "object".into(), |n| n.to_string())
                ))
            }));
        }
        Ok(MappedBytes {
            held: HeldView { view },
        })
    }

    /// Exports the mapped bytes (the buffer protocol): one dimension of
    /// unsigned bytes, read-only, as iree.runtime's `MappedMemory`.
    ///
    /// # Safety
    /// Called by the interpreter with a writable `Py_buffer`.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if flags & ffi::PyBUF_WRITABLE != 0 {
            return Err(PyBufferError::new_err("mapped memory is read-only"));
        }
        let this = slf.get();
        let buf = this.held.view.buf;
        let len = this.held.view.len;
        // SAFETY: `view` is the caller's writable Py_buffer. `buf` points
        // at `len` bytes of the mapped object, which the held view keeps
        // alive and in place while this object lives; `obj` takes a
        // reference to this object, so it lives until the caller releases
        // the view. The bytes are exported read-only; the format string is
        // static.
        unsafe { crate::byte_view::fill(view, slf.clone().into_any(), buf, len, true, flags) };
        Ok(())
    }
}
