"""Timer: timeit.Timer made framework aware (warm-up, thread count, accelerator sync) and
returning Measurements, following PyTorch's algorithms for block size and replicates."""
import enum
import textwrap
import timeit

import numpy as np

from ... import cuda
from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """timeit's clock, after waiting for queued accelerator work."""
    if cuda.is_available():
        cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Measure the run time of a Python statement (see torch.utils.benchmark.Timer):
    `stmt` and `setup` are code strings, `globals` their namespace (`torch` is ember)."""

    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        import ember   # (the statements' `torch`: the public namespace itself)
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", ember)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ember's Timer measures Python statements only (PyTorch "
                                      "compiles C++ ones against libtorch, which ember lacks)")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer,
                                      globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # (a measured 0 would make ratios infinite downstream)
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Run `stmt` `number` times (after a warm-up of number // 100): one replicate."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, time_hook, stop_hook, min_run_time, max_run_time=None,
                          callback=None):
        total_time, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                spent = time_hook()
                times.append(spent)
                total_time += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """Runs per replicate: grown tenfold until the timer's own overhead is below 0.01%
        of a block (and a block takes at least min_run_time / 1000)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Replicates of `block size` runs each until min_run_time seconds are spent."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda: self._timeit(number), lambda t: True,
                                       min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Like blocked_autorange, then more replicates until IQR / median < threshold (or
        max_run_time is spent)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec).meets_confidence(threshold)
            return False
        times = self._measurement_loop(number, lambda: self._timeit(number), stop_hook,
                                       min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)
