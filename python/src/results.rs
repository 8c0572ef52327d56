//! VM results to Python values: buffer views as numpy arrays over the VM's
//! own memory (no copy; the array keeps the buffer alive, so it outlives
//! the module), `i32`/`i64` as `int`, `f32`/`f64` as `float`, lists as
//! lists, null refs as `None`, and other refs as opaque `irvm.Ref` objects
//! that can be passed back.

use std::ffi::{c_int, CString};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

use irvm::{Buffer, Ref, Value};
use irvm_hal::{BufferView, ElementType, HalBuffer};

use crate::errors::from_trap;

/// A VM reference Python cannot look into (a `!hal.device`, a host
/// object): returned as is and accepted back as an argument.
#[pyclass(name = "Ref", module = "irvm", frozen)]
pub struct OpaqueRef {
    /// The reference.
    pub value: Ref,
}

#[pymethods]
impl OpaqueRef {
    fn __repr__(&self) -> String {
        format!("<irvm.Ref {}>", self.value)
    }

    /// The VM type of the referenced object: `vm.list`, `vm.buffer`,
    /// `hal.buffer_view`, a host module's type name.
    #[getter]
    fn type_name(&self) -> String {
        match &self.value {
            Ref::Null => "null".into(),
            Ref::Buffer(_) => "vm.buffer".into(),
            Ref::List(_) => "vm.list".into(),
            Ref::Host(h) => h.type_name().to_string(),
        }
    }

    /// The object as `irvm.load` returns it (a list for a `vm.list`, a
    /// numpy array over a buffer view's memory, this ref otherwise).
    fn _value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_python(py, &Value::Ref(self.value.clone()))
    }

    /// The `vm.buffer` this refers to as a VmBuffer (the same buffer),
    /// else None.
    fn _vm_buffer(&self) -> Option<crate::vm_buffer::VmBuffer> {
        match &self.value {
            Ref::Buffer(b) => Some(crate::vm_buffer::VmBuffer { buffer: b.clone() }),
            _ => None,
        }
    }

    /// A buffer view's HAL element type, else None.
    #[getter]
    fn _element_type(&self) -> Option<u32> {
        self.value
            .downcast::<BufferView>()
            .map(|v| v.element_type.0)
    }

    /// A `hal.buffer`'s length in bytes, else None (`irvm.compat` prints it
    /// as iree.runtime does, `HalBuffer(24)`).
    #[getter]
    fn _byte_length(&self) -> Option<u64> {
        self.value.downcast::<HalBuffer>().map(|b| b.length)
    }

    /// A `hal.fence`'s timepoint count (IREE's: 1 for a created fence,
    /// the joined fences' semaphores for a join), else None
    /// (`irvm.compat` prints a fence as iree.runtime does, `fence(1)`).
    #[getter]
    fn _fence_timepoints(&self) -> Option<usize> {
        self.value
            .downcast::<irvm_hal::Fence>()
            .map(|f| f.timepoint_count())
    }

    /// A `hal.buffer`'s bytes as a flat `uint8` numpy array over the VM's
    /// memory (no copy; the array keeps the buffer alive), else None
    /// (`irvm.compat`'s `HalBuffer` of a buffer a program made).
    fn _hal_buffer_bytes(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(buffer) = self.value.downcast::<HalBuffer>() else {
            return Ok(None);
        };
        let length = i64::try_from(buffer.length).map_err(|_| {
            crate::errors::vm_error(
                py,
                irvm::StatusCode::OutOfRange,
                &format!("a hal.buffer of {} bytes is too long to map", buffer.length),
            )
        })?;
        let bytes = ElementType::new(irvm_hal::numerical::UNSIGNED, 8);
        array_over(py, buffer, &[length], bytes).map(Some)
    }

    /// Whether `other` refers to the same object.
    fn _same(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<OpaqueRef>()
            .is_ok_and(|o| o.get().value.ptr_eq(&self.value))
    }
}

/// Bytes of a VM buffer exported through the buffer protocol with a shape
/// and element format, so that `numpy.asarray` makes an array over them.
/// Holding it holds the buffer.
#[pyclass(name = "_VmBytes", module = "irvm", frozen)]
pub struct VmBytes {
    _storage: std::sync::Arc<Buffer>,
    ptr: usize,
    len: usize,
    readonly: bool,
    format: CString,
    itemsize: isize,
    shape: Vec<isize>,
    strides: Vec<isize>,
    /// The buffer view's element type, as the program gave it (`i32` is
    /// signless: `0x10000020`, which numpy's `int32` cannot say).
    element_type: u32,
    /// For a sub-byte result (these bytes then its elements unpacked, one
    /// per byte, a copy): a `uint8` array over the packed bytes in the
    /// VM's buffer (`irvm.compat` views the result as IREE does).
    packed: Option<Py<PyAny>>,
}

