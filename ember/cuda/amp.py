"""ember.cuda.amp (torch.cuda.amp): the deprecated CUDA spellings of ember.amp."""
import functools
import importlib.util
import warnings

from .._dtype import float16 as _float16
from ..amp import autocast_mode as _mode
from ..amp import grad_scaler as _scaler
from . import is_available

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd",
           "amp_definitely_not_available"]


class autocast(_mode.autocast):
    """`torch.cuda.amp.autocast(args...)`: `ember.amp.autocast('cuda', args...)`."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=_float16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_scaler.GradScaler):
    """`torch.cuda.amp.GradScaler(args...)`: `ember.amp.GradScaler('cuda', args...)`."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return _mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    return _mode.custom_bwd(bwd, device_type="cuda")


def amp_definitely_not_available():
    """True when no device ember could run CUDA autocast on is present (no CUDA, no XLA)."""
    return not (is_available() or importlib.util.find_spec("torch_xla"))
