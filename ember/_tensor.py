"""Tensor: one backend array plus dtype, device and the autograd fields.

Ops and most methods are attached from the op registry (`ops/`); this file holds what a
Tensor is: its fields, geometry, autograd fields and the in-place protocol every `op_` method
shares. Its conversions to Python and NumPy are in _tensor_conversions.py, its hooks and
backward in autograd/tensor_methods.py (attached to the class from there).
"""
import builtins
import warnings

import numpy as np

from . import _constants
from . import _dtype as dt
from . import backends
from ._device import CPU
from ._device import device as device_cls
from ._printing import tensor_repr
from ._scalars import type_name
from ._size import Size, _size  # noqa: F401  (ember.Size; Tensor.shape builds one)
from .backends import cpu_kernels

__all__ = ["Tensor", "Size"]



class _Version:
    """The version counter, shared by a tensor and all its views; bumped by in-place ops."""

    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


# Classes whose instances are plain tensors for the hot paths (nn.Parameter adds itself).
FAST_TYPES = set()


def _wrap(array, dtype, device=CPU, cls=None):
    """A new Tensor around `array` (no copy, no checks): the constructor of the hot path.
    `cls`: a subclass instead (the sparse layouts, vmap's and forward AD's wrappers)."""
    t = _new(Tensor if cls is None else cls)
    t._data = array
    t.dtype = dtype
    t._device = device
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._output_nr = 0
    version = _new(_Version)  # NOTE: no __init__ frame: this runs for every op's result
    version.v = 0
    t._vc = version
    t._base = None
    t._accumulator = None
    t._retains_grad = False
    return t


_new = object.__new__


def _address(array):
    """The address of an array's first element (host or device memory)."""
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr


