"""The legacy typed storage classes of torch's namespace (FloatStorage, LongStorage, ...,
and Storage, which is FloatStorage). As in PyTorch they are constructors and type tests, not
types of their own: `FloatStorage(3)` returns a TypedStorage of float32, and
`isinstance(t.storage(), FloatStorage)` holds for any float32 TypedStorage."""
import numpy as np

from . import _dtype as dt
from . import _names
from ._device import CPU
from .storage import TypedStorage, UntypedStorage

_NAMES = {"BFloat16Storage": "bfloat16", "BoolStorage": "bool", "ByteStorage": "uint8",
          "CharStorage": "int8", "ComplexDoubleStorage": "complex128",
          "ComplexFloatStorage": "complex64", "DoubleStorage": "float64",
          "FloatStorage": "float32", "HalfStorage": "float16", "IntStorage": "int32",
          "LongStorage": "int64", "ShortStorage": "int16"}

__all__ = list(_NAMES) + ["Storage"]


class _LegacyStorageType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class '{_names.MODULE}.{cls.__name__}'>"


class _LegacyStorage(metaclass=_LegacyStorageType):
    dtype = None

    def __new__(cls, *args, wrap_storage=None, **kwargs):
        if kwargs or (wrap_storage is not None and args) or len(args) > 1:
            raise RuntimeError(
                f"{cls!r}.__new__ received an invalid combination of arguments. Expected one "
                "of:\n * no arguments\n * (int size)\n * (Sequence data)\n * (*, UntypedStorage "
                "wrap_storage)" + "".join(f"\nKeyword argument '{k}' cannot be specified"
                                          for k in kwargs))
        if wrap_storage is not None:
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected UntypedStorage for argument 'wrap_storage', but got "
                                f"{type(wrap_storage).__name__}")
            return TypedStorage(wrap_storage, cls.dtype)
        if not args:
            values = np.empty(0, cls.dtype.np)
        elif isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            values = np.zeros(int(args[0]), cls.dtype.np)
        else:
            values = np.asarray(list(args[0])).astype(cls.dtype.np)
        return TypedStorage(UntypedStorage._of(values.reshape(-1), CPU), cls.dtype)


def _make(name, dtype_name):
    return _LegacyStorageType(name, (_LegacyStorage,), {
        "dtype": getattr(dt, dtype_name), "__module__": "ember", "__qualname__": name,
        "__doc__": f"A TypedStorage of {dtype_name} (legacy constructor)."})


globals().update({name: _make(name, d) for name, d in _NAMES.items()})

Storage = globals()["FloatStorage"]
