"""ember.cuda: CUDA through CuPy. Without CuPy or a GPU, is_available() is False."""

__all__ = ["is_available", "device_count"]

_available = None


def _probe():
    global _available
    if _available is None:
        try:
            import cupy
            _available = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            _available = False
    return _available


def is_available():
    """True when CuPy imports and sees a GPU; never raises."""
    return _probe()


def device_count():
    if not _probe():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def _lazy_init():
    """Install the CuPy backend, or raise PyTorch's error where CUDA is unavailable."""
    if not _probe():
        raise AssertionError("Torch not compiled with CUDA enabled")
    from ..backends import cupy_backend
    cupy_backend.install()


def is_bf16_supported(including_emulation=True):
    return is_available()


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def synchronize(device=None):
    if is_available():
        import cupy
        cupy.cuda.Device().synchronize()


def empty_cache():
    if is_available():
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()


def current_device():
    _lazy_init()
    import cupy
    return cupy.cuda.Device().id


def set_device(device):
    if is_available():
        import cupy
        from .._device import device as dev
        idx = device if isinstance(device, int) else dev(device).index or 0
        cupy.cuda.Device(idx).use()


def get_device_name(device=None):
    _lazy_init()
    import cupy
    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
