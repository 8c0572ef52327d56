//! Filling a `Py_buffer` with one dimension of unsigned bytes: what
//! `VmBuffer` and `MappedBytes` export through the buffer protocol.

use std::ffi::c_int;

use pyo3::ffi;
use pyo3::prelude::*;

/// Fills `view`, the caller's `Py_buffer`, with `len` bytes at `buf` owned
/// by `owner` (one new reference to it goes into `view.obj`, released with
/// the view), in the shape `flags` asks for: format `B` and the shape and
/// strides of one dimension only when requested.
///
/// # Safety
/// `view` must be a writable `Py_buffer` the interpreter passed to
/// `__getbuffer__`; `buf` must point at `len` bytes that `owner` keeps
/// alive and in place until the view is released (and writable when
/// `readonly` is false).
pub(crate) unsafe fn fill(
    view: *mut ffi::Py_buffer,
    owner: Bound<'_, PyAny>,
    buf: *mut std::ffi::c_void,
    len: isize,
    readonly: bool,
    flags: c_int,
) {
    // SAFETY: the caller's contract: `view` is writable, `buf` and `len`
    // describe memory `owner` keeps alive; the format string is static and
    // `shape`/`strides` point into the view itself, which outlives them.
    unsafe {
        (*view).obj = owner.into_ptr();
        (*view).buf = buf;
        (*view).len = len;
        (*view).readonly = c_int::from(readonly);
        (*view).itemsize = 1;
        (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
            c"B".as_ptr() as *mut std::ffi::c_char
        } else {
            std::ptr::null_mut()
        };
        (*view).ndim = 1;
        (*view).shape = if flags & ffi::PyBUF_ND != 0 {
            &raw mut (*view).len
        } else {
            std::ptr::null_mut()
        };
        (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
            &raw mut (*view).itemsize
        } else {
            std::ptr::null_mut()
        };
        (*view).suboffsets = std::ptr::null_mut();
        (*view).internal = std::ptr::null_mut();
    }
}