#[pymethods]
impl VmBytes {
    /// The element type of the result these bytes hold (irvm.compat's
    /// `HalBufferView.element_type` of a result).
    #[getter]
    fn _element_type(&self) -> u32 {
        self.element_type
    }

    /// For a sub-byte result: its packed bytes, as a `uint8` array over the
    /// VM's buffer (none for other results).
    #[getter]
    fn _packed(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.packed.as_ref().map(|p| p.clone_ref(py))
    }

    /// Fills `view` with these bytes (the buffer protocol's export).
    ///
    /// # Safety
    /// Called by the interpreter with a writable `Py_buffer`.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        if this.readonly && flags & ffi::PyBUF_WRITABLE != 0 {
            return Err(PyBufferError::new_err(
                "the VM buffer is read-only (a constant of the module, or an input used in place)",
            ));
        }
        // SAFETY: `view` is the caller's writable Py_buffer; every pointer
        // stored in it (format, shape, strides, buf) points into `this`
        // (or the buffer it holds), which `obj` keeps alive until the view
        // is released.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = this.ptr as *mut std::ffi::c_void;
            (*view).len = this.len as isize;
            (*view).readonly = this.readonly as c_int;
            (*view).itemsize = this.itemsize;
            (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
                this.format.as_ptr() as *mut std::ffi::c_char
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = this.shape.len() as c_int;
            (*view).shape = if flags & ffi::PyBUF_ND != 0 {
                this.shape.as_ptr() as *mut isize
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                this.strides.as_ptr() as *mut isize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }
}

/// The struct-module format of an element type numpy reads (`<f`, `<i`,
/// `?`); types the buffer protocol has no format for (bf16, the float8
/// types, opaque) are exported as unsigned integers of their width (bf16
/// and float8 arrays are then viewed as ml_dtypes' dtypes).
// Native-order formats (`f`, not `<f`), so that results have numpy's
// plain dtypes (`float32`) and `memoryview.tolist()` works; the hal's
// buffers are little-endian, as is every target irvm builds for.
#[cfg(not(target_endian = "little"))]
compile_error!("irvm's Python results assume a little-endian host");

pub(crate) fn format_of(t: ElementType) -> &'static str {
    use irvm_hal::numerical as n;
    match (t.numerical(), t.byte_size()) {
        (n::BOOLEAN, 1) => "?",
        (n::INTEGER, _) if t.bits() == 1 => "?",
        (n::INTEGER | n::SIGNED, 1) => "b",
        (n::INTEGER | n::SIGNED, 2) => "h",
        (n::INTEGER | n::SIGNED, 4) => "i",
        (n::INTEGER | n::SIGNED, 8) => "q",
        (n::FLOAT_IEEE, 2) => "e",
        (n::FLOAT_IEEE, 4) => "f",
        (n::FLOAT_IEEE, 8) => "d",
        (n::FLOAT_COMPLEX, 8) => "Zf",
        (n::FLOAT_COMPLEX, 16) => "Zd",
        (_, 1) => "B",
        (_, 2) => "H",
        (_, 4) => "I",
        (_, 8) => "Q",
        _ => "B",
    }
}

static AS_ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `numpy.asarray`, looked up once.
fn as_array(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    Ok(AS_ARRAY
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("numpy")?.getattr("asarray")?.unbind())
        })?
        .bind(py))
}

/// A numpy array over `bytes` (a HAL buffer's range) with `shape` and
/// element type `t` (byte-aligned: sub-byte views go through
/// `sub_byte::unpacked_result`).
pub(crate) fn array_over(
    py: Python<'_>,
    buffer: &HalBuffer,
    shape: &[i64],
    t: ElementType,
) -> PyResult<Py<PyAny>> {
    let storage = buffer
        .storage
        .buffer("a result's buffer")
        .map_err(|e| from_trap(py, &e))?
        .clone();
    let itemsize = t.byte_size().max(1);
    let count = shape.iter().try_fold(1u64, |acc, &d| {
        u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    });
    let Some(count) = count.filter(|c| c.checked_mul(itemsize as u64).is_some()) else {
        return Err(crate::errors::vm_error(
            py,
            irvm::StatusCode::InvalidArgument,
            &format!("a result has an invalid shape {shape:?}"),
        ));
    };
    let len = count * itemsize as u64;
    if buffer.length < len {
        return Err(crate::errors::vm_error(
            py,
            irvm::StatusCode::OutOfRange,
            &format!(
                "a result's {}-byte buffer is shorter than its {} shape needs",
                buffer.length,
                irvm_hal::shape_text(shape, t)
            ),
        ));
    }
    // The buffer's bytes do not move while it lives (fixed at creation):
    // the start address is read once, under a short borrow.
    let base = Buffer::with_raw_parts(&[&*storage], |parts| parts[0].ptr as usize)
        .map_err(|e| from_trap(py, &e))?;
    let ptr = base + buffer.offset as usize;
    let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let readonly = !storage.is_mutable();
    let exported = Exported {
        storage,
        ptr,
        len: len as usize,
        readonly,
        format: format_of(t),
        itemsize,
        shape: &shape,
        element_type: t,
        packed: None,
    };
    let array = exported.into_array(py)?;
    Ok(crate::ml_dtypes::view_result(array, t)?.unbind())
}

