//! Python values to VM arguments, by the function's signature and its
//! declared tensor types: numpy arrays (anything with the buffer protocol),
//! lists and Python scalars.
//!
//! The zero-copy rule: an array that is C-contiguous, of the declared
//! element type and 64-byte aligned becomes a VM buffer over its own memory
//! (the buffer keeps the array alive): writable when the array is, so a
//! program's writes change it, else read-only; anything else is copied
//! once into a fresh 64-byte-aligned buffer, or, with `copy=False`, refused.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyMemoryView, PyTuple};

use irvm::{Buffer, HostRef, List, Ref, StatusCode, TypeDef, ValType, Value};
use irvm_hal::{type_names, BufferView, ElementType, HalBuffer};

use crate::declaration::{dims_text, Declared};
use crate::errors::vm_error;

/// What an argument is converted for: the function (for messages), the
/// argument's position, its declaration, and the copy policy.
pub struct Slot<'a> {
    /// `module.function`.
    pub function: &'a str,
    /// Position of the argument.
    pub index: usize,
    /// A result of a Python host function (`result 0 of m.f`), not an
    /// argument.
    pub result: bool,
    /// The declared argument, when the module has reflection.
    pub declared: Option<&'a Declared>,
    /// `Some(false)`: refuse to copy; otherwise copy when the rule says so.
    pub copy: Option<bool>,
    /// Most bytes the call's inputs (copied or used in place) may have
    /// together: `max_memory_bytes`.
    pub max_bytes: u64,
    /// Bytes of the call's inputs converted so far (this one's are added).
    pub inputs: &'a Cell<u64>,
    /// An array is passed with its own shape and element type, unchecked
    /// against the declaration (`irvm.compat`'s calls: iree.runtime checks
    /// neither, and leaves them to the program's `hal.buffer_view.assert`).
    pub as_given: bool,
}

impl Slot<'_> {
    fn what(&self) -> String {
        if self.result {
            return format!("result {} of {}", self.index, self.function);
        }
        match self.declared {
            Some(d) => format!(
                "argument {} (%{}: {}) of {}",
                self.index, d.name, d.text, self.function
            ),
            None => format!("argument {} of {}", self.index, self.function),
        }
    }

    fn invalid(&self, py: Python<'_>, message: String) -> PyErr {
        vm_error(
            py,
            StatusCode::InvalidArgument,
            &format!("{}: {message}", self.what()),
        )
    }
}

