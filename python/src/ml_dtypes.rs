//! The element types numpy has only through the `ml_dtypes` package
//! (bfloat16 and the float8 types), mapped as iree.runtime 3.13 maps them
//! (`iree/runtime/dtypes.py`): arrays of those dtypes in, arrays of those
//! dtypes out.
//!
//! Such arrays cannot export their memory through the buffer protocol
//! ("cannot include dtype 'E' in a buffer"), so an argument is taken
//! through a view of it as unsigned integers of its width (the same
//! memory, which keeps the array alive), and a result is an unsigned
//! integer array over the VM's buffer viewed as the ml_dtypes dtype.
//! Without ml_dtypes (irvm depends on numpy only) results of these types
//! stay unsigned integer arrays of their bits.
//!
//! ml_dtypes' integers narrower than a byte (`int4`, `uint4`, `int2`,
//! `uint2`, `int1`, `uint1`: one element per byte, in its low bits) are
//! taken as arguments the same way, as `si4`, `ui4`, `si2`... elements
//! that `sub_byte` packs; results of sub-byte types stay the unpacked
//! `int8`/`uint8` copies `sub_byte` makes (see there).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use irvm_hal::numerical as n;
use irvm_hal::ElementType;

/// Each element type and the name of its dtype in `ml_dtypes`.
const TYPES: [(ElementType, &str); 6] = [
    (ElementType::new(n::FLOAT_BRAIN, 16), "bfloat16"),
    (ElementType::new(n::FLOAT_8_E4M3_FN, 8), "float8_e4m3fn"),
    (ElementType::new(n::FLOAT_8_E4M3_FNUZ, 8), "float8_e4m3fnuz"),
    (ElementType::new(n::FLOAT_8_E5M2, 8), "float8_e5m2"),
    (ElementType::new(n::FLOAT_8_E5M2_FNUZ, 8), "float8_e5m2fnuz"),
    (ElementType::new(n::FLOAT_8_E8M0_FNU, 8), "float8_e8m0fnu"),
];

/// ml_dtypes' sub-byte integer dtypes and the element type of their
/// elements (signed ones `si4`, unsigned ones `ui4`).
const SUB_BYTE_TYPES: [(ElementType, &str); 6] = [
    (ElementType::new(n::SIGNED, 4), "int4"),
    (ElementType::new(n::UNSIGNED, 4), "uint4"),
    (ElementType::new(n::SIGNED, 2), "int2"),
    (ElementType::new(n::UNSIGNED, 2), "uint2"),
    (ElementType::new(n::SIGNED, 1), "int1"),
    (ElementType::new(n::UNSIGNED, 1), "uint1"),
];

/// The ml_dtypes name of the sub-byte integer dtype whose elements are of
/// type `t` (`int4` for `si4`), if it has one.
pub fn sub_byte_name(t: ElementType) -> Option<&'static str> {
    SUB_BYTE_TYPES
        .iter()
        .find(|(e, _)| *e == t)
        .map(|(_, name)| *name)
}

/// The ml_dtypes name of `t`'s dtype (`bfloat16`, `float8_e4m3fn`), if
/// it is one of the types numpy has only through ml_dtypes.
pub fn name_of(t: ElementType) -> Option<&'static str> {
    TYPES.iter().find(|(e, _)| *e == t).map(|(_, name)| *name)
}

/// `ml_dtypes`, imported once; None when it is not installed.
static MODULE: PyOnceLock<Option<Py<PyModule>>> = PyOnceLock::new();

fn module(py: Python<'_>) -> Option<&Bound<'_, PyModule>> {
    MODULE
        .get_or_init(py, || py.import("ml_dtypes").ok().map(Bound::unbind))
        .as_ref()
        .map(|m| m.bind(py))
}

/// The numpy dtype of `t` from ml_dtypes: `Ok(None)` when `t` is not one
/// of its types, an error naming the package when it is not installed.
pub fn dtype<'py>(py: Python<'py>, t: ElementType) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(name) = name_of(t) else {
        return Ok(None);
    };
    let Some(ml_dtypes) = module(py) else {
        return Err(pyo3::exceptions::PyImportError::new_err(format!(
            "{} is numpy's ml_dtypes.{name}: install the ml_dtypes package",
            t.name()
        )));
    };
    let numpy = py.import("numpy")?;
    Ok(Some(
        numpy.call_method1("dtype", (ml_dtypes.getattr(name)?,))?,
    ))
}

/// A result array of unsigned integers holding `t`'s bits, as the
/// ml_dtypes dtype of `t` (the same memory); as it is when `t` is not one
/// of ml_dtypes' types or ml_dtypes is not installed.
pub fn view_result<'py>(array: Bound<'py, PyAny>, t: ElementType) -> PyResult<Bound<'py, PyAny>> {
    let py = array.py();
    if module(py).is_none() {
        return Ok(array);
    }
    match dtype(py, t)? {
        Some(dtype) => array.call_method1("view", (dtype,)),
        None => Ok(array),
    }
}

/// For an array of one of ml_dtypes' dtypes (which the buffer protocol
/// cannot export): a view of the same memory as unsigned integers of its
/// width (the view holds the array) and the element type of the dtype;
/// for its sub-byte integers (`int4`), a `uint8` view of the bytes that
/// hold one element each in their low bits (the high bits are not the
/// element's: ml_dtypes keeps `int4(-3)` as `0x0D`) and the sub-byte
/// element type (`si4`). None for anything else. ml_dtypes is only looked at when a program
/// already imported it (an array of its dtypes cannot exist otherwise).
pub fn as_bits<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<(Bound<'py, PyAny>, ElementType)>> {
    let py = obj.py();
    let modules = py.import("sys")?.getattr("modules")?;
    // Absent, or None (an import of it blocked).
    let Some(ml_dtypes) = modules
        .cast::<PyDict>()?
        .get_item("ml_dtypes")?
        .filter(|m| !m.is_none())
    else {
        return Ok(None);
    };
    let numpy = py.import("numpy")?;
    if !obj.is_instance(&numpy.getattr("ndarray")?)? {
        return Ok(None);
    }
    let have = obj.getattr("dtype")?;
    for (t, name) in TYPES {
        let Ok(scalar_type) = ml_dtypes.getattr(name) else {
            // An older ml_dtypes without this type.
            continue;
        };
        if have.eq(numpy.call_method1("dtype", (scalar_type,))?)? {
            let bits = if t.byte_size() == 2 {
                "uint16"
            } else {
                "uint8"
            };
            return Ok(Some((obj.call_method1("view", (bits,))?, t)));
        }
    }
    for (t, name) in SUB_BYTE_TYPES {
        let Ok(scalar_type) = ml_dtypes.getattr(name) else {
            continue;
        };
        if have.eq(numpy.call_method1("dtype", (scalar_type,))?)? {
            return Ok(Some((obj.call_method1("view", ("uint8",))?, t)));
        }
    }
    Ok(None)
}
