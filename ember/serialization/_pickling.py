"""Pickling in PyTorch's vocabulary: ember objects are written under the torch names that
real PyTorch reads (torch._utils._rebuild_tensor_v2, torch.FloatStorage, torch.float32...),
and read back through an allow-list that imports and calls nothing else."""
import collections
import pickle

import numpy as np

from .. import _dtype as dt
from .. import backends, nn
from .._creation import LEGACY_TYPES, as_tensor
from .._device import device as Device
from .._tensor import Size, Tensor, _as_subclass, _wrap
from ..nn.parameter import Parameter

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
    array, d, device = storage
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
    p = Parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


def rebuild_tensor(storage, storage_offset, size, stride):
    """PyTorch's first rebuild function (no requires_grad)."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      dtype, metadata=None):
    """_rebuild_tensor_v2 over an untyped (byte) storage read as `dtype`."""
    array, _, device = storage
    if array.dtype != dtype.np:
        array = array.view(dtype.np)
    return rebuild_tensor_v2((array, dtype, device), storage_offset, size, stride,
                             requires_grad)


def rebuild_device_tensor(data, dtype, device, requires_grad):
    """_rebuild_device_tensor_from_cpu_tensor / _from_numpy: `data` moved and cast."""
    t = as_tensor(data).to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def rebuild_from_type_v2(func, new_type, args, state):
    """A tensor subclass, or a tensor with attributes: rebuilt by `func`, then given its
    class and state (PyTorch's torch._tensor._rebuild_from_type_v2)."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = _as_subclass(ret, new_type)
    if getattr(type(ret), "__setstate__", None) is not None:
        ret.__setstate__(state)
        return ret
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        for k, v in (slots or {}).items():
            setattr(ret, k, v)
    for k, v in (state or {}).items():
        setattr(ret, k, v)
    return ret


def _get_layout(name):
    import ember  # (cycle: the public package imports this module; layouts live there)
    layout = getattr(ember, name.rpartition(".")[2], None)
    if layout is None:
        raise pickle.UnpicklingError(f"ember has no layout {name}")
    return layout


def _ember_dtype(name):
    return dt._BY_NAME[name]


def _rebuild_device(spec, index=None):
    return Device(spec, index) if index is not None else Device(spec)


def allowed_globals():
    """(module, name) -> object, for every global PyTorch 2.13's weights_only unpickler
    accepts by default that ember can build (the rest: unsupported_globals())."""
    table = {
        ("torch._utils", "_rebuild_tensor"): rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): rebuild_parameter,
        ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor"): rebuild_device_tensor,
        ("torch._utils", "_rebuild_device_tensor_from_numpy"): rebuild_device_tensor,
        ("torch._tensor", "_rebuild_from_type_v2"): rebuild_from_type_v2,
        ("torch.serialization", "_get_layout"): _get_layout,
        ("torch", "Size"): Size,
        ("torch", "device"): _rebuild_device,
        ("torch.nn.parameter", "Parameter"): nn.Parameter,
        ("torch", "Tensor"): Tensor,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("builtins", "set"): set,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): _codecs_encode,
        ("torch.storage", "UntypedStorage"): STORAGE_TYPES["UntypedStorage"],
    }
    for name in STORAGE_NAMES.values():
        table[("torch", name)] = STORAGE_TYPES[name]
    for d in dt.ALL_DTYPES:
        table[("torch", d.name)] = d
    for legacy in LEGACY_TYPES.values():
        if not legacy.__name__.startswith("Complex"):   # (no torch.ComplexFloatTensor type)
            table[("torch", legacy.__name__)] = legacy
    return table


def unsupported_globals():
    """'module.name' -> why, for the globals PyTorch's weights_only unpickler accepts by
    default but ember has no object for (so they fail with that reason, not as unknown)."""
    no_dtype = "ember has no such dtype"
    reasons = {f"torch.{n}": no_dtype for n in (
        "uint16", "uint32", "uint64", "complex32", "bits16", "bits1x8", "bits2x4", "bits4x2",
        "bits8", "float4_e2m1fn_x2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
        "float8_e5m2fnuz", "float8_e8m0fnu", "qint32", "qint8", "quint2x4", "quint4x2",
        "quint8", *(f"int{i}" for i in range(1, 8)), *(f"uint{i}" for i in range(1, 8)))}
    for n in ("per_channel_affine", "per_channel_affine_float_qparams",
              "per_channel_symmetric", "per_tensor_affine", "per_tensor_symmetric"):
        reasons[f"torch.{n}"] = "ember has no quantized tensors"
    for n in ("QInt32Storage", "QInt8Storage", "QUInt2x4Storage", "QUInt4x2Storage",
              "QUInt8Storage", "_utils._rebuild_qtensor"):
        reasons[f"torch.{n}"] = "ember has no quantized tensors"
    for n in ("_rebuild_sparse_tensor", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
              "_rebuild_meta_tensor_no_storage"):
        reasons[f"torch._utils.{n}"] = "ember has only strided tensors on real devices"
    reasons["torch.storage.TypedStorage"] = "ember reads storages by their legacy names"
    real = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte")
    for kind in real + ("Bool",):
        reasons[f"torch.cuda.{kind}Tensor"] = "ember has no legacy CUDA tensor types"
    for kind in real:
        for prefix in ("torch.sparse.", "torch.cuda.sparse."):
            reasons[f"{prefix}{kind}Tensor"] = "ember has no sparse tensors"
    for name in STORAGE_NAMES.values():
        reasons[f"torch.cuda.{name}"] = "ember reads CUDA storages by location instead"
    return reasons


def _codecs_encode(text, encoding="latin1"):
    # NOTE: protocol-2 pickles store bytes as _codecs.encode(str, 'latin1'); only that
    # harmless use is allowed.
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with encoding {encoding!r} is not "
                                     "allowed")
    return text.encode(encoding)
