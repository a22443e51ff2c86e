"""Array backends: the only code that names numpy or cupy.

A backend maps a device type to an array module (`xp`). Kernels take `xp` from their
inputs with `array_module`, so one body serves NumPy and CuPy.
"""
import numpy as np

from . import numpy_backend

_cupy = None  # set by the CUDA backend once CuPy is imported


def array_module(*arrays):
    """numpy or cupy, whichever holds the first of `arrays` (NumPy when none is CuPy's)."""
    if _cupy is not None:
        for a in arrays:
            if isinstance(a, _cupy.ndarray):
                return _cupy
    return np


class Backend:
    """What a device type needs: its array module and host transfers (`to_host(array)` gives
    a NumPy array, `from_host(ndarray)` the device's array; both copy)."""

    def __init__(self, name, xp, to_host, from_host):
        self.name = name
        self.xp = xp
        self.to_host = to_host
        self.from_host = from_host

    def __repr__(self):
        return f"<Backend {self.name}>"


cpu = Backend("cpu", np, numpy_backend.identity, numpy_backend.identity)
BACKENDS = {"cpu": cpu}


def register(device_type, backend):
    """Install `backend` for `device_type` (the CUDA backend; tests add a NumPy-backed one)."""
    BACKENDS[device_type] = backend


def unregister(device_type):
    """Remove the backend of `device_type` (never cpu's); returns it, or None."""
    if device_type == "cpu":
        raise ValueError("the cpu backend cannot be unregistered")
    return BACKENDS.pop(device_type, None)


def get(device_type):
    """The backend of `device_type`, installing CUDA's on first use; PyTorch's error (an
    AssertionError, as its CPU build raises) where the device type is unavailable."""
    backend = BACKENDS.get(device_type)
    if backend is None:
        if device_type == "cuda":
            from .. import cuda
            cuda._lazy_init()
            backend = BACKENDS.get(device_type)
            if backend is not None:
                return backend
        if device_type in ("cuda", "xpu"):
            raise AssertionError(f"Torch not compiled with {device_type.upper()} enabled")
        raise RuntimeError(f"PyTorch is not linked with support for {device_type} devices")
    return backend


# torch.backends.* flag modules (not array backends): imported last, after the table above.
from . import cuda, cudnn, mkldnn, mps, openmp  # noqa: E402,F401
