"""nn.Parameter: a Tensor that a Module registers as a learnable weight."""
import numpy as np

from .._printing import tensor_repr
from .._scalars import type_name
from .._tensor import FAST_TYPES, Tensor, _as_subclass, _wrap
from .. import _dtype as dt

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer",
           "UninitializedTensorMixin", "is_lazy"]


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and is picked up by Module.parameters()."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _wrap(__import__("numpy").empty((0,), dtype=dt.get_default_dtype().np),
                         dt.get_default_dtype())
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type_name(data)}")
        p = _as_subclass(data.detach(), cls)
        p._base = None
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + tensor_repr(self, "tensor(")

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result


FAST_TYPES.add(Parameter)


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class UninitializedTensorMixin:
    """The mark of a not-yet-materialized (lazy) parameter or buffer."""
    __slots__ = ()   # (adds no field: materialize() can reassign __class__)

    def materialize(self, shape, device=None, dtype=None):
        d = dtype or self._lazy_dtype
        self._data = np.empty(tuple(shape), dtype=d.np)
        self.dtype = d
        self.__class__ = self.cls_to_become


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (lazy modules materialize it)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        p = super().__new__(cls, None, requires_grad)
        p._lazy_dtype = dtype or dt.get_default_dtype()
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __repr__(self):
        return "<UninitializedParameter>"



class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        t = _as_subclass(_wrap(__import__("numpy").empty((0,), dtype=(
            dtype or dt.get_default_dtype()).np), dtype or dt.get_default_dtype()), cls)
        t._lazy_dtype = dtype or dt.get_default_dtype()
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


class Buffer(Tensor):
    """nn.Buffer: marks a tensor to be registered as a buffer when assigned to a Module."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _wrap(__import__("numpy").empty((0,), dtype=dt.float32.np), dt.float32)
        t = _as_subclass(data.detach(), cls)
        t.persistent = persistent
        return t
