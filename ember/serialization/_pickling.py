"""Pickling in PyTorch's vocabulary: ember objects are written under the torch names that
real PyTorch reads (torch._utils._rebuild_tensor_v2, torch.FloatStorage, torch.float32...),
and read back through an allow-list that imports and calls nothing else."""
import collections
import pickle

from .. import _dtype as dt
from .._device import device as Device
from .._tensor import Size, Tensor

STORAGE_NAMES = {
    dt.float32: "FloatStorage", dt.float64: "DoubleStorage", dt.float16: "HalfStorage",
    dt.bfloat16: "BFloat16Storage", dt.int64: "LongStorage", dt.int32: "IntStorage",
    dt.int16: "ShortStorage", dt.int8: "CharStorage", dt.uint8: "ByteStorage",
    dt.bool: "BoolStorage", dt.complex64: "ComplexFloatStorage",
    dt.complex128: "ComplexDoubleStorage"}
STORAGE_DTYPES = {name: d for d, name in STORAGE_NAMES.items()}
STORAGE_DTYPES["UntypedStorage"] = dt.uint8


class StorageType:
    """Stands for torch.<X>Storage in pickles: only its dtype matters."""

    def __init__(self, name):
        self.name = name
        self.dtype = STORAGE_DTYPES[name]

    def __repr__(self):
        return f"torch.{self.name}"


STORAGE_TYPES = {name: StorageType(name) for name in STORAGE_DTYPES}


class _TorchGlobal:
    """A marker pickled as the global `module.name` (PyTorch's own function names)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle requires reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is a pickling marker, not a function")


REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")


class StorageRef:
    """The persistent id of one storage: key, dtype, element count, location."""

    def __init__(self, key, dtype, numel, location="cpu"):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location

    def persistent_id(self):
        return ("storage", STORAGE_TYPES[STORAGE_NAMES[self.dtype]], self.key, self.location,
                self.numel)


class TorchPickler(pickle._Pickler):
    """The pure-Python pickler, so that globals can be written under torch's names (the C
    pickler insists on importing the module it names). Tensors are reduced to
    _rebuild_tensor_v2 over storages that `storage_of(tensor)` registers."""

    def __init__(self, file, protocol, storage_of):
        super().__init__(file, protocol)
        self.storage_of = storage_of

    def persistent_id(self, obj):
        if isinstance(obj, StorageRef):
            return obj.persistent_id()
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, dt.dtype):
            return obj.name  # -> save_global(obj, name), mapped to torch.<dtype> below
        if isinstance(obj, Device):
            return (_TorchGlobal("torch", "device"), (str(obj),))
        if type(obj) is Size:
            return (_TorchGlobal("torch", "Size"), (tuple(obj),))
        if isinstance(obj, (StorageType, _TorchGlobal)):
            return obj.name  # -> save_global, which writes the torch name
        return NotImplemented

    def _reduce_tensor(self, t):
        from ..nn.parameter import Parameter
        if t._requires_grad and t.grad_fn is not None:
            raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which "
                               "requires_grad, since autograd does not support crossing "
                               "process boundaries.  If you just want to transfer the data, "
                               "call detach() on the tensor before serializing (e.g., putting "
                               "it on the queue).")
        ref, offset, strides = self.storage_of(t)
        rebuilt = (REBUILD_TENSOR, (ref, offset, tuple(t.shape), strides,
                                    t._requires_grad and not isinstance(t, Parameter),
                                    collections.OrderedDict()))
        if isinstance(t, Parameter):
            inner = _Rebuilt(rebuilt)
            return (REBUILD_PARAMETER, (inner, t._requires_grad, collections.OrderedDict()))
        return rebuilt

    def save_global(self, obj, name=None):
        if isinstance(obj, _TorchGlobal):
            module, name = obj.module, obj.name
        elif isinstance(obj, dt.dtype):
            module, name = "torch", obj.name
        elif isinstance(obj, StorageType):
            module, name = "torch", obj.name
        else:
            return super().save_global(obj, name)
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" +
                       name.encode("utf-8") + b"\n")
        self.memoize(obj)


class _Rebuilt:
    """A nested reduce (the tensor inside _rebuild_parameter)."""

    def __init__(self, reduce_value):
        self.reduce_value = reduce_value

    def __reduce__(self):
        return self.reduce_value


# ---------------------------------------------------------------------- loading
def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                      backward_hooks=None, metadata=None):
    """A tensor viewing `storage` (a 1-D array) at offset/size/stride, checked to fit."""
    from .. import backends
    from .._tensor import _wrap
    array, d, device = storage
    import numpy as np
    size, stride = tuple(size), tuple(stride)
    needed = storage_offset + (sum((s - 1) * st for s, st in zip(size, stride)) + 1
                               if all(s > 0 for s in size) else 0)
    if needed > array.size or storage_offset < 0:
        raise RuntimeError(f"Trying to load a tensor of size {list(size)} with stride "
                           f"{list(stride)} at storage offset {storage_offset}, but its "
                           f"storage holds only {array.size} elements: the checkpoint is "
                           "truncated or corrupt")
    item = array.itemsize
    view = np.lib.stride_tricks.as_strided(array[storage_offset:] if array.size else array,
                                           shape=size, strides=[s * item for s in stride])
    if device.type == "cpu":
        t = _wrap(view, d)
    else:
        t = _wrap(backends.to_device(device, view), d, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from ..nn.parameter import Parameter
    p = Parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


def _ember_dtype(name):
    return dt._BY_NAME[name]


def _rebuild_device(spec, index=None):
    return Device(spec, index) if index is not None else Device(spec)


def allowed_globals():
    """(module, name) -> object that PyTorch's weights_only unpickler accepts by default."""
    from .. import nn
    table = {
        ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): rebuild_parameter,
        ("torch", "Size"): Size,
        ("torch", "device"): _rebuild_device,
        ("torch.nn.parameter", "Parameter"): nn.Parameter,
        ("torch", "Tensor"): Tensor,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "slice"): slice,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("builtins", "range"): range,
        ("_codecs", "encode"): _codecs_encode,
    }
    for name in STORAGE_DTYPES:
        table[("torch", name)] = STORAGE_TYPES[name]
    for d in dt.ALL_DTYPES:
        table[("torch", d.name)] = d
    return table


def _codecs_encode(text, encoding="latin1"):
    # NOTE: protocol-2 pickles store bytes as _codecs.encode(str, 'latin1'); only that
    # harmless use is allowed.
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with encoding {encoding!r} is not "
                                     "allowed")
    return text.encode(encoding)
