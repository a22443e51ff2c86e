"""The compiled CPU kernel layer, or its NumPy stand-in.

`compiled` is the extension module `ember.backends._kernels` (built by `pip install -e .` from
`csrc/`) or None: when the build is missing, or when EMBER_KERNELS=numpy asks for the NumPy
path. Callers ask `compiled` for the fast kernel and otherwise run their NumPy reference;
the functions here are the ones whose NumPy form lives in this file.

NOTE: `libm` applies the C library's own log/exp/sin/... on both paths. NumPy's float64 and
float32 loops for these functions are chosen per CPU at run time (its AVX-512 builds round
differently from the C library), and PyTorch's scalar kernels call the C library."""
import importlib.util
import math
import os
import warnings

import numpy as np

ENV = "EMBER_KERNELS"


def _load():
    choice = os.environ.get(ENV, "").lower()
    if choice == "numpy":
        return None, None
    # NOTE: the team keeps OpenMP's default wait policy (libgomp: a thread spins about 3 ms
    # after a loop, then sleeps), as PyTorch's does: a training step's kernels come well
    # inside that, and waking sleeping threads cost 2-75 us a loop on a 2-core VM (2-thread
    # MLP and GPT steps at 0.67-0.69 of PyTorch waiting passively, 0.90 spinning). Nothing
    # else needs the cores meanwhile: float32 products never go to OpenBLAS's own threads
    # (backends/matmul.py), whose spinning took the team's cores when they did.
    try:
        from . import _kernels   # (optional: the compiled build may be missing)
    except ImportError as exc:
        # A missing file reads as "cannot import name ... (most likely due to a circular
        # import)", which would send a reader to the wrong place: name the missing file.
        if importlib.util.find_spec(__package__ + "._kernels") is None:
            return None, f"no extension module _kernels in {os.path.dirname(__file__)}"
        return None, exc
    return _kernels, None


compiled, _missing = _load()
_warned = False


def note_fallback():
    """Say once that the compiled kernels are missing (not when EMBER_KERNELS=numpy chose the
    NumPy path on purpose)."""
    global _warned
    if _warned or compiled is not None or _missing is None:
        return
    _warned = True
    warnings.warn("ember's compiled CPU kernels are not built (" + str(_missing) + "); "
                  "running on the NumPy path, which is slower. Reinstall with a C compiler "
                  "present (pip install -e .) to build them.", RuntimeWarning, stacklevel=3)


def kernel_input(a, kernels):
    """`a` as a C-contiguous float32/float64 NumPy array for the compiled kernels (float16 and
    bfloat16 as float32, PyTorch's opmath), or None when they cannot take it (another array
    module, or no build). `kernels`: the caller's reference to the compiled module (tests set
    it to None to run the NumPy reference)."""
    if kernels is None or type(a) is not np.ndarray:
        if kernels is None:
            note_fallback()
        return None
    a = a.astype(np.float32) if a.dtype.itemsize < 4 else a
    # NOTE: not np.ascontiguousarray, which makes a 0-d array 1-d
    return a if a.flags.c_contiguous else a.copy(order="C")


_PY64 = {"log": math.log, "log1p": math.log1p, "exp": math.exp, "sin": math.sin,
         "cos": math.cos, "tan": math.tan}
_C32 = {}


def _libm32(name):
    """The C library's float function `name`f through ctypes (slow, exact)."""
    if name not in _C32:
        import ctypes.util   # (deferred: it loads subprocess, which `import ember` does not)
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = getattr(lib, name + "f")
        fn.argtypes, fn.restype = [ctypes.c_float], ctypes.c_float
        _C32[name] = np.frompyfunc(fn, 1, 1)
    return _C32[name]


def _overflow_safe(fn):
    """math's functions raise where the C library returns inf or nan; give those back."""
    def call(x):
        try:
            return fn(x)
        except (OverflowError, ValueError):
            return float(np.exp(np.float64(x))) if fn is math.exp else \
                (float("-inf") if x == 0 or (fn is math.log1p and x == -1) else float("nan"))
    return call


_PY64_SAFE = {name: np.frompyfunc(_overflow_safe(fn), 1, 1) for name, fn in _PY64.items()}


def libm(name, x):
    """The C library's `name` (log, log1p, exp, sin, cos, tan) applied to float32 or float64
    array `x` in place; returns x."""
    if compiled is not None and x.flags.c_contiguous and x.flags.writeable:
        compiled.libm(name, x)
        return x
    note_fallback()
    if x.dtype == np.float32:
        x[...] = _libm32(name)(x)
    else:
        x[...] = _PY64_SAFE[name](x)
    return x
