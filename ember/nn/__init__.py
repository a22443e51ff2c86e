"""ember.nn (torch.nn): modules, functional ops, losses, init, utils."""
import importlib

from . import functional, init, parallel, utils  # noqa: F401
from .factory import factory_kwargs  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
# NOTE: the star import above bound `attention` to modules' own attention submodule, and
# `from . import attention` would keep that binding: this is torch.nn.attention's twin
attention = importlib.import_module(".attention", __name__)
