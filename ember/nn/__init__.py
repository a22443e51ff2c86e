"""ember.nn (torch.nn): modules, functional ops, losses, init, utils."""
from . import functional, init, parallel, utils  # noqa: F401
from .factory import factory_kwargs  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
from . import attention  # noqa: E402,F401  (after modules' own `attention` submodule)
