"""`ember.Size`: a tensor's shape, a tuple of ints whose slices and sums stay Sizes."""
import builtins

from . import _names
from ._dtype import INTEGER


class Size(tuple):
    """`ember.Size`: the shape of a tensor, a tuple of ints."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, s in enumerate(sizes):
            if type(s) is not builtins.int:
                from ._tensor import Tensor  # (cycle: _tensor imports this module)
                if isinstance(s, builtins.bool) or not hasattr(s, "__index__") or (
                        isinstance(s, Tensor) and s.dtype.category != INTEGER):
                    raise TypeError(f"{_names.MODULE}.Size() takes an iterable of 'int' (item "
                                    f"{i} is '{type(s).__name__}')")
                s = builtins.int(s.__index__())
            items.append(s)
        return tuple.__new__(cls, items)

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return _size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _size(tuple.__add__(other, self))

    def __mul__(self, n):
        return _size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __repr__(self):
        return f"{_names.MODULE}.Size([{', '.join(map(str, self))}])"

    def __reduce__(self):
        return (Size, (tuple(self),))


def _size(shape):
    """A Size from a tuple of Python ints, unchecked (the hot path: `.shape`)."""
    return tuple.__new__(Size, shape)
