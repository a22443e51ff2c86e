"""Top-level switches and queries of torch's namespace that are not ops: warn-always,
deterministic debug mode, anomaly mode, the legacy per-device autocast getters and setters,
typename / is_storage / get_device, and the build queries (cxx11 ABI, flush-denormal).

Each one reads or writes the state that ember's own machinery uses (amp's autocast state,
autograd's anomaly flags, _threads' determinism flags), so the legacy spellings and the
current ones always agree."""
import importlib
import warnings

import ember

from . import _dtype as dt
from . import _threads
from ._default_device import get_default_device
from ._device import device as device_cls
from ._scalars import type_name
from ._tensor import Tensor
from .amp import autocast_mode
from .autograd import set_detect_anomaly

__all__ = ["set_warn_always", "is_warn_always_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_anomaly_enabled", "typename", "is_storage",
           "is_distributed", "cudnn_is_acceptable", "get_device", "get_device_module",
           "compiled_with_cxx11_abi",
           "init_num_threads", "set_flush_denormal", "set_default_tensor_type",
           "is_vulkan_available", "set_autocast_cpu_enabled", "is_autocast_cpu_enabled",
           "set_autocast_cpu_dtype", "get_autocast_cpu_dtype", "set_autocast_gpu_dtype",
           "get_autocast_gpu_dtype", "autocast_increment_nesting", "autocast_decrement_nesting"]

# ---------------------------------------------------------------------- warn always
_warn_always = [False]


def set_warn_always(b, /):
    """When on, warnings PyTorch gives once per process (ember's `warn_once`) repeat."""
    if not isinstance(b, bool):
        raise TypeError(f"_set_warnAlways(): argument 'arg0' (position 1) must be bool, not "
                        f"{type_name(b)}")
    _warn_always[0] = b


def is_warn_always_enabled():
    return _warn_always[0]


def warn_once(seen, key, message, category=UserWarning, stacklevel=2):
    """PyTorch's TORCH_WARN_ONCE: once per process for each `key` in the caller's `seen` set,
    every time while `set_warn_always(True)` is on."""
    if _warn_always[0] or key not in seen:
        seen.add(key)
        warnings.warn(message, category, stacklevel=stacklevel + 1)


# ---------------------------------------------------------------------- determinism
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0/'default': off; 1/'warn': deterministic algorithms, warning only; 2/'error': on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _threads.use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _threads.are_deterministic_algorithms_enabled():
        return 0
    return 1 if _threads.is_deterministic_algorithms_warn_only_enabled() else 2


# ---------------------------------------------------------------------- anomaly mode
def set_anomaly_enabled(enabled, check_nan=True):
    set_detect_anomaly(enabled, check_nan)


# ---------------------------------------------------------------------- queries
def typename(obj, /):
    """'torch.FloatTensor' for a float32 CPU tensor (ember's legacy type names carry torch's
    prefix, as `Tensor.type()` does), else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    # (bfloat16's lazily resolved dtype is a dtype to its users)
    cls = obj if isinstance(obj, type) else dt.dtype if isinstance(obj, dt.dtype) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    if module in ("", "builtins", "__builtin__"):
        return cls.__qualname__
    if module.startswith("ember.") and getattr(ember, cls.__qualname__, None) is cls:
        module = "ember"   # dtype, device, Size...: named where users reach them, as torch's
    return f"{module}.{cls.__qualname__}"


def is_storage(obj, /):
    from .storage import TypedStorage, UntypedStorage  # (cycle: storage imports this module)
    return type(obj) in (TypedStorage, UntypedStorage) or \
        isinstance(obj, (TypedStorage, UntypedStorage))


def _tensor_arg(fn, obj):
    if not isinstance(obj, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(obj)}")


def is_distributed(input):
    """False: no ember tensor is a distributed (THD) tensor."""
    _tensor_arg("is_distributed", input)
    return False


def cudnn_is_acceptable(input):
    """False: ember has no cuDNN (its CUDA backend is CuPy without it), so no tensor is one
    cuDNN would take."""
    _tensor_arg("cudnn_is_acceptable", input)
    return False


def get_device(input):
    """The tensor's device index; -1 on the CPU."""
    _tensor_arg("get_device", input)
    return input.get_device()


def get_device_module(device=None):
    """The module for a device type (`ember.cuda` for 'cuda:0'); the default device's when
    None."""
    if device is None:
        kind = get_default_device().type
    elif isinstance(device, device_cls):
        kind = device.type
    elif isinstance(device, str):
        kind = device_cls(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    try:
        return importlib.import_module(f"ember.{kind}")
    except ImportError:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'torch.{kind}'.") from None


def compiled_with_cxx11_abi():
    """True, as every PyTorch 2.x wheel answers (ember has no libtorch to link against)."""
    return True


def init_num_threads():
    """Sets the calling thread's kernel team to the configured size, as PyTorch's does for
    a fresh thread; ember's BLAS and OpenMP settings are process-wide, so this reapplies
    them."""
    _threads.set_num_threads(_threads.get_num_threads())


def set_flush_denormal(mode):
    """False: NumPy gives no control over the CPU's flush-to-zero mode, so ember cannot
    switch it (PyTorch returns False on CPUs that lack the mode, as here)."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_flush_denormal(): argument 'on' (position 1) must be bool, "
                        f"not {type_name(mode)}")
    return False


def is_vulkan_available(*args, **kwargs):
    """False: no Vulkan backend (PyTorch's builtin ignores any arguments it is given)."""
    return False


def set_default_tensor_type(t, /):
    """Deprecated: sets the default floating dtype from a legacy tensor type
    (`ember.DoubleTensor` or 'torch.DoubleTensor')."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                  "use torch.set_default_dtype() and torch.set_default_device() as "
                  "alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        t = getattr(ember, t.split(".")[-1]) if t.startswith(("torch.", "ember.")) else \
            getattr(ember, t)
    dtype = getattr(t, "dtype", None)
    if not isinstance(dtype, dt.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as "
                        "the default type")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dt.set_default_dtype(dtype)


# ---------------------------------------------------------------------- legacy autocast
def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def _check_bool(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type_name(enabled)})")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _check_bool(enabled)
    autocast_mode.set_autocast_enabled("cpu", enabled)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return autocast_mode.is_autocast_enabled("cpu")


def _set_dtype(device_type, dtype):
    if not isinstance(dtype, dt.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type_name(dtype)})")
    autocast_mode.set_autocast_dtype(device_type, dtype)


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _set_dtype("cpu", dtype)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return autocast_mode.get_autocast_dtype("cpu")


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _set_dtype("cuda", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return autocast_mode.get_autocast_dtype("cuda")


def autocast_increment_nesting():
    return autocast_mode.autocast_increment_nesting()


def autocast_decrement_nesting():
    return autocast_mode.autocast_decrement_nesting()
