"""irvm: run IREE VM bytecode modules (.vmfb) from Python.

    import numpy as np, irvm
    m = irvm.load("mlp.vmfb", device="local-task")
    y = m.predict(np.ones((4, 8), np.float32))   # an ndarray over the VM's memory
    print(m.predict.signature)

``irvm.load`` links several modules in order; exported functions are
attributes and items of what it returns. Host modules written in Python (``irvm.HostModule``) go among the modules,
before the programs that import them. Arguments are numpy arrays (used
in place when C-contiguous, of the declared dtype and 64-byte aligned,
otherwise copied once; ``copy=False`` refuses the copy), Python scalars and
lists. Errors are ``irvm.VmError`` subclasses, one per IREE status.
``irvm.compat`` offers iree.runtime's API.
"""

from ._irvm import (  # noqa: F401
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    FailedPreconditionError,
    Function,
    HostModule,
    IncompatibleError,
    InternalError,
    InvalidArgumentError,
    Module,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    Ref,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
    VmError,
    load,
)

__all__ = [
    "load",
    "Module",
    "Function",
    "HostModule",
    "Ref",
    "VmError",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "IncompatibleError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
]
