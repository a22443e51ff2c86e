"""Where storages live, as torch.serialization names it: location tags ('cpu', 'cuda:1'),
the registry of (tagger, deserializer) pairs by priority, and the storage-type helpers."""
import importlib

from .. import cuda
from .._device import as_device


def _cpu_tag(storage):
    if storage.device.type == "cpu":
        return "cpu"
    return None


def _cpu_deserialize(storage, location):
    if location == "cpu":
        return storage
    return None


def _cuda_tag(storage):
    if storage.device.type == "cuda":
        return "cuda:" + str(storage.device.index or 0)
    return None


def _cuda_deserialize(storage, location):
    if location.startswith("cuda"):
        index = validate_cuda_device(location)
        return storage.to(f"cuda:{index}")
    return None


# (priority, tagger, deserializer): lower priorities are asked first
_package_registry = [(10, _cpu_tag, _cpu_deserialize), (20, _cuda_tag, _cuda_deserialize)]


def register_package(priority, tagger, deserializer):
    """Teach save/load a new storage location: `tagger(storage)` gives its tag or None,
    `deserializer(storage, location)` moves a storage there or returns None."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def _typename(storage):
    cls = type(storage)
    return f"{cls.__module__}.{cls.__qualname__}"


def location_tag(storage):
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError(f"don't know how to determine data location of {_typename(storage)}")


def default_restore_location(storage, location):
    """`storage` moved to `location` by the first registered deserializer that knows it."""
    for _, _, deserializer in _package_registry:
        result = deserializer(storage, location)
        if result is not None:
            return result
    raise RuntimeError(f"don't know how to restore data location of {_typename(storage)} "
                       f"(tagged with {location})")


def validate_cuda_device(location):
    """The device index of a 'cuda[:n]' location, or PyTorch's error where it cannot load."""
    device = as_device(location)
    index = device.index if device.index is not None else 0
    if not cuda.is_available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    count = cuda.device_count()
    if index >= count:
        raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                           f"torch.cuda.device_count() is {count}. Please use torch.load "
                           "with map_location to map your storages to an existing device.")
    return index


def normalize_storage_type(storage_type):
    """The top-level storage class of the same name (ember.<Name>)."""
    import ember  # (cycle: the public package imports this module)
    return getattr(ember, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type matching a legacy storage's class (FloatStorage ->
    FloatTensor), looked up in the storage class's own module, as PyTorch does."""
    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))
