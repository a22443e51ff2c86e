"""ember.utils.benchmark (torch.utils.benchmark): Timer with timeit, blocked_autorange and
adaptive_autorange, and the Measurement it returns (PyTorch's printed summary). Python
statements only: the C++ and Callgrind paths of PyTorch's Timer have no ember counterpart."""
from .common import (Measurement, TaskSpec, ordered_unique, select_unit,  # noqa: F401
                     set_torch_threads, trim_sigfig, unit_to_english)
from .timer import Language, Timer, timer  # noqa: F401

__all__ = ["Language", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit",
           "set_torch_threads", "timer", "trim_sigfig", "unit_to_english"]
