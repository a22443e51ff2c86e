"""The host allocator policy: keep freed large blocks in the process heap for reuse.

NumPy allocates through malloc; glibc serves blocks above a (dynamic) threshold with fresh
mmap'd pages and returns freed heap tops to the OS, so every large temporary of a training
step (im2col columns, activations, their gradients) is faulted in and zeroed by the kernel
again, step after step: a third of a small CNN's step. Raising the mmap threshold to its
maximum (32 MiB) and the trim threshold to 512 MiB keeps those blocks in the heap, which is
what a framework's caching allocator does (PyTorch's on CUDA).

Opt out with EMBER_MALLOC_CACHE=0; a program that sets glibc's own MALLOC_* variables or
GLIBC_TUNABLES keeps its choice. Elsewhere than glibc this does nothing.
"""
import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20     # glibc's largest allowed value on 64-bit
_TRIM_THRESHOLD = 512 << 20


def tune():
    """Apply the policy (ember's import does, once); True when it was applied."""
    if os.environ.get("EMBER_MALLOC_CACHE", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if any(k.startswith("MALLOC_") or k == "GLIBC_TUNABLES" for k in os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt   # glibc's; musl has none (AttributeError)
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


APPLIED = tune()
