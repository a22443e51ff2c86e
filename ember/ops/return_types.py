"""Named results of ops that return several tensors (`ember.return_types.max` and friends),
tuples with named fields like PyTorch's structseqs: they unpack, index, compare as tuples."""
import sys

from .. import _names
from .registry import PUBLIC


def _module():
    """ember.return_types, or torch.return_types under `ember run` (as printed)."""
    return f"{_names.MODULE}.return_types"


def _field(i):
    return property(lambda self: tuple.__getitem__(self, i))


class _StructSeq(tuple):
    __slots__ = ()
    _fields = ()

    def __new__(cls, sequence):
        sequence = tuple(sequence)
        if len(sequence) != len(cls._fields):
            raise TypeError(f"{_module()}.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                            f"({len(sequence)}-sequence given)")
        return tuple.__new__(cls, sequence)

    n_fields = property(lambda self: len(self._fields))
    n_sequence_fields = n_fields

    def __repr__(self):
        body = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
        return f"{_module()}.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def _make(name, fields=("values", "indices")):
    cls = type(name, (_StructSeq,), {"__slots__": (), "_fields": fields,
                                      "__module__": "ember.return_types", "__qualname__": name})
    for i, f in enumerate(fields):
        setattr(cls, f, _field(i))
    return cls


max = _make("max")
min = _make("min")
aminmax = _make("aminmax", ("min", "max"))
median = _make("median")
nanmedian = _make("nanmedian")
mode = _make("mode")
kthvalue = _make("kthvalue")
cummax = _make("cummax")
cummin = _make("cummin")
sort = _make("sort")
topk = _make("topk")
frexp = _make("frexp", ("mantissa", "exponent"))
histogram = _make("histogram", ("hist", "bin_edges"))
histogramdd = _make("histogramdd", ("hist", "bin_edges"))

# `ember.return_types` and `import ember.return_types` find this module by its public name.
sys.modules.setdefault("ember.return_types", sys.modules[__name__])
PUBLIC["return_types"] = sys.modules[__name__]