class Tensor:
    """An n-dimensional array on a device, with autograd."""

    __slots__ = ("_data", "dtype", "_device", "_requires_grad", "_grad", "grad_fn",
                 "_output_nr", "_vc", "_base", "_accumulator", "_retains_grad",
                 "__dict__", "__weakref__")
    __array_priority__ = 1000
    __array_ufunc__ = None  # make NumPy defer to our reflected operators
    is_sparse = False
    is_quantized = False
    is_meta = False
    is_mkldnn = False
    # Devices and layouts ember has no tensors on (PyTorch's predicates, always False here).
    is_sparse_csr = is_nested = is_ipu = is_maia = is_mps = is_mtia = is_vulkan = False
    is_xla = is_xpu = False
    layout = _constants.strided

    def __new__(cls, *args, device=None):
        """Legacy constructor: `Tensor(2, 3)` (uninitialised float) or `Tensor([1., 2.])`."""
        from ._creation import legacy_new  # (cycle: _creation imports this module)
        return legacy_new(cls, dt.get_default_dtype(), args, device)

    def __init__(self, *args, **kwargs):
        pass

    # ------------------------------------------------------------------ shape and layout
    @property
    def shape(self):
        return tuple.__new__(Size, self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return tuple.__new__(Size, self._data.shape)
        if self._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[self._wrap_dim(dim)]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self.dtype.itemsize

    def stride(self, dim=None):
        a = self._data
        # NOTE: NumPy leaves the strides of size-1 and empty dimensions arbitrary; a
        # C-contiguous array reports PyTorch's contiguous strides instead.
        if a.flags.c_contiguous:
            strides = _contiguous_strides(a.shape)
        else:
            item = self.dtype.itemsize
            strides = tuple(s // item for s in a.strides)
        if dim is None:
            return strides
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return strides[self._wrap_dim(dim)]

    def is_contiguous(self, memory_format=None):
        return builtins.bool(self._data.flags.c_contiguous)

    def storage_offset(self):
        # NOTE: the base chain ends at the array owning the memory (NumPy's may end in bytes
        # or an mmap, which count as the start of storage too); CuPy arrays have no ctypes.
        a = base = self._data
        while getattr(base, "base", None) is not None and (
                hasattr(base.base, "ctypes") or not isinstance(a, np.ndarray)):
            base = base.base
        if base is a:
            return 0
        return (_address(a) - _address(base)) // self.dtype.itemsize

    def data_ptr(self):
        return 0 if self._data.size == 0 else _address(self._data)

    def _wrap_dim(self, dim):
        n = self._data.ndim
        lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
        if not lo <= dim <= hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, "
                             f"{hi}], but got {dim})")
        return dim + n if dim < 0 else dim

    # ------------------------------------------------------------------ device and type
    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def is_floating_point(self):
        return self.dtype.category == dt.FLOATING

    def is_complex(self):
        return self.dtype.category == dt.COMPLEX

    def is_signed(self):
        return self.dtype.is_signed

    # ------------------------------------------------------------------ autograd fields
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if flag and self.dtype.category < dt.FLOATING and self.grad_fn is None:
            # NOTE: PyTorch words this one differently from requires_grad_()'s
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        requires_grad = builtins.bool(requires_grad)
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self.dtype.category < dt.FLOATING:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._device != self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _version(self):
        """How many times this tensor's storage was modified in place (an int, as PyTorch's);
        views share the counter `_vc`."""
        return self._vc.v

    @property
    def data(self):
        # NOTE: like PyTorch, `.data` gets a fresh version counter: changes made through it
        # are invisible to autograd (the unsafe escape hatch optimizers used to rely on).
        return _wrap(self._data, self.dtype, self._device)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data
        self.dtype = value.dtype
        self._device = value._device

    def detach(self):
        t = _wrap(self._data, self.dtype, self._device)
        t._vc = self._vc
        t._base = self if self._base is None else self._base
        return t

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _grad_fn(self):
        return self.grad_fn

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self, tensor_contents=tensor_contents)

    def __str__(self):
        return self.__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._host().copy(), self.dtype.name, str(self._device),
                           self._requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = _wrap(self._data.copy(), self.dtype, self._device)
        if type(self) is not Tensor:
            new = _as_subclass(new, type(self))
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        new.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = new
        return new

    # ------------------------------------------------------------------ misc
    def __dir__(self):
        return sorted(set(object.__dir__(self)))

    def __class_getitem__(cls, item):
        return cls

    def share_memory_(self):
        """Move the data into shared memory so other processes map the same values."""
        # (deferred: ember.multiprocessing loads Python's multiprocessing and sockets)
        from .multiprocessing.reductions import share_memory_
        return share_memory_(self)

    def is_shared(self):
        return getattr(self, "_shm_name", None) is not None

    def is_distributed(self):
        return False

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """PyTorch's default: run `func` with dispatch off, tensor results as `cls` (what a
        subclass's `super().__torch_function__(...)` reaches; see ember/overrides.py)."""
        from .overrides import tensor_torch_function  # (cycle: overrides imports this module)
        return tensor_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls):
        """`self`'s data (and autograd history) as an instance of Tensor subclass `cls`."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit "
                            "from Tensor is not possible. Make sure your class inherits from "
                            "Tensor.")
        return _as_subclass(self, cls)

    def is_coalesced(self):
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "Strided")

    def is_set_to(self, tensor):
        """Whether both tensors view the same memory with the same sizes and strides."""
        if not isinstance(tensor, Tensor):
            raise TypeError("is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                            f"{type_name(tensor)}")
        a, b = self._data, tensor._data
        if self._device != tensor._device or a.shape != b.shape or a.strides != b.strides:
            return False
        # (an empty tensor has no address to compare: only the same array is set to it)
        return a is b if a.size == 0 else _address(a) == _address(b)


def _as_subclass(t, cls):
    new = object.__new__(cls)
    for name in Tensor.__slots__:
        if name not in ("__dict__", "__weakref__"):
            setattr(new, name, getattr(t, name))
    return new


def _rebuild(array, dtype_name, device, requires_grad):
    where = device_cls(device)
    t = _wrap(backends.to_device(where, array), dt._BY_NAME[dtype_name], where)
    t._requires_grad = requires_grad
    return t


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


# ---------------------------------------------------------------------- autograd helpers
def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`, undoing broadcasting: the one place this happens."""
    extra = grad._data.ndim - len(shape)
    dims = tuple(range(extra)) + tuple(
        i + extra for i, s in enumerate(shape) if s == 1 and grad._data.shape[i + extra] != 1)
    # (the ops through the methods they bind on Tensor: this module sits below the ops)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if extra or grad._data.shape != shape:
        grad = grad.reshape(shape)
    return grad


def _compiled_wrap():
    """`_wrap` as compiled by the kernel layer (backends/csrc/dispatch.c) when it is built:
    the same fields set without a Python frame (it runs for nearly every op's result);
    `_wrap` above stays the definition and the NumPy path's version."""
    compiled = cpu_kernels.compiled
    if compiled is None:
        return _wrap
    compiled.tensor_setup(Tensor, _Version, CPU)
    return compiled.wrap


wrap_as = _wrap   # (the definition, which also makes subclasses: the compiled twin does not)
_wrap = _compiled_wrap()

from ._inplace import write_out  # noqa: E402,F401  (the ops' `out=`, read from here)
from . import _tensor_conversions  # noqa: E402,F401  (attaches item, numpy, __float__, ...)

FAST_TYPES.add(Tensor)
