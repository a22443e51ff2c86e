"""Global numeric settings: BLAS threads (set_num_threads), deterministic algorithms and the
float32 matmul precision.

Threads: ember's parallelism is the BLAS library NumPy loaded (OpenBLAS in NumPy's wheels,
MKL or Accelerate elsewhere). threadpoolctl drives any of them when it is installed; without
it we call OpenBLAS's own setter through ctypes; failing both the value is only recorded.
"""
import builtins
import ctypes
import os
import warnings

from .backends import cpu_kernels

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_float32_matmul_precision", "get_float32_matmul_precision"]

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")

_blas = None          # [(setter, getter)] of the loaded OpenBLAS libraries, found once
_configured = None    # the last set_num_threads value (the answer when no BLAS is reachable)
_interop = None


def _openblas_libraries():
    """(setter, getter) ctypes functions of every OpenBLAS this process has loaded."""
    import numpy  # noqa: F401  (loads its BLAS)
    try:
        import scipy.linalg  # noqa: F401  (SciPy ships its own OpenBLAS)
    except ImportError:
        pass
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(None, 1)[-1]
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(lib, n) for n in _SETTERS if hasattr(lib, n)), None)
        getter = next((getattr(lib, n) for n in _GETTERS if hasattr(lib, n)), None)
        if setter is not None and getter is not None:
            setter.argtypes, getter.restype = [ctypes.c_int], ctypes.c_int
            found.append((setter, getter))
    return found


def _controllers():
    global _blas
    if _blas is None:
        try:
            import threadpoolctl  # (optional: threadpoolctl)
            _blas = threadpoolctl.ThreadpoolController()
        except ImportError:
            _blas = _openblas_libraries()
    return _blas


def set_num_threads(int):
    """Threads of the BLAS behind matmul, conv and linalg, and of ember's compiled kernels
    (PyTorch's intra-op threads)."""
    n = int   # NOTE: PyTorch's parameter is named `int`; builtins.int is the type
    if isinstance(n, bool) or not isinstance(n, builtins.int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    global _configured
    _configured = n
    if cpu_kernels.compiled is not None:
        cpu_kernels.compiled.set_num_threads(n)    # ember's own parallel kernels
    ctl = _controllers()
    if isinstance(ctl, list):
        for setter, _ in ctl:
            setter(n)
    else:
        ctl.limit(limits=n, user_api="blas")


class blas_on_one_thread:
    """`with blas_on_one_thread():` BLAS runs on one thread inside, on the configured count
    again after. For kernels that call BLAS once per time step on small matrices: OpenBLAS
    wakes its thread team for each call, which cost 3x on the LSTM benchmark at 2 threads
    (30 ms a step against 10.5 on one thread)."""

    def __enter__(self):
        ctl = _controllers()
        if isinstance(ctl, list):
            self._restore = [(setter, getter()) for setter, getter in ctl]
            for setter, _ in ctl:
                setter(1)
        else:
            self._restore = ctl.limit(limits=1, user_api="blas")
        return self

    def __exit__(self, *exc):
        if isinstance(self._restore, list):
            for setter, count in self._restore:
                setter(count)
        else:
            self._restore.restore_original_limits()
        return False


def blas_loaded():
    """Call after loading another BLAS (SciPy's, for the compiled kernels): it takes the
    thread count set_num_threads chose, as the ones loaded before it did."""
    global _blas
    _blas = None
    if _configured is not None:
        set_num_threads(_configured)


def get_num_threads():
    ctl = _controllers()
    if isinstance(ctl, list):
        if ctl:
            return ctl[0][1]()
    else:
        counts = [m["num_threads"] for m in ctl.info() if m.get("user_api") == "blas"]
        if counts:
            return counts[0]
    return _configured if _configured is not None else (os.cpu_count() or 1)


def set_num_interop_threads(int):
    """Recorded only: ember runs one op at a time (there is no inter-op pool)."""
    global _interop
    if int <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _interop is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop = int


def get_num_interop_threads():
    return _interop if _interop is not None else (os.cpu_count() or 1)


# ---------------------------------------------------------------------- determinism
_deterministic = [False, False]   # mode, warn_only


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded and reported: every ember CPU kernel is already deterministic."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _deterministic[0], _deterministic[1] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic[1]


# ---------------------------------------------------------------------- matmul precision
_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium'. Recorded only: NumPy's float32 GEMM is always full
    precision (there is no TF32 or bfloat16 internal path on CPU)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision[0] = precision


def get_float32_matmul_precision():
    return _precision[0]


def float32_matmul_precision():
    return _precision[0]