/// Converts `obj` to a value of type `ty` for `slot`.
pub fn convert(obj: &Bound<'_, PyAny>, ty: ValType, slot: &Slot<'_>) -> PyResult<Value> {
    let py = obj.py();
    match ty {
        ValType::I32 | ValType::I64 => {
            if obj.is_instance_of::<PyFloat>() {
                return Err(slot.invalid(py, "expects an integer, got a float".into()));
            }
            let v: i64 = obj.extract().map_err(|_| {
                slot.invalid(py, format!("expects an integer, got {}", type_name(obj)))
            })?;
            Ok(match ty {
                ValType::I32 => Value::I32(i32::try_from(v).or_else(|_| {
                    // Unsigned 32-bit values pass as their bit pattern.
                    u32::try_from(v)
                        .map(|u| u as i32)
                        .map_err(|_| slot.invalid(py, format!("{v} does not fit in i32")))
                })?),
                _ => Value::I64(v),
            })
        }
        ValType::F32 | ValType::F64 => {
            let v: f64 = obj.extract().map_err(|_| {
                slot.invalid(py, format!("expects a float, got {}", type_name(obj)))
            })?;
            Ok(match ty {
                ValType::F32 => Value::F32(v as f32),
                _ => Value::F64(v),
            })
        }
        ValType::Ref => convert_ref(obj, slot),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".into())
}

fn convert_ref(obj: &Bound<'_, PyAny>, slot: &Slot<'_>) -> PyResult<Value> {
    let py = obj.py();
    if obj.is_none() {
        return Ok(Value::Ref(Ref::Null));
    }
    if let Ok(r) = obj.cast::<crate::results::OpaqueRef>() {
        return Ok(Value::Ref(r.get().value.clone()));
    }
    if let Ok(b) = obj.cast::<crate::vm_buffer::VmBuffer>() {
        return Ok(Value::Ref(b.get().to_ref()));
    }
    let declared = slot.declared.and_then(|d| d.tensor.as_ref());
    let is_sequence = obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>();
    let is_scalar = obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyBool>();
    if is_sequence && declared.is_none() {
        // Not a tensor: a `!vm.list` of the items.
        return list_of(obj, slot).map(Value::Ref);
    }
    if is_sequence || is_scalar {
        // Python data: made into an array of the declared type (a copy by
        // nature, so `copy=False` does not apply).
        let Some((_, element)) = declared else {
            return Err(slot.invalid(
                py,
                "the function declares no tensor type for it; pass a numpy array".into(),
            ));
        };
        let name = numpy_dtype_name(*element).ok_or_else(|| {
            slot.invalid(py, format!("numpy has no dtype for {}", element.name()))
        })?;
        let dtype = match crate::ml_dtypes::dtype(py, *element) {
            Ok(Some(ml)) => ml,
            Ok(None) => pyo3::types::PyString::new(py, name).into_any(),
            Err(e) => return Err(slot.invalid(py, format!("a list or scalar for it: {e}"))),
        };
        let array = python_data_as(obj, &dtype, name, slot)?;
        let copy_allowed = Slot {
            copy: None,
            ..*slot
        };
        return from_buffer(&array, &copy_allowed);
    }
    from_buffer(obj, slot)
}

/// Python data (a list, tuple or scalar) as a numpy array of `dtype`
/// (named `name`), by numpy's `same_kind` casting rule: integers and
/// bools may become floats, floats narrower floats (rounded; bfloat16 and
/// float8 too), but floats never become integers and integers never
/// bools; integers out of `dtype`'s range are refused too. Nothing is
/// truncated silently.
fn python_data_as<'py>(
    obj: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    name: &str,
    slot: &Slot<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let failed = |e: PyErr| slot.invalid(py, format!("cannot be made a {name} array: {e}"));
    let natural = numpy.call_method1("asarray", (obj,)).map_err(failed)?;
    let natural_dtype = natural.getattr("dtype")?;
    let castable = numpy
        .call_method1("can_cast", (&natural_dtype, dtype, "same_kind"))?
        .is_truthy()?;
    if !castable {
        return Err(slot.invalid(
            py,
            format!(
                "{} of {natural_dtype} values cannot be made {name} without losing them (numpy's same_kind casting); pass a {name} array",
                if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
                    "a list"
                } else {
                    "a Python scalar"
                },
            ),
        ));
    }
    let array = natural.call_method1("astype", (dtype,)).map_err(failed)?;
    let integer_kind = |d: &Bound<'_, PyAny>| -> PyResult<bool> {
        Ok(matches!(
            d.getattr("kind")?.extract::<String>()?.as_str(),
            "i" | "u"
        ))
    };
    if integer_kind(&natural_dtype)?
        && integer_kind(&array.getattr("dtype")?)?
        && !natural
            .rich_compare(&array, CompareOp::Eq)?
            .call_method0("all")?
            .is_truthy()?
    {
        return Err(slot.invalid(
            py,
            format!("the values do not all fit in {name} (they would wrap around)"),
        ));
    }
    Ok(array)
}

