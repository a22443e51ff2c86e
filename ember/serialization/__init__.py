"""ember.save / ember.load in PyTorch's checkpoint format, safe by default.

`save` writes the zip layout real PyTorch writes (its `torch.load` reads our files);
`load` reads it (and the legacy non-zip format) with an allow-list unpickler unless
`weights_only=False`. safetensors files are read and written too.
"""
import contextlib
import importlib
import io
import mmap as mmap_module
import os
import pickle

import numpy as np

from .. import cuda
from .._device import as_device, placement
from .._tensor import Tensor, _contiguous_strides, _wrap
from ..nn import Parameter
from . import _pickling
from ._legacy import load_legacy
from ._safetensors import load_safetensors, save_safetensors  # noqa: F401
from ._weights_only import WeightsOnlyUnpickler, weights_only_message
from ._zip import CheckpointReader, CheckpointWriter, archive_name, is_zipfile
from ._options import (  # noqa: F401
    LoadEndianness, file_is_big_endian, get_crc32_options, get_default_load_endianness,
    get_default_mmap_options, options, set_crc32_options, set_default_load_endianness,
    set_default_mmap_options, skip_data)
from ._locations import (  # noqa: F401
    default_restore_location, location_tag, normalize_storage_type, register_package,
    storage_to_tensor_type, validate_cuda_device)
from ._compat import (  # noqa: F401
    SourceChangeWarning, check_module_version_greater_or_equal, get_source_lines_and_file,
    get_unsafe_globals_in_checkpoint, mkdtemp)
from ._pickling import StorageType  # noqa: F401
from ..types import Storage  # noqa: F401

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals",
           "clear_safe_globals", "save_safetensors", "load_safetensors",
           "DEFAULT_PROTOCOL", "LoadEndianness", "get_default_load_endianness",
           "set_default_load_endianness", "get_default_mmap_options", "set_default_mmap_options",
           "get_crc32_options", "set_crc32_options", "skip_data", "SourceChangeWarning",
           "get_unsafe_globals_in_checkpoint", "default_restore_location", "location_tag",
           "normalize_storage_type", "storage_to_tensor_type", "register_package",
           "validate_cuda_device", "check_module_version_greater_or_equal", "mkdtemp"]

DEFAULT_PROTOCOL = 2
_user_safe_globals = []


# ---------------------------------------------------------------------- allow-list
def add_safe_globals(safe_globals):
    """Allow these globals (objects, or (object, "module.name") pairs) in weights_only
    loads."""
    _user_safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_user_safe_globals)


