"""torch.profiler.profile: a session driven by a schedule over the steps of a training loop,
and tensorboard_trace_handler, which saves each recorded cycle as a trace file."""
import json
import os
import socket
import time
import warnings

from .activities import cpu_requested
from .schedule import ProfilerAction
from .session import profile as _Session
from .session import record_function

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
_WARNINGS_SHOWN = set()   # (PyTorch gives each of its profiler's warnings once a process)


def _warn_once(message):
    if message not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(message)
        warnings.warn(message, stacklevel=3)


class profile:
    """`with profile(...) as prof:` records everything run inside it; with a `schedule`,
    `prof.step()` at the end of each training step records only the steps the schedule
    marks, and `on_trace_ready(prof)` runs when a cycle's last recorded step ends."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if execution_trace_observer is not None:
            raise NotImplementedError("ember's profiler does not support execution traces "
                                      "(execution_trace_observer)")
        if use_cuda:
            activities = list(activities or []) + ["CUDA"]
        self.activities = activities
        cpu_requested(activities)
        self.schedule = schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self.current_action = schedule(0) if schedule is not None else ProfilerAction.RECORD
        self.profiler = None
        self.step_rec_fn = None
        self._metadata = {}

    # ------------------------------------------------------------------ stepping
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        if self.profiler is None and self.current_action in _RECORDING:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """The end of one training step: the schedule decides what the next one does."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num) if self.schedule is not None \
            else ProfilerAction.RECORD
        self._transit(previous, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps and self.current_action in _RECORDING:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _transit(self, previous, current):
        """What a change of action does: start recording on entering RECORD, stop and hand
        the trace to on_trace_ready on leaving RECORD_AND_SAVE (or RECORD, at the end)."""
        recording = self.profiler is not None and self.profiler.entered
        preparing = current in (ProfilerAction.WARMUP,) + _RECORDING and \
            previous in (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE)
        if preparing and self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across "
                       "cycles, set acc_events=True.")
        if recording and (previous is ProfilerAction.RECORD_AND_SAVE or current is None
                          or current not in _RECORDING):
            self._save()
            recording = False
        if not recording and current in _RECORDING:
            session = _Session(record_shapes=self.record_shapes,
                               profile_memory=self.profile_memory,
                               with_stack=self.with_stack, with_flops=self.with_flops,
                               with_modules=self.with_modules, acc_events=self.acc_events,
                               custom_trace_id_callback=self.custom_trace_id_callback)
            if self.acc_events and self.profiler is not None:
                session.function_events = self.profiler.function_events
            session._metadata = self._metadata
            self.profiler = session
            session.__enter__()

    def _save(self):
        self.profiler.__exit__(None, None, None)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ------------------------------------------------------------------ results
    def _session(self):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler

    def events(self):
        return self._session().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._session().key_averages(group_by_input_shape, group_by_stack_n,
                                            group_by_overload_name)

    def export_chrome_trace(self, path):
        return self._session().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self._session().export_stacks(path, metric)

    def add_metadata(self, key, value):
        """A string entry in the exported trace's top-level object."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value):
        self._metadata[key] = json.loads(value)

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("ember's profiler does not support "
                                  "export_memory_timeline; use profile_memory=True and "
                                  "export_chrome_trace")


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An on_trace_ready that writes each cycle's trace to
    `dir_name/<worker_name>.<time in ns>.pt.trace.json[.gz]` (TensorBoard's profiler plugin
    reads that directory). The worker name defaults to '<host name>_<pid>'."""
    def handler(prof):
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as exc:
                raise RuntimeError("Can't create directory: " + dir_name) from exc
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler
