"""Array backends: the only code that names numpy or cupy.

A backend maps a device type to an array module (`xp`). Kernels take `xp` from their
inputs with `array_module`, so one body serves NumPy and CuPy. The 'cuda' backend is CuPy's
(`cupy_backend`), or, in ember's own test suite only, a NumPy-backed stand-in (`standin`).
"""
import contextlib
import os
import threading
import warnings

import numpy as np

from . import numpy_backend  # noqa: F401  (imported here: ops reach it as backends.numpy_backend)

# PyTorch's kernels give inf and nan silently (1 / 0, 0 * inf); NumPy's warn ("divide by zero
# encountered in divide") from the ember function that called them. The filter matches only
# warnings raised in ember's own modules, so the user's NumPy code keeps its warnings, and it
# costs nothing until a warning is raised (np.errstate around every op would cost each op).
warnings.filterwarnings("ignore", message=r".* encountered in ", category=RuntimeWarning,
                        module=r"ember(\.|$)")

_cupy = None  # set by the CUDA backend once CuPy is imported
oom_errors = ()     # the installed GPU backend's out-of-memory exceptions


class _CurrentGPU(threading.local):
    """The GPU index kernels run on now, per thread as CUDA's current device is (kept by
    GPUBackend.set_current; DataParallel's threads each work on their own device)."""
    index = 0


current_gpu = _CurrentGPU()
_NOTHING = contextlib.nullcontext()
STANDIN_VARIABLE = "EMBER_CUDA_STANDIN"   # set by tests/conftest.py's fixture only


def array_module(*arrays):
    """numpy or cupy, whichever holds the first of `arrays` (NumPy when none is CuPy's)."""
    if _cupy is not None:
        for a in arrays:
            if isinstance(a, _cupy.ndarray):
                return _cupy
    return np


class Backend:
    """What a device type needs: its array module, host transfers (copies, except for the
    CPU's own arrays) and, for an accelerator, the device index that kernels run on."""

    name = "cpu"
    xp = np
    oom_errors = ()       # exceptions meaning "this device is out of memory"

    def to_host(self, array):
        """A NumPy array with `array`'s values."""
        return array

    def from_host(self, host, index=None):
        """`host` (a NumPy array) as this device's array on device `index`."""
        return host

    def current_index(self):
        return None

    @contextlib.contextmanager
    def guard(self, index):
        """Kernels inside run on device `index` (PyTorch's device guard)."""
        yield

    def __repr__(self):
        return f"<Backend {self.name}>"


_cpu_backend = Backend()
BACKENDS = {"cpu": _cpu_backend}


def register(device_type, backend):
    """Install `backend` for `device_type` (the CUDA backend or the test stand-in)."""
    global oom_errors
    BACKENDS[device_type] = backend
    oom_errors = backend.oom_errors


def unregister(device_type):
    """Remove the backend of `device_type` (never cpu's); returns it, or None."""
    if device_type == "cpu":
        raise ValueError("the cpu backend cannot be unregistered")
    global oom_errors
    oom_errors = ()
    current_gpu.index = 0
    return BACKENDS.pop(device_type, None)


def standin_requested():
    """The stand-in's device count when the test suite asked for it, else 0."""
    value = os.environ.get(STANDIN_VARIABLE, "")
    return int(value) if value.isdigit() else 0


def get(device_type):
    """The backend of `device_type`, installing CUDA's on first use; PyTorch's error (an
    AssertionError, as its CPU build raises) where the device type is unavailable."""
    backend = BACKENDS.get(device_type)
    if backend is None:
        if device_type == "cuda":
            from .. import cuda   # (cycle: ember.cuda imports ember.backends, the lowest layer)
            cuda._lazy_init()
            return BACKENDS["cuda"]
        if device_type == "xpu":
            raise AssertionError("Torch not compiled with XPU enabled")
        raise RuntimeError(f"PyTorch is not linked with support for {device_type} devices")
    return backend


def on(device):
    """A context in which kernels and allocations run on `device`: nothing to do for the CPU
    or the current GPU (the common cases), the backend's device guard otherwise."""
    if device.index is None or device.index == current_gpu.index:
        return _NOTHING
    return get(device.type).guard(device.index)


def to_device(device, host):
    """The host array `host` copied onto `device` (a placed ember.device)."""
    if device.type == "cpu":
        return host
    return get(device.type).from_host(host, device.index)


def to_host(device, array):
    """`array` (living on `device`) as a NumPy array; no copy on the CPU."""
    if device.type == "cpu":
        return array
    return get(device.type).to_host(array)


# torch.backends.* flag modules (not array backends): imported last, after the table above.
from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: E402,F401
