"""`ember.device`: a device type plus an optional index, as PyTorch's."""
import builtins

__all__ = ["device"]

_KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "privateuseone")


class device:
    """`device('cpu')`, `device('cuda:1')`, `device('cuda', 1)`, `device(1)` (a CUDA index)."""

    __slots__ = ("type", "index")

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str if index is None else _make(type_or_str.type, index)
        if isinstance(type_or_str, builtins.int):
            if type_or_str < 0:
                raise RuntimeError(f"Device index must not be negative")
            return _make("cuda", type_or_str)
        if not isinstance(type_or_str, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type(type_or_str).__name__})")
        text = type_or_str.strip()
        kind, sep, idx = text.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index "
                                   f"was passed explicitly: {text}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{text}'")
            index = builtins.int(idx)
        if kind not in _KNOWN_TYPES:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, "
                "fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device "
                f"type at start of device string: {text}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative")
        return _make(kind, index)

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and self.type == other.type and \
            self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _make(kind, index):
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
