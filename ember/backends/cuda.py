"""ember.backends.cuda (torch.backends.cuda): matmul precision flags and the attention-kernel
switches. NOTE: not the CUDA array backend (that is cupy_backend.py); this module only holds
the flags PyTorch programs set. ember's GEMMs run in float32 whatever they say."""
import contextlib
import importlib.util

__all__ = ["is_built", "matmul", "cufft_plan_cache", "preferred_linalg_library",
           "enable_flash_sdp", "flash_sdp_enabled", "enable_mem_efficient_sdp",
           "mem_efficient_sdp_enabled", "enable_math_sdp", "math_sdp_enabled",
           "enable_cudnn_sdp", "cudnn_sdp_enabled", "sdp_kernel"]


def is_built():
    """Whether ember can drive CUDA at all (CuPy importable); False on a CPU install."""
    try:
        return importlib.util.find_spec("cupy") is not None
    except (ImportError, ValueError):
        return False


class _Matmul:
    """`torch.backends.cuda.matmul`: allow_tf32 mirrors set_float32_matmul_precision."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
    allow_fp16_accumulation = False

    @property
    def allow_tf32(self):
        from .. import _threads   # (cycle: ember._threads imports ember.backends.cpu_kernels)
        return _threads.float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        from .. import _threads   # (cycle: as above)
        _threads.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


class _PlanCache:
    size = 0
    max_size = 4096

    def clear(self):
        pass


cufft_plan_cache = _PlanCache()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def preferred_linalg_library(backend=None):
    return "default"


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    old = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(old)
