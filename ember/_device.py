"""`ember.device`: a device type plus an optional index, as PyTorch's."""
import builtins
import re

from . import backends

__all__ = ["device"]

_KNOWN_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
# NOTE: PyTorch's grammar: a type of letters/underscores, then optionally ':' and an index
# without leading zeros ('cuda:01', 'cuda: 1' and ' cpu' are invalid, not normalised).
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")
_UNKNOWN = ("Expected one of " + ", ".join(_KNOWN_TYPES) +
            " device type at start of device string: ")


class device:
    """`device('cpu')`, `device('cuda:1')`, `device('cuda', 1)`; `device(1)` is index 1 of
    the accelerator (CUDA), which must be available."""

    __slots__ = ("type", "index")

    def __new__(cls, type=None, index=None):
        if builtins.type(type) is device:
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not "
                                "ember.device")
            return type
        if isinstance(type, builtins.int) and not isinstance(type, builtins.bool):
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            if "cuda" not in backends.BACKENDS and not _cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            return _make("cuda", type)
        if not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__}), but expected one of:\n"
                            " * (ember.device device)\n"
                            "      didn't match because some of the arguments have invalid "
                            f"types: (!{builtins.type(type).__name__}!)\n"
                            " * (str type, int index = -1)\n")
        match = _DEVICE_RE.fullmatch(type)
        if match is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        kind, idx = match.groups()
        if kind not in _KNOWN_TYPES:
            raise RuntimeError(_UNKNOWN + type)
        if idx is not None:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index "
                                   f"was passed explicitly: {type}")
            index = builtins.int(idx)
        elif index is not None:
            index = builtins.int(index)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        return _make(kind, index)

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # NOTE: as in PyTorch, device('cuda') != device('cuda:0') and device('cpu') != 'cpu'.
        return builtins.type(other) is device and self.type == other.type and \
            self.index == other.index

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        # NOTE: as in PyTorch, `with device(...)` makes it the factories' default device for
        # the block; a stack, since one device object (CPU) may be entered while open.
        _ENTERED.append(_default[0])
        _default[0] = None if self.type == "cpu" and self.index is None else self
        return self

    def __exit__(self, *exc):
        _default[0] = _ENTERED.pop()
        return False


def _cuda_available():
    from . import cuda  # (cycle: ember.cuda imports this module)
    return cuda.is_available()


def _make(kind, index):
    if kind == "cpu" and index is None and "CPU" in globals():
        return CPU   # one object, so the compiled door knows a CPU tensor by identity
    d = object.__new__(device)
    d.type = kind
    d.index = index
    return d


CPU = _make("cpu", None)


def as_device(d):
    """A device from whatever PyTorch accepts as one (None means cpu)."""
    if d is None:
        return CPU
    if type(d) is device:
        return d
    if d == "cpu":
        return CPU
    return device(d)


_PLACED = {}
# The factories' default device (ember.set_default_device); None is the CPU, so that
# placement(None) costs one check on the common path.
_default = [None]
_ENTERED = []


def placement(d):
    """The device a tensor created for `d` lives on: accelerator devices get an index (the
    current one, 0), so `zeros(2, device='cuda').device` is cuda:0, as in PyTorch. None is
    the default device (ember.set_default_device)."""
    if d is None:
        d = _default[0]
    d = as_device(d)
    if d.type == "cpu":
        return CPU
    if d.index is None:
        found = _PLACED.get(d.type)
        if found is None:
            found = _PLACED[d.type] = _make(d.type, 0)
        return found
    return d
