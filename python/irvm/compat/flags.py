"""iree.runtime.flags: `parse_flags(*flags)`, process-wide runtime flags
(accepted and ignored: see parse_flags), and FUNCTION_INPUT_VALIDATION;
IREE_PY_RUNTIME_FLAGS is parsed when irvm.compat is imported."""

from __future__ import annotations

import os
import shlex


# The runtime flags iree.runtime 3.13's parse_flags knows (its `--help`):
# GPU drivers', task system's, device profiling's and capture's. None of
# them has a counterpart in irvm, so parse_flags accepts and ignores them.
_RUNTIME_FLAGS = frozenset((
    "cuda_use_streams", "cuda_allow_inline_execution", "cuda_async_allocations", "cuda_tracing",
    "cuda_default_index", "cuda_default_index_from_mpi", "hip_use_streams",
    "hip_allow_inline_execution", "hip_async_allocations", "hip_async_caching", "hip_tracing",
    "hip_default_index", "task_abort_on_failure", "vulkan_validation_layers", "vulkan_debug_utils",
    "vulkan_debug_verbosity", "vulkan_tracing", "vulkan_robust_buffer_access",
    "vulkan_sparse_binding", "vulkan_sparse_residency", "vulkan_buffer_device_addresses",
    "vulkan_dispatch_abi", "vulkan_cached_bda_replay_instances",
    "vulkan_cached_bda_replay_publication_bytes", "vulkan_retained_cached_bda_replay_instances",
    "vulkan_dedicated_compute_queue", "task_worker_spin_us", "task_worker_stack_size",
    "task_worker_local_memory", "task_topology_mode", "task_topology_group_count",
    "task_topology_nodes", "task_topology_max_group_count", "task_topology_snapshot",
    "task_topology_performance_level", "task_topology_distribution", "task_topology_favor",
    "device_profiling_mode", "device_profiling_output", "device_profiling_filter_function",
    "device_profiling_filter_command_buffer", "device_profiling_filter_command_index",
    "device_profiling_filter_physical_device", "device_profiling_filter_queue",
    "device_profiling_flush_interval_ms", "print_device_statistics", "device_capture_tool",
    "device_capture_file", "device_capture_label",
))


def parse_flags(*flags: str) -> None:
    """Parses IREE runtime flags (`--name=value`) process-wide, as
    iree.runtime's `flags.parse_flags`: a flag it does not know is a
    ValueError naming it; `--flagfile=PATH` reads flags from a file (one
    per line, `#` comments); arguments that are not flags are ignored.
    Every flag iree.runtime knows tunes its GPU drivers, task system,
    device profiling or capture, which irvm does not have: they are
    accepted and have no effect (`--help` lists them)."""
    for flag in flags:
        if not flag.startswith("--"):
            continue
        name, _, value = flag[2:].partition("=")
        if name == "help":
            print("# irvm.compat.flags: IREE runtime flags accepted and ignored (irvm has no GPU "
                  "drivers, task system tuning, device profiling or capture)")
            for known in sorted(_RUNTIME_FLAGS):
                print(f"# --{known}")
            continue
        if name == "flagfile":
            try:
                with open(value) as f:
                    lines = [line.strip() for line in f]
            except OSError as e:
                raise ValueError(f"Error parsing flags: NOT_FOUND; failed to open flagfile '{value}': {e}") from None
            parse_flags(*[line for line in lines if line and not line.startswith("#")])
            continue
        if name.replace("-", "_") not in _RUNTIME_FLAGS:
            raise ValueError(f"Error parsing flags: INVALID_ARGUMENT; flag '{name}' not recognized")


FUNCTION_INPUT_VALIDATION = True


def _load_default_flags_from_env() -> None:
    """IREE_PY_RUNTIME_FLAGS, parsed at import as iree.runtime parses it."""
    text = os.getenv("IREE_PY_RUNTIME_FLAGS")
    if not text:
        return
    try:
        parse_flags(*shlex.split(text))
    except ValueError as e:
        raise RuntimeError(
            f"Bad flag value in environment variable IREE_PY_RUNTIME_FLAGS='{text}': {e}"
        ) from e


_load_default_flags_from_env()