/// Memory made a numpy array through [`VmBytes`]: `len` bytes at `ptr`
/// inside `storage`, C-contiguous elements of `itemsize` bytes and
/// struct-module `format` in `shape`.
pub(crate) struct Exported<'a> {
    /// The buffer the memory is in (held by the array).
    pub storage: std::sync::Arc<Buffer>,
    /// The first byte.
    pub ptr: usize,
    /// Bytes exported (every element).
    pub len: usize,
    /// Whether numpy may not write the memory.
    pub readonly: bool,
    /// The elements' struct-module format.
    pub format: &'static str,
    /// Bytes per element.
    pub itemsize: usize,
    /// The array's shape.
    pub shape: &'a [isize],
    /// The element type the program gave the result.
    pub element_type: ElementType,
    /// See [`VmBytes`]'s `packed`.
    pub packed: Option<Py<PyAny>>,
}

impl Exported<'_> {
    /// The numpy array over the memory (`numpy.asarray` of a [`VmBytes`]).
    pub(crate) fn into_array(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let mut strides = vec![self.itemsize as isize; self.shape.len()];
        for k in (0..self.shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * self.shape[k + 1].max(1);
        }
        let bytes = VmBytes {
            _storage: self.storage,
            ptr: self.ptr,
            len: self.len,
            readonly: self.readonly,
            format: CString::new(self.format).unwrap_or_default(),
            itemsize: self.itemsize as isize,
            shape: self.shape.to_vec(),
            strides,
            element_type: self.element_type.0,
            packed: self.packed,
        };
        let bytes = Bound::new(py, bytes)?;
        as_array(py)?.call1((bytes,))
    }
}

/// One VM value as a Python value.
pub fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::I32(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::I64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::F32(v) => (*v as f64).into_pyobject(py)?.into_any().unbind(),
        Value::F64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Ref(r) => ref_to_python(py, r)?,
        _ => py.None(),
    })
}

/// A VM list as a Python list, its nested lists too, without recursion:
/// each VM list becomes one Python list, so lists that hold each other
/// (a list holding itself, which a variant list may) come out as Python
/// lists that hold each other, and a chain of any depth converts in
/// constant stack depth (each nesting level recursed before: a list
/// holding itself overflowed the stack and took the process down).
fn lists_to_python(py: Python<'_>, top: &std::sync::Arc<irvm::List>) -> PyResult<Py<PyAny>> {
    let mut made: std::collections::HashMap<*const irvm::List, Bound<'_, PyList>> =
        std::collections::HashMap::new();
    let first = PyList::empty(py);
    made.insert(std::sync::Arc::as_ptr(top), first.clone());
    let mut to_fill = vec![(top.clone(), first.clone())];
    while let Some((list, out)) = to_fill.pop() {
        for i in 0..list.len() {
            let v = list.get(i as u32).map_err(|e| from_trap(py, &e))?;
            match &v {
                Value::Ref(Ref::List(inner)) => {
                    let key = std::sync::Arc::as_ptr(inner);
                    let py_inner = match made.get(&key) {
                        Some(done) => done.clone(),
                        None => {
                            let fresh = PyList::empty(py);
                            made.insert(key, fresh.clone());
                            to_fill.push((inner.clone(), fresh.clone()));
                            fresh
                        }
                    };
                    out.append(py_inner)?;
                }
                other => out.append(to_python(py, other)?)?,
            }
        }
    }
    Ok(first.into_any().unbind())
}

fn ref_to_python(py: Python<'_>, r: &Ref) -> PyResult<Py<PyAny>> {
    match r {
        Ref::Null => Ok(py.None()),
        Ref::List(list) => lists_to_python(py, list),
        Ref::Buffer(b) => {
            let hal = HalBuffer::over(Ref::Buffer(b.clone())).map_err(|e| from_trap(py, &e))?;
            array_over(
                py,
                &hal,
                &[b.len() as i64],
                ElementType::new(irvm_hal::numerical::UNSIGNED, 8),
            )
        }
        Ref::Host(_) => {
            if let Some(view) = r.downcast::<BufferView>() {
                if view.element_type.is_sub_byte() {
                    return crate::sub_byte::unpacked_result(
                        py,
                        &view.buffer,
                        &view.shape,
                        view.element_type,
                    );
                }
                return array_over(py, &view.buffer, &view.shape, view.element_type);
            }
            Ok(Py::new(py, OpaqueRef { value: r.clone() })?.into_any())
        }
    }
}