/// A Python list or tuple as a `!vm.list<?>` (variants), as iree.runtime's
/// `VmVariantList` holds them: `int` (and `bool`) as i64, `float` as f64,
/// lists and tuples as nested lists, `None` as a null ref, arrays as buffer
/// views of their own dtype and shape. Nested lists are converted without
/// recursion (depth-first, with a stack of the sequences in progress), so
/// nesting of any depth converts in constant stack depth, and a list that
/// holds itself, directly or through others, is refused by name (each
/// level recursed before: such a list overflowed the stack and took the
/// process down). A sequence met twice without a cycle is one VM list.
fn list_of(seq: &Bound<'_, PyAny>, slot: &Slot<'_>) -> PyResult<Ref> {
    let py = seq.py();
    let trap = |t: irvm::Trap| crate::errors::from_trap(py, &t);
    let element = Slot {
        declared: None,
        ..*slot
    };
    let is_sequence =
        |o: &Bound<'_, PyAny>| o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>();
    fn begin<'py>(o: &Bound<'py, PyAny>, slot: &Slot<'_>) -> PyResult<InProgress<'py>> {
        let py = o.py();
        let items = o.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let capacity = u32::try_from(items.len()).map_err(|_| {
            slot.invalid(py, format!("a list of {} items is too long", items.len()))
        })?;
        Ok(InProgress {
            object: o.as_ptr(),
            items,
            next: 0,
            list: Arc::new(
                List::new(TypeDef::Any, capacity).map_err(|t| crate::errors::from_trap(py, &t))?,
            ),
        })
    }
    // The lists finished, by the identity of their Python sequence.
    let mut done: std::collections::HashMap<*mut ffi::PyObject, Arc<List>> =
        std::collections::HashMap::new();
    let mut path = vec![begin(seq, slot)?];
    // The identities of the sequences on `path`.
    let mut on_path = std::collections::HashSet::from([seq.as_ptr()]);
    loop {
        let Some(top) = path.last_mut() else {
            unreachable!("the path ends at the outermost sequence");
        };
        let Some(item) = top.items.get(top.next).cloned() else {
            let finished = path.pop().expect("the path holds the sequence just read");
            on_path.remove(&finished.object);
            done.insert(finished.object, finished.list.clone());
            match path.last_mut() {
                Some(parent) => {
                    parent
                        .list
                        .push(Value::Ref(Ref::List(finished.list)))
                        .map_err(trap)?;
                    parent.next += 1;
                    continue;
                }
                None => return Ok(Ref::List(finished.list)),
            }
        };
        let value =
            if item.is_instance_of::<PyInt>() {
                Value::I64(item.extract().map_err(|_| {
                    slot.invalid(py, format!("list item {item} does not fit in i64"))
                })?)
            } else if item.is_instance_of::<PyFloat>() {
                Value::F64(item.extract()?)
            } else if is_sequence(&item) {
                if let Some(list) = done.get(&item.as_ptr()) {
                    Value::Ref(Ref::List(list.clone()))
                } else if on_path.contains(&item.as_ptr()) {
                    return Err(slot.invalid(
                        py,
                        "the list holds itself (directly or through the lists in it); \
                     a !vm.list cannot be made of it"
                            .into(),
                    ));
                } else {
                    let inner = begin(&item, slot)?;
                    on_path.insert(inner.object);
                    path.push(inner);
                    continue;
                }
            } else {
                convert_ref(&item, &element)?
            };
        let top = path.last_mut().expect("the path holds the sequence read");
        top.list.push(value).map_err(trap)?;
        top.next += 1;
    }
}

/// A Python sequence `list_of` is converting: its items, the next one to
/// convert and the VM list they go into.
struct InProgress<'py> {
    object: *mut ffi::PyObject,
    items: Vec<Bound<'py, PyAny>>,
    next: usize,
    list: Arc<List>,
}

