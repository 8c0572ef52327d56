//! `irvm._irvm.VmBuffer`: a `!vm.buffer` Python can make, read and write
//! through the buffer protocol, pass to functions taking `!vm.buffer` and
//! get back from them (iree.runtime's `VmBuffer`, which `irvm.compat`
//! builds on).

use std::ffi::c_int;
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

use irvm::{Buffer, Ref, BUFFER_ALIGNMENT};

use crate::errors::from_trap;

/// A VM byte buffer. Holding it holds the buffer's bytes, which never
/// move or shrink while the buffer lives: a view exported through the
/// buffer protocol stays valid until released.
#[pyclass(name = "VmBuffer", module = "irvm._irvm", frozen, subclass)]
pub struct VmBuffer {
    /// The buffer.
    pub buffer: Arc<Buffer>,
}

impl VmBuffer {
    /// The buffer as a VM reference (what a function taking `!vm.buffer`
    /// is given).
    pub fn to_ref(&self) -> Ref {
        Ref::Buffer(self.buffer.clone())
    }
}

#[pymethods]
impl VmBuffer {
    /// `length` zeroed bytes, writable unless `mutable` is False, at an
    /// address that is a multiple of `alignment` (a power of two; 0: the
    /// default). irvm aligns every buffer to 64 bytes: a larger alignment
    /// is refused.
    #[new]
    #[pyo3(signature = (length, alignment=None, mutable=true, *, _same_as=None))]
    fn new(
        py: Python<'_>,
        length: &Bound<'_, PyAny>,
        alignment: Option<&Bound<'_, PyAny>>,
        mutable: bool,
        _same_as: Option<PyRef<'_, VmBuffer>>,
    ) -> PyResult<VmBuffer> {
        // A negative or non-int size is a TypeError, as iree.runtime's.
        let size = |v: &Bound<'_, PyAny>, what: &str| {
            v.extract::<usize>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "VmBuffer(): {what} must be a non-negative int, not {v}"
                ))
            })
        };
        let length = size(length, "length")?;
        let alignment = alignment.map_or(Ok(0), |a| size(a, "alignment"))?;
        if let Some(other) = _same_as {
            // Another object over the same buffer (irvm.compat's class for
            // a buffer a function returned).
            return Ok(VmBuffer {
                buffer: other.buffer.clone(),
            });
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            return Err(PyValueError::new_err(format!(
                "Error creating buffer: INVALID_ARGUMENT; alignments must be powers of two (got {alignment})"
            )));
        }
        if alignment > BUFFER_ALIGNMENT {
            return Err(PyValueError::new_err(format!(
                "Error creating buffer: INVALID_ARGUMENT; alignment {alignment} is more than the \
                 {BUFFER_ALIGNMENT} bytes irvm aligns every VM buffer to"
            )));
        }
        // (A size the allocator refuses is RESOURCE_EXHAUSTED either way:
        // a `vec!` of it aborted the process.)
        let buffer = Buffer::new(length)
            .map(|b| if mutable { b } else { b.into_read_only() })
            .map_err(|t| from_trap(py, &t))?;
        Ok(VmBuffer {
            buffer: Arc::new(buffer),
        })
    }

    /// Exports the bytes (the buffer protocol): one dimension of unsigned
    /// bytes, read-only for an immutable buffer.
    ///
    /// # Safety
    /// Called by the interpreter with a writable `Py_buffer`.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        let readonly = !this.buffer.is_mutable();
        if readonly && flags & ffi::PyBUF_WRITABLE != 0 {
            return Err(PyBufferError::new_err("the VmBuffer is not mutable"));
        }
        let len = this.buffer.len();
        // The bytes do not move while the buffer lives (fixed when it is
        // made): the start address is read once, under a short borrow.
        let ptr = Buffer::with_raw_parts(&[&*this.buffer], |parts| parts[0].ptr as usize)
            .map_err(|t| from_trap(slf.py(), &t))?;
        // SAFETY: `view` is the caller's writable Py_buffer. `buf` points
        // at the buffer's `len` bytes, which `obj` (this object, holding
        // the `Arc<Buffer>`) keeps alive and in place until the view is
        // released; the format string is static. Python writing them while
        // a call on another thread uses the same buffer is the caller's
        // promise, as for a writable numpy array passed in place.
        unsafe {
            crate::byte_view::fill(
                view,
                slf.clone().into_any(),
                ptr as *mut std::ffi::c_void,
                len as isize,
                readonly,
                flags,
            )
        };
        Ok(())
    }
}

/// The address of `buffer`'s buffer object (what iree.runtime's repr of a
/// VmBuffer shows, and its hash). A function of the module rather than an
/// attribute: iree.runtime's VmBuffer has no such attribute.
#[pyfunction]
pub fn _vm_buffer_address(buffer: PyRef<'_, VmBuffer>) -> usize {
    Arc::as_ptr(&buffer.buffer) as usize
}

/// Whether `a` and `b` are VmBuffers over the same buffer (a VmBuffer's
/// `==`).
#[pyfunction]
pub fn _vm_buffer_same(a: PyRef<'_, VmBuffer>, b: &Bound<'_, PyAny>) -> bool {
    b.cast::<VmBuffer>()
        .is_ok_and(|o| Arc::ptr_eq(&o.get().buffer, &a.buffer))
}
