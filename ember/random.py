"""ember.random (torch.random): the default CPU generator's seed and state functions (thin
wrappers over ember/_random.py) and fork_rng, which restores the RNG states on exit."""
import contextlib
import importlib
import warnings

from . import accelerator
from ._device import device as _device_cls
from ._random import (Generator, default_generator, get_rng_state,  # noqa: F401
                      initial_seed, manual_seed, seed, set_rng_state)
from .utils.data import get_worker_info

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]

_fork_rng_warned_already = False


def _device_module(device_type):
    try:
        return importlib.import_module(f"ember.{device_type}")
    except ModuleNotFoundError:
        return None


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Fork the RNG: on exit the CPU state (always) and each listed device's state are put
    back as they were. `devices=None` means every device of `device_type` (default: the
    current accelerator's type, else 'cuda'); `enabled=False` forks nothing."""
    global _fork_rng_warned_already
    if device_type == "meta":
        yield
        return
    acc = accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    _device_cls(device_type)   # (an unknown type raises PyTorch's device-string error)
    device_mod = _device_module(device_type)
    if device_mod is None:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a "
                           "module by `torch._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is None:
        count = device_mod.device_count()
        if count > 1 and not _fork_rng_warned_already:
            kind = device_type.upper()
            warnings.warn(
                f"{kind} reports that you have {count} available devices, and you have used "
                f"{_caller} without explicitly specifying which devices are being used. For "
                f"safety, we initialize *every* {kind} device by default, which can be quite "
                f"slow if you have a lot of {kind}s. If you know that you are only making use "
                f"of a few {kind} devices, set the environment variable {kind}_VISIBLE_DEVICES "
                f"or the '{_devices_kw}' keyword argument of {_caller} with the set of devices "
                "you are actually using. For example, if you are using CPU only, set "
                "device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using device 0 "
                f"only, set {kind}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all "
                f"devices and suppress this warning, set the '{_devices_kw}' keyword argument "
                f"to `range(torch.{device_type}.device_count())`.", stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)   # (a generator would be exhausted by the first pass)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for device, state in zip(devices, device_states):
            device_mod.set_rng_state(state, device)


def thread_safe_generator():
    """The worker's own generator inside a thread-based DataLoader worker, else None (the
    default generator)."""
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and \
            getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None
