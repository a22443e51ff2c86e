"""ember.multiprocessing (torch.multiprocessing): Python's multiprocessing, with tensors
crossing process boundaries through shared memory."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, SpawnContext,  # noqa: F401
                    ProcessRaisedException, spawn, start_processes)

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException",
           "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
           "get_all_sharing_strategies"] + multiprocessing.__all__

init_reductions()


def get_sharing_strategy():
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"invalid sharing strategy {new_strategy!r}")


def get_all_sharing_strategies():
    return {"file_descriptor", "file_system"}
