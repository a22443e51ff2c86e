"""ember.utils (torch.utils)."""
from . import data  # noqa: F401

_LAZY = ("checkpoint", "tensorboard", "viz", "hooks", "benchmark")


def __getattr__(name):
    # NOTE: torch exposes torch.utils.checkpoint after a plain `import torch`; these load on
    # first use so `import ember` stays fast (tensorboard pulls in tensorboardX).
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
