"""ember.vision (torchvision): datasets, transforms, utils, io, ops; models when present."""
import importlib

from . import datasets, io, ops, transforms, utils

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils"]


def __getattr__(name):
    # models is imported on first use: it is large and may be absent
    if name == "models":
        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
