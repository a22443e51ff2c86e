"""ember.nn.attention (torch.nn.attention): SDPBackend and sdpa_kernel, the context manager that
enables only the given scaled_dot_product_attention backends (and optionally their priority)
and restores the previous choice on exit. The flags live in ember.backends.cuda, as PyTorch's
do; ember computes attention one way on every device, so the choice changes no result."""
import contextlib
import enum

from ..backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled_dot_product_attention implementations (PyTorch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


# flag name in ember.backends.cuda -> backend, in PyTorch's order
_BACKEND_NAMES = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                  "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
                  "overrideable": SDPBackend.OVERRIDEABLE}
_overrideable = [True]             # (no such flag in backends.cuda: kept here)
_priority = [1, 2, 0, 3, 4]        # PyTorch's default order of backend values


def _enabled(name):
    if name == "overrideable":
        return _overrideable[0]
    return getattr(_cuda, f"{name}_sdp_enabled")()


def _set(name, enabled):
    if name == "overrideable":
        _overrideable[0] = enabled
    else:
        getattr(_cuda, f"enable_{name}_sdp")(enabled)


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [b for name, b in _BACKEND_NAMES.items() if _enabled(name)]
    if with_priority:
        backends.sort(key=lambda b: _priority.index(int(b)))
    return backends


def _sdpa_kernel(backends, set_priority=False):
    for name, backend in _BACKEND_NAMES.items():
        _set(name, backend in backends)
    if set_priority:
        order = [int(b) for b in backends]
        order += [b for b in _priority if b not in order]
        _priority[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only `backends` (one SDPBackend or a list) inside the block; with
    `set_priority`, their order is also the order in which they are tried."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