/// The numpy dtype name for an element type, if numpy has one (bfloat16
/// and the float8 types through ml_dtypes).
pub fn numpy_dtype_name(t: ElementType) -> Option<&'static str> {
    use irvm_hal::numerical as n;
    if let Some(name) = crate::ml_dtypes::name_of(t) {
        return Some(name);
    }
    Some(match (t.numerical(), t.byte_size()) {
        (n::BOOLEAN, 1) => "bool",
        (n::INTEGER | n::SIGNED, 1) => "int8",
        (n::INTEGER | n::SIGNED, 2) => "int16",
        (n::INTEGER | n::SIGNED, 4) => "int32",
        (n::INTEGER | n::SIGNED, 8) => "int64",
        (n::INTEGER, _) if t.bits() == 1 => "bool",
        (n::UNSIGNED, 1) => "uint8",
        (n::UNSIGNED, 2) => "uint16",
        (n::UNSIGNED, 4) => "uint32",
        (n::UNSIGNED, 8) => "uint64",
        (n::FLOAT_IEEE, 2) => "float16",
        (n::FLOAT_IEEE, 4) => "float32",
        (n::FLOAT_IEEE, 8) => "float64",
        (n::FLOAT_COMPLEX, 8) => "complex64",
        (n::FLOAT_COMPLEX, 16) => "complex128",
        _ => return None,
    })
}

/// For an array of unsigned or signed integers passed for a bfloat16 or
/// float8 tensor of the same width (its bits, as iree.runtime's users
/// sometimes hold them): the dtype wanted, from ml_dtypes, and how to view
/// the bits as it; empty otherwise.
fn bits_hint(have: ElementType, want: ElementType) -> String {
    let integer = have.numerical() & 0xF0 == irvm_hal::numerical::INTEGER;
    match crate::ml_dtypes::name_of(want) {
        Some(name) if integer && !have.is_sub_byte() && have.byte_size() == want.byte_size() => {
            format!(
                " (a {} tensor takes an array of ml_dtypes.{name}: pass its bits as \
             `bits.view(ml_dtypes.{name})`)",
                want.name()
            )
        }
        _ => String::new(),
    }
}

/// Whether data of type `have` may be passed for `want`: the same type, or
/// integers of one width whatever their signedness (numpy's `int32` for a
/// signless `i32`, `bool` for `i1`), as IREE's buffer view check allows.
/// Sub-byte integers (ml_dtypes' `int4`, `uint2`) are elements for any
/// sub-byte integer tensor (each checked against its range when packed,
/// as `int8` items are), never for a tensor of whole bytes (`i8`).
fn compatible(have: ElementType, want: ElementType) -> bool {
    let integer = |t: ElementType| t.numerical() & 0xF0 == irvm_hal::numerical::INTEGER;
    if have.is_sub_byte() {
        return integer(have) && integer(want) && want.is_sub_byte();
    }
    have.satisfies(want) || (integer(have) && integer(want) && have.byte_size() == want.byte_size())
}

/// A `Py_buffer` released when dropped (the GIL is held throughout).
struct Exported(ffi::Py_buffer);

impl Drop for Exported {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer
        // and is released once, here, with the GIL held (it never leaves
        // the conversion, which runs under the GIL).
        unsafe { ffi::PyBuffer_Release(&mut self.0) }
    }
}

/// The element type of a buffer's struct-module format (`f`, `<i`, `Zd`,
/// `?`) and item size, through IREE's numpy table.
fn element_of_format(format: &str, itemsize: usize) -> Result<ElementType, String> {
    let body = format.trim_start_matches(['@', '=', '<']);
    if body.starts_with(['>', '!']) && itemsize > 1 {
        return Err(format!(
            "big-endian data (format '{format}') is not supported"
        ));
    }
    let body = body.trim_start_matches(['>', '!']);
    let kind = match body {
        "?" => 'b',
        "b" | "h" | "i" | "l" | "q" | "n" => 'i',
        "B" | "H" | "I" | "L" | "Q" | "N" => 'u',
        "e" | "f" | "d" => 'f',
        "Zf" | "Zd" => 'c',
        _ => return Err(format!("unsupported element format '{format}'")),
    };
    irvm_hal::numpy_dtype::element_type(&format!("<{kind}{itemsize}"))
}

