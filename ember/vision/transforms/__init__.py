"""transforms (torchvision.transforms v1): image transforms on PIL images and tensors."""
from . import functional  # noqa: F401
from .transforms import *  # noqa: F403
from .transforms import __all__  # noqa: F401
