"""Autocast: listed ops run in a lower-precision float (bfloat16 on CPU) inside the region.

The state is thread-local, as PyTorch's. The op registry's door asks `active` (a plain module
integer, so the door stays one check when no region is open) and, when set, calls `apply`
before the forward: inputs of the op are cast by its policy and the result dtype follows.

Policies (PyTorch's CPU lists, restricted to ember primitives):
- lower precision: matmul (mm, bmm, matmul, linear's product), convolution and its transpose,
  einsum. float32 and float16 inputs are cast to the region's dtype; float64 is left alone.
- float32: ops PyTorch keeps in float32 (prod, trace, linalg decompositions...): bfloat16 and
  float16 inputs are cast up to float32.
NOTE: the lower-precision casts are real `.to(dtype)` calls recorded in the graph, so gradients
reach the float32 parameters; the GEMM then runs on float32 copies of the rounded values with
float32 accumulation and rounds its result, which is what PyTorch's bfloat16 CPU kernels do.
"""
import functools
import threading
import warnings

from .. import _dtype as dt
from .. import cuda
from .._device import device as device_cls
from .._scalars import type_name
from .._tensor import Tensor

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

active = 0   # open enabled regions over all threads: the registry's cheap check

# PyTorch's autocast op lists, per device type, in ember's registry names (linear, mm, bmm,
# addmm... are `matmul`; conv1d/2d/3d `convolution`; the losses are built from
# exp/log/logsumexp/sum, which CUDA's list keeps in float32).
_LOWER_CPU = frozenset({"matmul", "convolution", "convolution_transpose", "einsum"})
_FP32_CPU = frozenset({"prod", "prod_dim", "trace", "linalg_inv", "linalg_cholesky",
                       "linalg_pinv", "linalg_solve", "linalg_svd", "linalg_qr", "linalg_eigh"})
LOWER = {"cpu": _LOWER_CPU, "cuda": _LOWER_CPU | {"lstm_cell"}}
FP32 = {"cpu": _FP32_CPU,
        "cuda": _FP32_CPU | {"acos", "asin", "cosh", "sinh", "tan", "erfinv", "exp", "expm1",
                             "log", "log10", "log1p", "log2", "pow", "pow_scalar_base",
                             "pow_tensor", "reciprocal", "rsqrt", "sum", "cumsum", "cumprod",
                             "norm", "linalg_vector_norm", "logsumexp", "native_layer_norm",
                             "softmax", "log_softmax"}}
_LISTED = frozenset().union(*LOWER.values(), *FP32.values())


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": dt.bfloat16, "cuda": dt.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}    # id(leaf) -> (leaf, cast): weights cast once per region


_state = _State()
_CUDA_LEGACY = object()
_SUPPORTED = ("cpu", "cuda")


def is_autocast_available(device_type):
    return device_type in _SUPPORTED


def _check_device(device_type):
    if device_type not in _SUPPORTED:
        device_cls(device_type)   # PyTorch's error for a string that names no device type
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")


def _check_str(name, device_type):
    """The builtin's argument parser: device_type is a str."""
    if not isinstance(device_type, str):
        raise TypeError(f"{name}(): argument 'device_type' (position 1) must be str, not "
                        f"{type_name(device_type)}")


def is_autocast_enabled(device_type=_CUDA_LEGACY):
    if device_type is _CUDA_LEGACY:   # the legacy no-argument form is CUDA's
        device_type = None
    else:
        _check_str("is_autocast_enabled", device_type)
    if device_type is not None and device_type not in _state.enabled:
        device_cls(device_type)   # PyTorch's error for a string that names no device type
        return False          # (a real device type without autocast here: xpu, mps, ...)
    return _state.enabled["cuda" if device_type is None else device_type]


def set_autocast_enabled(device_type, enabled=None):
    global active
    if enabled is None:   # the legacy one-argument form is CUDA's
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    was = _state.enabled[device_type]
    _state.enabled[device_type] = bool(enabled)
    active += bool(enabled) - was


def get_autocast_dtype(device_type):
    _check_str("get_autocast_dtype", device_type)
    _check_device(device_type)
    return _state.dtype[device_type]


