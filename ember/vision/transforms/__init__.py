"""transforms (torchvision.transforms v1): image transforms on PIL images and tensors."""
from . import functional  # noqa: F401
from .autoaugment import (AutoAugment, AutoAugmentPolicy, RandAugment,  # noqa: F401
                          TrivialAugmentWide)
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _all

__all__ = _all + ["AutoAugment", "AutoAugmentPolicy", "RandAugment", "TrivialAugmentWide"]
