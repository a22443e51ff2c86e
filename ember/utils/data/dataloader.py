"""DataLoader: Sampler -> BatchSampler -> fetcher(dataset, collate) -> iterator.

With num_workers > 0 the fetching runs in worker processes (worker.py); batches come back
through shared memory (shm_batches.py). A dead or hung worker raises, never hangs.
"""
import atexit
import itertools
import math
import os
import queue
import warnings
import weakref

from . import shm_batches
from ... import _creation, accelerator
from ..._dtype import int64
from ...autograd import graph as _graph
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import make_fetcher
from .pin import pin_memory
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import ExceptionWrapper, IterableStop, worker_loop

__all__ = ["DataLoader"]


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in "
                         "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                         "otherwise set prefetch_factor to None.")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _samplers(dataset, iterable, batch_size, shuffle, sampler, batch_sampler, drop_last,
              generator):
    """DataLoader's (batch_size, drop_last, sampler, batch_sampler) from the options as
    given, checked against each other in PyTorch's order and words."""
    if iterable:
        if shuffle not in (False, None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                             f"option, but got shuffle={shuffle}")
        if sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                             f"option, but got sampler={sampler}")
        if batch_sampler is not None:
            raise ValueError("DataLoader with IterableDataset: expected unspecified "
                             f"batch_sampler option, but got batch_sampler={batch_sampler}")
    shuffle = bool(shuffle)
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        batch_size, drop_last = None, False
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")
    if sampler is None:
        if iterable:
            sampler = _InfiniteConstantSampler()
        elif shuffle:
            sampler = RandomSampler(dataset, generator=generator)
        else:
            sampler = SequentialSampler(dataset)
    if batch_size is not None and batch_sampler is None:
        batch_sampler = BatchSampler(sampler, batch_size, drop_last)
    return batch_size, drop_last, sampler, batch_sampler


class DataLoader:
    """Iterates a dataset in batches, optionally shuffled, optionally in worker processes."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if (num_workers > 0 and prefetch_factor is None) \
            else prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.generator = generator

        iterable = isinstance(dataset, IterableDataset)
        self._dataset_kind = "iterable" if iterable else "map"
        batch_size, drop_last, sampler, batch_sampler = _samplers(
            dataset, iterable, batch_size, shuffle, sampler, batch_sampler, drop_last, generator)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else \
                    math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __del__(self):
        it = getattr(self, "_iterator", None)
        if it is not None:
            it._shutdown()


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._timeout = loader.timeout
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _base_seed(loader.generator)
        self._num_yielded = 0
        self._pin_memory = loader.pin_memory and _can_pin()

    def __iter__(self):
        return self

    def __next__(self):
        if _graph.profiler is not None:   # ember.profiler: each fetch is a range, as in PyTorch
            from ...profiler import record_function  # (deferred: `import ember` skips the profiler)
            with record_function(self._profile_name):
                data = self._next_data()
        else:
            data = self._next_data()
        return pin_memory(data) if self._pin_memory else data

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0


def _can_pin():
    if accelerator.is_available():
        return True
    warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                  "device pinned memory won't be used.")
    return False


def _base_seed(generator):
    return int(_creation.empty((), dtype=int64).random_(generator=generator).item())


class _SingleProcessIter(_BaseIter):
    _profile_name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = make_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        return data

    def _shutdown(self):
        pass


_live_iterators = weakref.WeakSet()
_exit_hook_registered = False


def _shut_down_at_exit(iterator):
    """Shut `iterator` down when the interpreter exits, if nothing did before: __del__ alone
    may run after module teardown, when unpickling leftover batches can no longer import
    and their shared segments would stay in /dev/shm. (Registered after the workers started,
    so it runs before multiprocessing's own exit handler terminates them.)"""
    global _exit_hook_registered
    if not _exit_hook_registered:
        atexit.register(_shut_down_live)
        _exit_hook_registered = True
    _live_iterators.add(iterator)


def _shut_down_live():
    for iterator in list(_live_iterators):
        iterator._shutdown()


class _MultiProcessIter(_BaseIter):
    _profile_name = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"

    """Worker processes fed round-robin through one index queue each."""

    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        import multiprocessing as python_mp  # (here: `import ember` need not pay for it)
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_mp.get_context()
        elif isinstance(ctx, str):
            ctx = python_mp.get_context(ctx)
        self._owner_pid = os.getpid()
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=worker_loop, args=(
                self._dataset_kind, self._dataset, iq, self._result_queue,
                self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                loader.worker_init_fn, i, self._num_workers, self._owner_pid), daemon=True)
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shut = False
        _shut_down_at_exit(self)
        self._start_epoch()

    def _start_epoch(self):
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}  # send idx -> worker id, or (worker id, data) once received
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def _reset(self, loader):
        super()._reset(loader)
        # NOTE: drain what the last epoch left in flight before starting again.
        while self._tasks_outstanding > 0:
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            shm_batches.discard(data)
        self._start_epoch()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """Next (idx, data) from any worker; raise if a worker died or the timeout passed."""
        waited = 0.0
        step = 0.5 if not self._timeout else min(0.5, self._timeout)
        while True:
            try:
                return self._result_queue.get(timeout=step)
            except queue.Empty:
                waited += step
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                                       "unexpectedly") from None
                if self._timeout and waited >= self._timeout:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       "seconds") from None

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is None:
                    self._rcvd_idx += 1  # an exhausted iterable worker's slot
                    continue
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableStop):
                self._workers_status[data.worker_id] = False
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] = (self._task_info[idx][0], data)
                continue
            self._task_info.pop(idx, None)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            self._shutdown()
            data.reraise()
        self._num_yielded += 1
        return shm_batches.unpack(data)

    def _shutdown(self):
        if self._shut:
            return
        self._shut = True
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=2.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=2.0)
        # NOTE: batches still in the result queue hold named segments: unlink them, then
        # sweep by name whatever a killed worker made and never sent.
        try:
            while True:
                _, data = self._result_queue.get_nowait()
                shm_batches.discard(data)
        except (queue.Empty, OSError, ValueError, EOFError):
            pass
        for info in self._task_info.values():
            if len(info) == 2:
                shm_batches.discard(info[1])
        # (deferred: ember.multiprocessing brings Python's multiprocessing, see shm_batches)
        from ...multiprocessing.shared_memory import cleanup_prefix
        cleanup_prefix(self._owner_pid)
        for q in self._index_queues + [self._result_queue]:
            q.close()

    def __del__(self):
        self._shutdown()


