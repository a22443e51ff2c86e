"""Tensor methods of layouts, devices and dtypes ember does not have (quantized, MKL-DNN and
nested tensors; IPU, XPU and MTIA devices; uint64 results) and of removed APIs. Each raises
PyTorch's exception type with a message that says what ember does not support, so code that
probes for these features takes its fallback path, as it does on a PyTorch build without
them. `dequantize` of an ordinary tensor is PyTorch's float32 conversion and works."""
import warnings

from .. import _dtype as dt
from .._scalars import type_name
from .._signatures.signature import KINDS
from .registry import METHODS, check_tensor, export


def _no_kernel(op, what):
    return NotImplementedError(f"Could not run 'aten::{op}' with arguments from the 'CPU' "
                               f"backend: ember does not support {what}.")


# ---------------------------------------------------------------------- quantized tensors
@export
def dequantize(input):
    """A non-quantized tensor dequantizes to float32 (itself when it is float32 already)."""
    check_tensor("dequantize", input)
    return input if input.dtype is dt.float32 else input.to(dt.float32)


def _quantized_only(name):
    def method(self, *args, **kwargs):
        raise _no_kernel(name, "quantized tensors")
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    return method


for _name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
              "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
    METHODS[_name] = _quantized_only(_name)


# ---------------------------------------------------------------------- other layouts
def to_mkldnn(self, dtype=None):
    raise RuntimeError("ember does not support MKL-DNN tensors (layout torch._mkldnn); "
                       "use the strided tensor itself")


def to_padded_tensor(self, padding, output_size=None):
    raise _no_kernel("to_padded_tensor", "nested tensors")


# ---------------------------------------------------------------------- other devices
def _check_move(name, device, non_blocking, memory_format):
    """The argument parser's checks of PyTorch's x.ipu()/xpu()/mtia() and its device
    lookup, which come before the missing backend is noticed."""
    for arg, value, kind in (("device", device, "torch.device"),
                             ("non_blocking", non_blocking, "bool"),
                             ("memory_format", memory_format, "torch.memory_format")):
        if value is not None and not KINDS[kind][0](value) or value is None and kind == "bool":
            raise TypeError(f"{name}(): argument '{arg}' must be {KINDS[kind][1]}, not "
                            f"{type_name(value)}")
    if isinstance(device, str):
        raise RuntimeError(f"Invalid device, must be {name.upper() if name == 'mtia' else name} "
                           "device")
    if device is not None:
        raise RuntimeError("Cannot access accelerator device when none is available.")


def ipu(self, device=None, non_blocking=False, memory_format=None):
    _check_move("ipu", device, non_blocking, memory_format)
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def xpu(self, device=None, non_blocking=False, memory_format=None):
    _check_move("xpu", device, non_blocking, memory_format)
    raise AssertionError("Torch not compiled with XPU enabled")


def mtia(self, device=None, non_blocking=False, memory_format=None):
    _check_move("mtia", device, non_blocking, memory_format)
    raise AssertionError("Torch not compiled with MTIA enabled")


def record_stream(self, stream):
    """Only CUDA memory waits for streams; PyTorch has no CPU kernel for it either."""
    if not type(stream).__name__.endswith("Stream"):   # torch's parser: a Stream, or this
        raise RuntimeError("unknown parameter type")
    if self._device.type == "cuda":
        return None   # (CuPy's memory pool orders frees on the stream the memory came from)
    raise _no_kernel("record_stream", f"record_stream on {self._device.type} tensors")


# ---------------------------------------------------------------------- removed / unsupported
def reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\n"
        "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
        "probs = policy_network(state)\naction = probs.multinomial()\n"
        "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
        "Use:\n\nprobs = policy_network(state)\n"
        "# NOTE: categorical is equivalent to what used to be called multinomial\n"
        "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
        "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
        "loss.backward()\n")


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


# `volatile` (removed: always False) and `name` (a legacy attribute: always None, read-only)
volatile = property(_volatile_get, _volatile_set)
name = property(lambda self: None)


@export
def hash_tensor(input, dim=(), *, keepdim=False, mode=0, out=None):
    raise TypeError("ember does not support hash_tensor: its result dtype, uint64, is not an "
                    "ember tensor dtype")


METHODS.update({"to_mkldnn": to_mkldnn, "to_padded_tensor": to_padded_tensor, "ipu": ipu,
                "xpu": xpu, "mtia": mtia, "record_stream": record_stream,
                "reinforce": reinforce, "volatile": volatile, "name": name})
