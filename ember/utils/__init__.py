"""ember.utils (torch.utils)."""
import importlib

from . import data  # noqa: F401
from ._tensor_swap import swap_tensors  # noqa: F401


def set_module(obj, mod):
    """Set `obj.__module__` to `mod` (how public objects name the module users import)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod

_LAZY = ("checkpoint", "tensorboard", "viz", "hooks", "benchmark")


def __getattr__(name):
    # NOTE: torch exposes torch.utils.checkpoint after a plain `import torch`; these load on
    # first use so `import ember` stays fast (tensorboard pulls in tensorboardX).
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
