"""The import mapping behind `ember run`: torch.X.Y -> ember.X.Y, torchvision.X -> ember.vision.X.

A meta-path finder hands back ember's own module objects under the torch names, so
`torch.nn.modules.linear.Linear is torch.nn.Linear` holds and pickles name ember's paths.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

import ember

from . import _names

_PREFIXES = {"torch": "ember", "torchvision": "ember.vision"}


def ember_name(fullname):
    """The ember module that stands for `fullname`, or None if it is not a torch name."""
    head, _, rest = fullname.partition(".")
    target = _PREFIXES.get(head)
    if target is None:
        return None
    return target + ("." + rest if rest else "")


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        try:
            return importlib.import_module(self.target)
        except ModuleNotFoundError as exc:
            if exc.name == self.target or self.target.startswith(exc.name + "."):
                raise ModuleNotFoundError(
                    f"No module named '{spec.name}' (ember has no {self.target} yet)",
                    name=spec.name) from None
            raise

    def exec_module(self, module):
        pass


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        name = ember_name(fullname)
        if name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(name))


def install():
    """Map torch/torchvision imports onto ember for this process (idempotent)."""
    if not any(isinstance(f, TorchAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAliasFinder())
    sys.modules.setdefault("torch", ember)
    # The program imports torch: Size, dtypes and the like print as torch's do.
    _names.use_torch_names()
