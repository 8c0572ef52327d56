"""How irvm's errors are raised in irvm.compat: as the Python built-ins
iree.runtime 3.13 raises for each IREE status."""

from __future__ import annotations

from .. import _irvm


# The Python built-in iree.runtime 3.13 raises for each IREE status (its
# binding's status conversion, ApiStatusToPyExcClass; compared live for every
# code in python/tests/test_compat.py): RuntimeError for the statuses not here.
_IREE_RUNTIME_EXCEPTIONS: dict = {
    "INVALID_ARGUMENT": ValueError,
    "NOT_FOUND": ValueError,
    "OUT_OF_RANGE": IndexError,
    "UNIMPLEMENTED": NotImplementedError,
}

_AS_IREE_ERROR: dict = {}


def _builtin_bases(cls: type) -> set:
    return {c for c in cls.__mro__ if c.__module__ == "builtins"}


def _as_iree_error(error: _irvm.VmError) -> _irvm.VmError:
    """The same error as an instance of the built-in exception iree.runtime
    raises for its status (_IREE_RUNTIME_EXCEPTIONS), and of no other
    built-in: of irvm's class for the status where that class derives from
    no other built-in (irvm.UnknownError, irvm.OutOfRangeError), else of a
    class of the same name on irvm.VmError (irvm.NotFoundError is a
    LookupError, iree.runtime's NOT_FOUND a ValueError alone)."""
    cls = type(error)
    status = getattr(error, "status", None)
    builtin = _IREE_RUNTIME_EXCEPTIONS.get(status, RuntimeError)
    args = error.args
    # iree.runtime's text always names the status (`...: NOT_FOUND; ...`),
    # which scripts search for: so does this one's.
    if status and args and isinstance(args[0], str) and f"{status};" not in args[0]:
        args = (f"{status}; {args[0]}", *args[1:])
    if _builtin_bases(cls) == _builtin_bases(builtin):
        if args is error.args:
            return error
        out = cls(*args)
    else:
        out = _iree_error_class(cls, builtin)(*args)
    out.status, out.location, out.backtrace = error.status, error.location, error.backtrace
    out.__cause__ = error.__cause__
    return out


def _iree_error_class(cls: type, builtin: type) -> type:
    """irvm's error class `cls` as an instance of `builtin` (made once)."""
    compat = _AS_IREE_ERROR.get((cls, builtin))
    if compat is None:
        base = cls if _builtin_bases(cls) <= _builtin_bases(builtin) else _irvm.VmError
        compat = type(
            cls.__name__,
            (base, builtin),
            {
                "__module__": "irvm.compat",
                "status": cls.status,
                # Not an attribute of irvm.compat, so pickled as how it is made.
                "__reduce__": _reduce_iree_error,
                "_made_from": (cls, builtin),
            },
        )
        _AS_IREE_ERROR[(cls, builtin)] = compat
    return compat


def _reduce_iree_error(error: BaseException):
    return (_rebuild_iree_error, (*type(error)._made_from, error.args), error.__dict__)


def _rebuild_iree_error(cls: type, builtin: type, args: tuple) -> BaseException:
    """An error of `_iree_error_class(cls, builtin)` from its pickled arguments."""
    return _iree_error_class(cls, builtin)(*args)
