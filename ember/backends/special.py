"""Special functions and floating-point error state, behind one named function each.

Forwards never name scipy or cupyx: `special_module(array)` gives scipy.special for NumPy
arrays and cupyx.scipy.special for CuPy arrays (both imported lazily: scipy.special costs a
noticeable share of import time).
"""
import numpy as np

from . import array_module

_scipy_special = None
_cupyx_special = None


def special_module(*arrays):
    """scipy.special or cupyx.scipy.special, whichever matches the arrays' module."""
    global _scipy_special, _cupyx_special
    if array_module(*arrays) is np:
        if _scipy_special is None:
            import scipy.special   # (deferred: about 0.2 s of import time)
            _scipy_special = scipy.special
        return _scipy_special
    if _cupyx_special is None:
        import cupyx.scipy.special   # (optional: cupy)
        _cupyx_special = cupyx.scipy.special
    return _cupyx_special


# NOTE: PyTorch returns inf/nan silently where NumPy warns (log(0), 0/0, exp overflow).
# np.errstate costs ~2 us per use; setting NumPy's error-state context variable directly
# costs ~0.3 us, so kernels that can produce inf/nan run under `quiet`.
try:
    from numpy._core import _ufunc_config as _config
    _IGNORE = _config._make_extobj(all="ignore")
    _errstate_var = _config._extobj_contextvar
except (ImportError, AttributeError, TypeError):  # a NumPy without these internals
    _errstate_var = None


def quiet(kernel):
    """Wrap `kernel` so NumPy's floating-point warnings are off while it runs."""
    if _errstate_var is None:
        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return kernel(*args, **kwargs)
    else:
        def run(*args, **kwargs):
            token = _errstate_var.set(_IGNORE)
            try:
                return kernel(*args, **kwargs)
            finally:
                _errstate_var.reset(token)
    run.__name__ = kernel.__name__
    run.__qualname__ = kernel.__qualname__
    run.__doc__ = kernel.__doc__
    return run


def airy_ai(a):
    """The Airy function Ai(a). cupyx.scipy.special has no Airy functions, so a CuPy array
    takes a round trip through the host: correct on every device, not fast there."""
    if array_module(a) is np:
        return special_module(a).airy(a)[0]
    import cupy   # (optional: cupy)
    host = special_module(np.empty(0)).airy(cupy.asnumpy(a))[0]
    with a.device:
        return cupy.asarray(host)
