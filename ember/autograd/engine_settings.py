"""torch.autograd's engine switches and small public names: multithreading, view replay,
the gradient-layout policy, Kineto, DeviceType, and the removed `variable`.

ember's engine runs backward in the calling thread and builds gradients in row-major
layout, so the switches change nothing it computes: each keeps and reports its state (what
PyTorch code reads back) and restores it when used as a context manager."""
import enum
import functools

from ..overrides import handle_torch_function, has_torch_function, is_tensor_like  # noqa: F401

__all__ = ["set_multithreading_enabled", "is_multithreading_enabled", "is_view_replay_enabled",
           "enforce_grad_layout_policy", "kineto_available", "DeviceType", "variable",
           "is_tensor_like", "handle_torch_function", "has_torch_function"]

_state = {"multithreading": True, "view_replay": False, "grad_layout_policy": True}


class _Switch:
    """Sets the switch when made (usable as a plain call); as a context manager, restores the
    previous value on exit. Also a decorator, as PyTorch's grad-mode classes are."""
    _key = None

    def __init__(self, mode):
        self.prev = _state[self._key]
        self.mode = mode
        _state[self._key] = mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _state[self._key] = self.prev

    def clone(self):
        return type(self)(self.mode)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper


class set_multithreading_enabled(_Switch):
    """Whether backward may run devices' work on their own threads (ember: one thread)."""
    _key = "multithreading"


class enforce_grad_layout_policy(_Switch):
    """Whether accumulated gradients must take their parameter's strides."""
    _key = "grad_layout_policy"

    def __init__(self, enable=True):
        super().__init__(enable)


def is_multithreading_enabled():
    return _state["multithreading"]


def is_view_replay_enabled():
    return _state["view_replay"]


def kineto_available():
    """False: ember has no Kineto profiler."""
    return False


class DeviceType(enum.IntEnum):
    """The device kinds of PyTorch's profiler events, with PyTorch's numbers (one enum:
    torch.autograd.DeviceType is torch.profiler.DeviceType)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __str__(self):
        return f"DeviceType.{self.name}"


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")
