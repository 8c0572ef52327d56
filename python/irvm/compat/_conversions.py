"""Arguments converted as iree.runtime's bindings convert them: its C++
functions are bound with nanobind, which takes an integer parameter from
any object `int()` takes but a float (strings included: `"3"` is 3), and
refuses a value out of the parameter's range with a TypeError, as it
refuses a value of the wrong type."""

from __future__ import annotations

from typing import Any


def _nanobind_int(value: Any, function: str, bits: int = 64, signed: bool = False) -> int:
    """`value` as nanobind's integer caster (the one iree.runtime 3.13's
    wheel links) reads it for a parameter of `bits` bits: an `int` as it is,
    a `float` (or a subclass, `np.float64`) refused, anything else through
    `int()` (`PyNumber_Long`); a TypeError naming `function` when that fails
    or the value does not fit."""
    if isinstance(value, float):
        number = None
    elif type(value) is int:
        number = value
    else:
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            number = None
    low, high = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
    if number is None or not low <= number < high:
        kind = f"{'' if signed else 'unsigned '}{bits}-bit int"
        raise TypeError(f"{function}(): incompatible function arguments: takes a {kind}, not {value!r}")
    return number


def _nanobind_float(value: Any, function: str) -> float:
    """`value` as nanobind's float caster reads it for a `double`: an
    object with `__float__` or `__index__` (ints, numpy scalars, 0-d
    arrays), not a string; a TypeError naming `function` otherwise."""
    kind = type(value)
    if not isinstance(value, (str, bytes, bytearray)) and (hasattr(kind, "__float__") or hasattr(kind, "__index__")):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            pass
    raise TypeError(f"{function}(): incompatible function arguments: takes a float, not {value!r}")


def _nanobind_str(value: Any, function: str, parameter: str, optional: bool = False) -> Any:
    """`value` for a `str` parameter (`str | None` when `optional`), as
    nanobind takes it: only a `str` (a TypeError for bytes or a number)."""
    if isinstance(value, str) or (optional and value is None):
        return value
    expected = "str | None" if optional else "str"
    raise TypeError(
        f"{function}(): incompatible function arguments: {parameter} is a {expected}, "
        f"not {type(value).__name__}"
    )


def _nanobind_bool(value: Any, function: str, parameter: str, optional: bool = False) -> Any:
    """`value` for a `bool` parameter (`bool | None` when `optional`), as
    nanobind takes it: only `True` and `False` (a TypeError for 0, 1,
    numpy's bools or a string)."""
    if (optional and value is None) or value is True or value is False:
        return value
    expected = "bool | None" if optional else "bool"
    raise TypeError(
        f"{function}(): incompatible function arguments: {parameter} is a {expected}, "
        f"not {type(value).__name__}"
    )