/// Memory of a Python object a VM buffer borrows: `_owner` keeps it alive
/// while the VM holds it, and it does not move meanwhile (an immutable
/// `bytes`, or a memoryview whose export of the object's buffer makes
/// the exporter refuse to resize or free it).
pub(crate) struct ArrayMemory {
    ptr: *const u8,
    len: usize,
    _owner: Py<PyAny>,
}

impl ArrayMemory {
    /// The bytes of a `bytes` object (immutable), which this value keeps
    /// alive: module bytes used without a copy.
    pub(crate) fn of_bytes(bytes: &Bound<'_, PyBytes>) -> ArrayMemory {
        let data = bytes.as_bytes();
        ArrayMemory {
            ptr: data.as_ptr(),
            len: data.len(),
            _owner: bytes.clone().into_any().unbind(),
        }
    }
}

// SAFETY: the bytes are never written through this type (the VM buffer over
// them is read-only; a `bytes` object cannot change) and stay valid while
// `_owner` is alive; dropping the owner without the GIL defers the decref
// to PyO3's reference pool.
unsafe impl Send for ArrayMemory {}
// SAFETY: as for Send: shared access only reads.
unsafe impl Sync for ArrayMemory {}

impl AsRef<[u8]> for ArrayMemory {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` addresses `len` bytes of the owner's memory, valid
        // while the owner lives (this value holds it), never moved.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A buffer-protocol object (numpy array) as a `!hal.buffer_view`; an
/// array of one of ml_dtypes' dtypes (which the buffer protocol cannot
/// export) through a view of its memory as unsigned integers, with its
/// own element type.
fn from_buffer(obj: &Bound<'_, PyAny>, slot: &Slot<'_>) -> PyResult<Value> {
    from_buffer_as(obj, None, slot)
}

/// `from_buffer`, with the element type of the data given (`bits_of`)
/// rather than read from the buffer's format.
fn from_buffer_as(
    obj: &Bound<'_, PyAny>,
    bits_of: Option<ElementType>,
    slot: &Slot<'_>,
) -> PyResult<Value> {
    let py = obj.py();
    // The memory is read through a memoryview of `obj`, which a VM buffer
    // over it keeps as its owner: the memoryview holds `obj`'s buffer
    // export for as long as the VM holds the memory, so the exporter
    // cannot resize or free it meanwhile (a `bytearray` or `array.array`
    // resized, or an `mmap` closed, also behind a memoryview the caller
    // released, would otherwise move or unmap its bytes while a module
    // global still points at them).
    // SAFETY: a zeroed Py_buffer is the documented initial state; it is
    // filled by PyObject_GetBuffer below before any use.
    let mut view: ffi::Py_buffer = unsafe { std::mem::zeroed() };
    let exported = PyMemoryView::from(obj).map_err(Some).and_then(|m| {
        // SAFETY: the memoryview is a live object (GIL held) and `view` is
        // writable.
        let rc = unsafe { ffi::PyObject_GetBuffer(m.as_ptr(), &mut view, ffi::PyBUF_RECORDS_RO) };
        if rc == 0 {
            Ok(m)
        } else {
            Err(PyErr::take(py))
        }
    });
    let exporter = match exported {
        Ok(m) => m,
        Err(cause) => {
            if bits_of.is_none() {
                if let Some((bits, element)) = crate::ml_dtypes::as_bits(obj)? {
                    return from_buffer_as(&bits, Some(element), slot);
                }
            }
            return Err(slot.invalid(
                py,
                format!(
                    "expects a numpy array (or a list, or None), got {}{}",
                    type_name(obj),
                    cause.map(|e| format!(" ({e})")).unwrap_or_default()
                ),
            ));
        }
    };
    let view = Exported(view);
    let v = &view.0;
    let ndim = usize::try_from(v.ndim).unwrap_or(0);
    let itemsize = usize::try_from(v.itemsize).unwrap_or(0);
    // SAFETY: with PyBUF_RECORDS_RO the exporter fills `shape` and
    // `strides` with `ndim` entries each (NULL only when ndim is 0).
    let (shape, strides): (Vec<isize>, Vec<isize>) = unsafe {
        if ndim == 0 || v.shape.is_null() {
            (Vec::new(), Vec::new())
        } else {
            (
                std::slice::from_raw_parts(v.shape, ndim).to_vec(),
                if v.strides.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(v.strides, ndim).to_vec()
                },
            )
        }
    };
    let format = if v.format.is_null() {
        "B".to_string()
    } else {
        // SAFETY: a non-null format is a NUL-terminated string owned by
        // the exporter while the view lives.
        unsafe { CStr::from_ptr(v.format) }
            .to_string_lossy()
            .into_owned()
    };
    let have = match bits_of {
        Some(element) => element,
        None => element_of_format(&format, itemsize).map_err(|e| slot.invalid(py, e))?,
    };
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let element = match slot.declared.and_then(|d| d.tensor.as_ref()) {
        Some((want_dims, want)) => {
            let shape_ok = want_dims.len() == dims.len()
                && want_dims
                    .iter()
                    .zip(&dims)
                    .all(|(w, h)| w.is_none_or(|w| w == *h));
            let dtype_ok = compatible(have, *want);
            if slot.as_given {
                have
            } else if !shape_ok || !dtype_ok {
                return Err(slot.invalid(
                    py,
                    format!(
                        "expects a {} array of {} (tensor<{}x{}>), got a {} array of {}",
                        shape_words(
                            &want_dims
                                .iter()
                                .map(|d| d.unwrap_or(-1))
                                .collect::<Vec<_>>(),
                            true
                        ),
                        numpy_dtype_name(*want).unwrap_or("?"),
                        dims_text(want_dims),
                        want.name(),
                        shape_words(&dims, false),
                        crate::ml_dtypes::sub_byte_name(have)
                            .or_else(|| numpy_dtype_name(have))
                            .unwrap_or(&format),
                    ) + &bits_hint(have, *want),
                ));
            } else {
                *want
            }
        }
        None => have,
    };
    let len = usize::try_from(v.len).unwrap_or(0);
    let total = slot.inputs.get().saturating_add(len as u64);
    if total > slot.max_bytes {
        let what = if total == len as u64 {
            format!("an input of {len} bytes")
        } else {
            format!("the inputs add up to {total} bytes with this one's {len}")
        };
        return Err(vm_error(
            py,
            StatusCode::ResourceExhausted,
            &format!(
                "{}: {what}, more than max_memory_bytes ({})",
                slot.what(),
                slot.max_bytes
            ),
        ));
    }
    slot.inputs.set(total);
    // SAFETY: `view` describes a valid exported buffer.
    let contiguous = unsafe { ffi::PyBuffer_IsContiguous(v, b'C' as std::ffi::c_char) } == 1;
    let aligned = (v.buf as usize) % irvm::BUFFER_ALIGNMENT == 0;
    let storage = if element.is_sub_byte() {
        // Elements of a sub-byte type (`i4`), one per numpy item: packed
        // as IREE packs them, into a fresh buffer.
        if slot.copy == Some(false) {
            return Err(PyValueError::new_err(format!(
                "{}: copy=False, but the array cannot be used in place: {} elements \
                 are packed {} to a byte into a copy",
                slot.what(),
                element.name(),
                8 / element.bits().clamp(1, 8)
            )));
        }
        let mut elements = vec![0u8; len];
        gather(
            v.buf as *const u8,
            &shape,
            &strides,
            itemsize,
            &mut elements,
        );
        let signed = matches!(
            have.numerical(),
            irvm_hal::numerical::INTEGER | irvm_hal::numerical::SIGNED
        );
        if have.is_sub_byte() {
            // ml_dtypes' one element per byte, in its low bits: as the
            // byte of the element's value (sign-extended when signed).
            crate::sub_byte::widen_in_place(&mut elements, have.bits(), signed);
        }
        let count = (len / itemsize.max(1)) as u64;
        let packed = crate::sub_byte::pack(&elements, itemsize, signed, element, count)
            .map_err(|e| slot.invalid(py, e))?;
        Buffer::from_vec(packed)
    } else if contiguous && aligned && v.readonly == 0 {
        // A writable array: the program reads and writes it in place.
        let owner: Arc<Py<PyAny>> = Arc::new(exporter.into_any().unbind());
        // SAFETY: `v.buf` addresses `len` writable bytes (the exporter said
        // so: not read-only) that stay put while the memoryview's export
        // of them lives; `owner` holds the memoryview (and so the export)
        // for as long as the buffer lives. The VM's accesses go through the buffer's thread
        // lease. Not covered: Python code writing the array on another
        // thread while a call that received it runs (the GIL is released);
        // that is the caller's race, as with any array shared by threads.
        unsafe { Buffer::foreign_mut(v.buf as *mut u8, len, owner) }
    } else if contiguous && aligned {
        let memory = ArrayMemory {
            ptr: v.buf as *const u8,
            len,
            _owner: exporter.into_any().unbind(),
        };
        Buffer::borrowed(Arc::new(memory), 0..len).map_err(|t| crate::errors::from_trap(py, &t))?
    } else {
        if slot.copy == Some(false) {
            let why = if !contiguous {
                "it is not C-contiguous".to_string()
            } else {
                format!("its data at {:#x} is not 64-byte aligned", v.buf as usize)
            };
            return Err(PyValueError::new_err(format!(
                "{}: copy=False, but the array cannot be used in place: {why}",
                slot.what()
            )));
        }
        let buffer = Buffer::new(len).map_err(|t| crate::errors::from_trap(py, &t))?;
        buffer
            .with_bytes_mut(|out| gather(v.buf as *const u8, &shape, &strides, itemsize, out))
            .map_err(|t| crate::errors::from_trap(py, &t))?;
        buffer
    };
    drop(view);
    let hal_buffer =
        HalBuffer::over(Ref::from(storage)).map_err(|t| crate::errors::from_trap(py, &t))?;
    Ok(BufferView {
        buffer: HostRef::new(type_names::BUFFER, hal_buffer),
        shape: dims,
        element_type: element,
        encoding: 1,
    }
    .into_value())
}

/// `4x8` (`?` for a dynamic dimension when `declared`), or `scalar`.
fn shape_words(dims: &[i64], declared: bool) -> String {
    if dims.is_empty() {
        return "0-d".into();
    }
    let parts: Vec<String> = dims
        .iter()
        .map(|&d| {
            if declared && d < 0 {
                "?".into()
            } else {
                d.to_string()
            }
        })
        .collect();
    parts.join("x")
}

/// Copies the elements of a strided array at `base` into `out` in C order.
fn gather(base: *const u8, shape: &[isize], strides: &[isize], itemsize: usize, out: &mut [u8]) {
    if out.is_empty() {
        return;
    }
    if strides.is_empty() {
        // SAFETY: a view without strides is C-contiguous and `out.len()`
        // bytes long (its `len`).
        unsafe { std::ptr::copy_nonoverlapping(base, out.as_mut_ptr(), out.len()) };
        return;
    }
    let mut index = vec![0isize; shape.len()];
    let mut written = 0;
    loop {
        let offset: isize = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        // SAFETY: each index is below its dimension, so `offset` addresses
        // an element inside the exporter's memory (what strides promise);
        // `written + itemsize <= out.len()` since `out` holds every element.
        unsafe {
            std::ptr::copy_nonoverlapping(
                base.offset(offset),
                out.as_mut_ptr().add(written),
                itemsize,
            )
        };
        written += itemsize;
        // The next index in C order.
        let mut k = shape.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

/// A `TypeError` for a wrong number of arguments.
pub fn arity_error(function: &str, signature: &str, want: usize, got: usize) -> PyErr {
    PyTypeError::new_err(format!(
        "{function} takes {want} argument{} ({signature}), {got} given",
        if want == 1 { "" } else { "s" }
    ))
}
