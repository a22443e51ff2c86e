"""spawn / start_processes: run fn(i, *args) in N processes, re-raising a child's error."""
import multiprocessing
import signal
import traceback
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext",
           "ProcessRaisedException",
           "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True when all exited cleanly; raises the first child's error otherwise."""
        if all(not p.is_alive() for p in self.processes) and \
                all(p.exitcode == 0 for p in self.processes):
            return True
        sentinels = {p.sentinel: i for i, p in enumerate(self.processes)}
        ready = multiprocessing.connection.wait(list(sentinels), timeout=timeout)
        failed = None
        for s in ready:
            i = sentinels[s]
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            # NOTE: a child may die at any moment, even between two checks here: first see
            # whether any is still running (is_alive() also reaps it), then read every exit
            # code, so that a failure is never taken for success.
            if any(p.is_alive() for p in self.processes):
                return False
            failed = next((i for i, p in enumerate(self.processes) if p.exitcode != 0), None)
            if failed is None:
                return True
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        proc = self.processes[failed]
        if not self.error_queues[failed].empty():
            tb = self.error_queues[failed].get()
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{tb}"
            raise ProcessRaisedException(msg, failed, proc.pid)
        code = proc.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, proc.pid, code, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, proc.pid, code)


class SpawnContext(ProcessContext):
    """ProcessContext under its pre-1.4 name (deprecated: warns, then behaves the same)."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        error_queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