def clear_safe_globals():
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    before = list(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals[:] = before


def _user_table():
    """'module.name' -> object for the user's safe globals (PyTorch's
    _get_user_allowed_globals), each ember object also under its torch name, which is what
    pickles written by PyTorch (or under `ember run`) carry."""
    table = {}
    for entry in _user_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            obj, name = entry
        else:
            obj, name = entry, f"{entry.__module__}.{entry.__qualname__}"
        table[name] = obj
        torch_name = _torch_name(name)
        if torch_name is not None:
            table.setdefault(torch_name, obj)
    return table


def _torch_name(name):
    """ember.nn.modules.linear.Linear -> torch.nn.modules.linear.Linear (ember.vision.X ->
    torchvision.X); None for names outside ember."""
    if name.startswith("ember.vision."):
        return "torchvision." + name[len("ember.vision."):]
    if name.startswith("ember."):
        return "torch." + name[len("ember."):]
    return None


def _weights_only_unpickler(file, persistent_load=None):
    allowed = {f"{m}.{n}": obj for (m, n), obj in _pickling.allowed_globals().items()}
    return WeightsOnlyUnpickler(file, allowed, _user_table(), _pickling.unsupported_globals(),
                                Parameter, Tensor, persistent_load)


def _unpickler(file, weights_only, persistent_load=None):
    if weights_only:
        return _weights_only_unpickler(file, persistent_load)
    return _Unpickler(file, persistent_load)


class _Unpickler(pickle.Unpickler):
    """The full unpickler (weights_only=False): find_class resolves torch names to ember
    objects, anything else is imported as pickle does."""

    def __init__(self, file, persistent_load=None):
        super().__init__(file, encoding="utf-8")
        self.table = _pickling.allowed_globals()
        if persistent_load is not None:
            self.persistent_load = persistent_load

    def find_class(self, module, name):
        found = self.table.get((module, name))
        if found is not None:
            return found
        from .._alias import ember_name  # (deferred: `import ember` does not load _alias)
        mapped = ember_name(module)
        if mapped is not None:
            try:
                return getattr(importlib.import_module(mapped), name)
            except (ImportError, AttributeError):
                pass
        return super().find_class(module, name)


# ---------------------------------------------------------------------- save
def _open_write(f):
    if isinstance(f, (str, os.PathLike)):
        return open(f, "wb"), True
    return f, False


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Write `obj` to `f` (a path or a binary file) in PyTorch's zip checkpoint format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember writes only the zip format (PyTorch's default "
                                  "since 1.6); it reads the legacy format")
    storages = {}  # id(root array) -> (key, root array, dtype)

    def storage_of(t):
        array = t._host() if t._device.type != "cpu" else t._data
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        item = array.itemsize
        shareable = (root.dtype == array.dtype and root.flags.c_contiguous and
                     all(s % item == 0 and s >= 0 for s in array.strides))
        if not shareable:
            root = np.ascontiguousarray(array).reshape(-1)
        entry = storages.get(id(root))
        if entry is None:
            entry = storages[id(root)] = (str(len(storages)), root, t.dtype)
        key, root, d = entry
        if d is not t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        if root is array or not shareable and root.base is None:
            offset = 0
        else:
            offset = (array.__array_interface__["data"][0] -
                      root.__array_interface__["data"][0]) // item if array.size else 0
        if not shareable or array.size <= 1:
            strides = _contiguous_strides(array.shape)  # PyTorch's strides for empty/1-element
        else:
            strides = tuple(s // item for s in array.strides)
        location = "cpu" if t._device.type == "cpu" else str(t._device)
        ref = _pickling.StorageRef(key, t.dtype, root.size, location)
        return ref, offset, strides

    buf = io.BytesIO()
    _pickling.TorchPickler(buf, pickle_protocol, storage_of).dump(obj)
    handle, owned = _open_write(f)
    try:
        writer = CheckpointWriter(handle, archive_name(f))
        writer.write("data.pkl", buf.getvalue())
        writer.write(".format_version", "1")
        writer.write(".storage_alignment", "64")
        if not _disable_byteorder_record:
            writer.write("byteorder", "little")
        for key, root, d in sorted(storages.values(), key=lambda e: int(e[0])):
            if options.skip_data is not None:   # (the layout without the bytes: zeros)
                root = np.zeros(root.shape, root.dtype)
            writer.write(f"data/{key}", np.ascontiguousarray(root))
        writer.write("version", "3\n")
        writer.write(".data/serialization_id", "0" * 40)
        writer.close()
    finally:
        if owned:
            handle.close()


# ---------------------------------------------------------------------- load
def _placer(map_location):
    """`place(location, array, dtype)`: the device a storage saved at `location` ('cpu',
    'cuda:1') loads onto under `map_location` (None, a device or string, a dict of location
    strings, or PyTorch's `fn(storage, location)`, given the storage as a 1-D CPU tensor and
    returning it moved, or None for the saved location)."""

    def place(location, array, d):
        target = location
        if isinstance(map_location, dict):
            target = map_location.get(location, location)
        elif callable(map_location) and not isinstance(map_location, str):
            moved = map_location(_wrap(array, d), location)
            if isinstance(moved, Tensor):
                target = moved._device
        elif map_location is not None:
            target = map_location
        target = as_device(target)
        _check_location(str(target))
        return placement(target)
    return place


def _check_location(location):
    if location.startswith("cuda"):
        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "torch.cuda.is_available() is False. If you are running on a "
                               "CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the "
                               "CPU.")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read a checkpoint written by ember or PyTorch (zip or legacy format)."""
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in \
            ("1", "y", "yes", "true")
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0") in ("1", "y", "yes", "true"):
        weights_only = True
    owned = isinstance(f, (str, os.PathLike))
    handle = open(f, "rb") if owned else f
    try:
        place = _placer(map_location)
        if not is_zipfile(handle):
            if mmap:
                raise RuntimeError("mmap can only be used with files saved with "
                                   "`torch.save(_use_new_zipfile_serialization=True), please "
                                   "torch.save your checkpoint with this option in order to "
                                   "use mmap.")
            try:
                result = load_legacy(handle, lambda fh, pl: _unpickler(fh, weights_only, pl),
                                     place)
            except pickle.UnpicklingError as exc:
                if weights_only:
                    raise pickle.UnpicklingError(weights_only_message(str(exc))) from None
                raise
        else:
            result = _load_zip(handle, weights_only, place, mmap, f if owned else None)
    finally:
        if owned and not mmap:
            handle.close()
    return result


def _load_zip(handle, weights_only, place, mmap, path):
    reader = CheckpointReader(handle)
    mapped = None
    if mmap:
        if path is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        # MAP_SHARED (set_default_mmap_options): writes to the tensors reach the file
        shared = options.mmap_flags == mmap_module.MAP_SHARED
        with open(path, "r+b" if shared else "rb") as fh:
            mapped = mmap_module.mmap(fh.fileno(), 0, access=mmap_module.ACCESS_WRITE
                                      if shared else mmap_module.ACCESS_COPY)
    loaded = {}
    big_endian = file_is_big_endian(reader.read("byteorder").decode()
                                    if reader.has("byteorder") else None)

    def persistent_load(pid):
        if not isinstance(pid, tuple) or pid[0] != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _pickling.StorageType):
            raise pickle.UnpicklingError(f"unknown storage type {storage_type!r}")
        d = storage_type.dtype
        if key not in loaded:
            name = f"data/{key}"
            if mapped is not None:
                offset = reader.record_offset(name)
                # NOTE: a lazy view of the file: no storage data is read until used.
                array = np.frombuffer(mapped, dtype=d.np, count=numel, offset=offset)
            else:
                array = reader.read_array(name, d.np, numel)
            if big_endian and array.itemsize > 1:
                array = array.byteswap()   # (a native copy: ember computes in native order)
            loaded[key] = (array, d, place(location, array, d))
        return loaded[key]

    data = io.BytesIO(reader.read("data.pkl"))
    try:
        return _unpickler(data, weights_only, persistent_load).load()
    except pickle.UnpicklingError as exc:
        if weights_only:
            raise pickle.UnpicklingError(weights_only_message(str(exc))) from None
        raise pickle.UnpicklingError(f"the checkpoint's data.pkl is corrupt: {exc}") from None
    except EOFError as exc:
        raise pickle.UnpicklingError(f"the checkpoint's data.pkl is corrupt: {exc}") from None
