#!/bin/sh
# Rebuilds long_workgroup.vmfb from long_workgroup.mlir with the reference
# iree-compile (IREE 3.13): llvm-cpu, embedded ELF, a generic x86-64 CPU.
set -eu
here=$(dirname "$0")
peer=${IREE_PEER:-/root/.cache/irvm-iree-peer/native}
"$peer/iree-compile" --iree-hal-target-device=local \
    --iree-hal-local-target-device-backends=llvm-cpu \
    --iree-llvmcpu-target-cpu=generic \
    "$here/long_workgroup.mlir" -o "$here/long_workgroup.vmfb"