def set_autocast_dtype(device_type, dtype):
    _check_device(device_type)
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _state.cache.clear()


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


class autocast:
    """`with ember.autocast('cpu'):` (or as a decorator): listed ops compute in `dtype`."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = _state.dtype[device_type] if dtype is None else dtype
        self._cache_enabled = _state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (dt.bfloat16, dt.float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "ember.bfloat16, ember.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        self.prev_cache_enabled = _state.cache_enabled
        self.prev = _state.enabled[self.device]
        self.prev_fastdtype = _state.dtype[self.device]
        set_autocast_enabled(self.device, self._enabled)
        _state.dtype[self.device] = self.fast_dtype
        autocast_increment_nesting()
        _state.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # NOTE: the weight-cast cache dies with the outermost region (it holds tensors).
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        _state.dtype[self.device] = self.prev_fastdtype
        _state.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# ---------------------------------------------------------------------- the door's hook
def _cast(x, target, cache):
    if cache and x.is_leaf and x._requires_grad:
        hit = _state.cache.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        y = x.to(target)
        _state.cache[id(x)] = (x, y)
        return y
    return x.to(target)


def apply(op, inputs, arrays, dtype):
    """(inputs, arrays, dtype) for `op` under the thread's autocast state (unchanged when the
    op has no policy or no region is open on this thread)."""
    name = op.name
    if name not in _LISTED:
        return inputs, arrays, dtype
    device = next((x._device.type for x in inputs if isinstance(x, Tensor)), None)
    if device is None or not _state.enabled.get(device, False):
        return inputs, arrays, dtype
    lower = name in LOWER[device]
    if not lower and name not in FP32[device]:
        return inputs, arrays, dtype
    if lower:
        target = _state.dtype[device]
        eligible = (dt.float32, dt.float16, dt.bfloat16)
    else:
        target = dt.float32
        eligible = (dt.float16, dt.bfloat16)
    cast = [x.dtype in eligible and x.dtype is not target if isinstance(x, Tensor) else False
            for x in inputs]
    if not any(cast):
        return inputs, arrays, dtype
    cache = _state.cache_enabled
    inputs = tuple(_cast(x, target, cache) if c else x for x, c in zip(inputs, cast))
    # Compute on float32 copies of the (rounded) values: NumPy has no fast bfloat16 GEMM.
    f32 = dt.float32.np
    arrays = [x._data.astype(f32) if isinstance(x, Tensor) and x.dtype is target
              and target is not dt.float32 else (x._data if isinstance(x, Tensor) else x)
              for x in inputs]
    if dtype is not None and dtype.category == dt.FLOATING and dtype is not dt.float64:
        dtype = target
    elif dtype is None:
        dtype = target
    return inputs, arrays, dtype


# ---------------------------------------------------------------------- custom_fwd / bwd
def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: runs it under the caller's autocast state,
    or with floating inputs cast to `cast_inputs` and autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _state.dtype[device_type]
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.enabled[device_type]
            return fwd(*args, **kwargs)
        autocast_context = _state.enabled[device_type]
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_floats(args, cast_inputs), **_cast_floats(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it under the forward's autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _cast_floats(value, dtype):
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.dtype is not \
            dt.float64 else value
    if isinstance(value, dict):
        return {k: _cast_floats(v, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(v, dtype) for v in value)
    return value


def autocast_args(policy, *values):
    """Cast the tensors among `values` as autocast's `policy` says ("lower": to the region's
    low-precision dtype, "fp32": to float32), for composite ops (linear, losses) that the
    registry's door cannot see whole. Returns `values` unchanged outside a region."""
    device = next((v._device.type for v in values if isinstance(v, Tensor)), None)
    if device is None or not _state.enabled.get(device, False):
        return values
    if policy == "lower":
        target, eligible = _state.dtype[device], (dt.float32, dt.float16, dt.bfloat16)
    else:
        target, eligible = dt.float32, (dt.float16, dt.bfloat16)
    cache = _state.cache_enabled
    return tuple(_cast(v, target, cache) if isinstance(v, Tensor) and v.dtype in eligible
                 and v.dtype is not target else v for v in values)
