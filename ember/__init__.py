"""ember: a deep-learning framework whose API is PyTorch's, on NumPy (CPU) and CuPy (CUDA)."""
__version__ = "0.1.0"

import importlib as _importlib
import importlib.util as _importlib_util

from . import _allocator  # noqa: F401  (sets the allocator policy: see _allocator.py)
from . import _dtype  # noqa: F401
from ._dtype import (bfloat16, bool, can_cast, cdouble, cfloat, chalf, complex64,  # noqa
                     complex128, double, dtype, finfo, float, float16, float32, float64,
                     get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long,
                     promote_types, result_type, set_default_dtype, short, uint8)
from ._device import device  # noqa: F401
from ._printing import set_printoptions  # noqa: F401
from ._tensor import Size, Tensor  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._creation import range  # noqa: F401
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from . import ops as _ops  # noqa: F401  (registers every op)
from .ops.registry import PUBLIC as _PUBLIC
from . import autograd, cuda, nn, optim, utils  # noqa: F401
from . import serialization  # noqa: F401
from . import _nn_aliases
from . import debug  # noqa: F401
from .serialization import load, save  # noqa: F401
from ._random import (Generator, default_generator, get_rng_state,  # noqa: F401
                      initial_seed, manual_seed, seed, set_rng_state)
_nn_aliases.install(globals())

globals().update({k: v for k, v in _PUBLIC.items() if not k.startswith("_")})
from . import linalg  # noqa: E402,F401  (after the op table: no function shadows it)
from . import sparse  # noqa: E402,F401  (after the op table: it adds sparse methods)
from .sparse import sparse_coo_tensor, sparse_csr_tensor  # noqa: E402,F401
from .sparse import (sparse_bsc_tensor, sparse_bsr_tensor,  # noqa: E402,F401
                     sparse_compressed_tensor, sparse_csc_tensor)
from .sparse.products import hspmm, smm, spmm, sspaddmm  # noqa: E402,F401
from . import accelerator, amp, backends, version  # noqa: E402,F401
from ._threads import (are_deterministic_algorithms_enabled,  # noqa: E402,F401
                       get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                       is_deterministic_algorithms_warn_only_enabled,
                       set_float32_matmul_precision, set_num_interop_threads, set_num_threads,
                       use_deterministic_algorithms)
from .amp import GradScaler, autocast  # noqa: E402,F401
from .amp.autocast_mode import (clear_autocast_cache, get_autocast_dtype,  # noqa: E402,F401
                                is_autocast_cache_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from .autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401
from math import e, inf, nan, pi  # noqa: E402,F401  (torch.e, torch.inf, ...)
from ._constants import *  # noqa: E402,F401,F403  (layouts, memory formats, more dtypes)
from ._runtime_settings import *  # noqa: E402,F401,F403  (warn_always, typename, ...)
from ._default_device import get_default_device, set_default_device  # noqa: E402,F401
from ._control_flow import cond, fork, wait, while_loop  # noqa: E402,F401
from ._symbolic_scalars import *  # noqa: E402,F401,F403
from ._buffer_factories import empty_permuted, from_file, frombuffer  # noqa: E402,F401
from ._dlpack import from_dlpack, to_dlpack  # noqa: E402,F401
from ._legacy_products import dsmm, hsmm, saddmm  # noqa: E402,F401
from ._package_utils import *  # noqa: E402,F401,F403  (get_file_path, classproperty, ...)
from .storage import TypedStorage, UntypedStorage  # noqa: E402,F401
from ._legacy_storages import *  # noqa: E402,F401,F403  (FloatStorage, ...)
from .futures import Future  # noqa: E402,F401
from ._generic_streams import Event, Stream  # noqa: E402,F401
from .cuda import OutOfMemoryError  # noqa: E402,F401

newaxis = None  # (torch.newaxis, as NumPy's: x[:, torch.newaxis])


def is_floating_point(input):
    _ops.registry.check_tensor("is_floating_point", input)
    return input.is_floating_point()


def is_complex(input):
    _ops.registry.check_tensor("is_complex", input)
    return input.is_complex()


def is_nonzero(input):
    _ops.registry.check_tensor("is_nonzero", input)
    return input.is_nonzero()


# Heavy and rarely needed: imported on first use.
_LAZY_SUBMODULES = ("vision", "distributions", "hub", "jit", "fft", "special",
                     "testing", "random")


def __getattr__(name):
    if name == "vmap":   # torch.vmap is torch.func.vmap
        from .func import vmap  # (not at the top, so vmap stays out of ember's globals)
        return vmap
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    # Every other submodule loads on first attribute access too, as torch's do
    # (`torch.multiprocessing.get_start_method()` after a plain `import torch`).
    if not name.startswith("_") or name == "_dynamo":
        if _importlib_util.find_spec(f"{__name__}.{name}") is not None:
            return _importlib.import_module(f"{__name__}.{name}")
    # NOTE: a PyTorch program asking for an API ember lacks gets an error naming it.
    if name.startswith("__"):
        raise AttributeError(f"module 'ember' has no attribute '{name}'")
    raise AttributeError(f"module 'ember' has no attribute '{name}' (torch.{name} is not "
                         "implemented in ember yet)")


from ._signatures import install as _install_signatures  # noqa: E402
_install_signatures(globals(), Tensor, nn.functional)   # PyTorch's argument-type checks
debug.enable_from_environment()
