"""ember.futures (torch.futures): a Future holding the result of asynchronous work
(`then` chains callbacks, `collect_all`/`wait_all` join several), thread-safe, with
PyTorch's errors for completing twice and for failing callbacks."""
import threading
import traceback

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value = self._error = None
        self._callbacks = []

    def done(self):
        return self._done.is_set()

    def wait(self):
        """Block until completed; the value, or the exception set on the Future, raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        if not self.done():
            # (PyTorch's C++ assertion text, so code matching its message keeps working)
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: value() of a Future that "
                               "is not completed")
        return self.wait()

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, error):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback):
        """Run callback(self) once completed (now, if already)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new Future completed with callback(self) once this one completes."""
        result = Future()

        def run(fut):
            try:
                value = callback(fut)
            except Exception as exc:
                where = "".join(traceback.format_tb(exc.__traceback__))
                result.set_exception(RuntimeError(
                    "Got the following error when running the callback: "
                    f"{type(exc).__name__}: {exc}\n\nAt:\n{where}"))
                return
            result.set_result(value)
        self.add_done_callback(run)
        return result

    def __repr__(self):
        return f"<{type(self).__module__}.Future object at {hex(id(self))}>"


def collect_all(futures):
    """A Future completed with the list of `futures` once all of them are."""
    futures = list(futures)
    result = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        result.set_result([])

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            result.set_result(futures)
    for fut in futures:
        fut.add_done_callback(one_done)
    return result


def wait_all(futures):
    """The values of `futures`, waiting for each (the first error raised)."""
    return [fut.wait() for fut in collect_all(futures).wait()]
