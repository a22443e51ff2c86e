"""Deprecated module classes kept for old code: NLLLoss2d (NLLLoss, which handles any number
of spatial dims) and Container (Module with children given as keywords). Both warn as
PyTorch's do when instantiated."""
import warnings

from .loss import NLLLoss
from .module import Module

__all__ = ["NLLLoss2d", "Container"]


class NLLLoss2d(NLLLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for name, module in kwargs.items():
            self.add_module(name, module)
