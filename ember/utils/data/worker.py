"""The DataLoader worker process: fetch batches by index, send them via shared memory."""
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ..._random import manual_seed
from . import shm_batches
from .fetch import make_fetcher

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None
_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: object

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """In a worker: its id, the worker count, its seed and its copy of the dataset."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main process with its traceback."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = (f"Caught {self.exc_type.__name__} {self.where}.\nOriginal "
               f"{self.exc_msg}")
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except TypeError:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableStop:
    """Sent when a worker's IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _alive(pid):
    """Whether the loader's process still exists. NOTE: not os.getppid(): a forkserver
    worker's parent is the fork server, not the process that iterates the loader."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _seed_everything(seed):
    random.seed(seed)
    manual_seed(seed)
    # NOTE: NumPy's global RNG gets a seed mixed from the loader's base seed and the worker
    # id, so augmentations differ across workers and repeat under the same manual_seed.
    np.random.seed(np.random.SeedSequence(seed).generate_state(1)[0])


def worker_loop(dataset_kind, dataset, index_queue, result_queue, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers, owner_pid):
    """Runs in the worker process until it receives None or its parent disappears."""
    global _worker_info
    try:
        shm_batches.set_owner(owner_pid)
        seed = base_seed + worker_id
        _seed_everything(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                   drop_last)
        except Exception:
            init_exception = ExceptionWrapper(sys.exc_info(),
                                              f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                task = index_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if not _alive(owner_pid):
                    break  # the main process died: do not linger
                continue
            if task is None:
                break
            idx, indices = task
            if init_exception is not None:
                result_queue.put((idx, init_exception))
                init_exception = None
                continue
            if exhausted:
                result_queue.put((idx, IterableStop(worker_id)))
                continue
            try:
                data = shm_batches.pack(fetcher.fetch(indices))
            except StopIteration:
                exhausted = True
                data = IterableStop(worker_id)
            except Exception:
                data = ExceptionWrapper(sys.exc_info(),
                                        f"in DataLoader worker process {worker_id}")
            result_queue.put((idx, data))
            del data
    except KeyboardInterrupt:
        pass
    result_queue.cancel_join_thread()
    result_queue.close()
