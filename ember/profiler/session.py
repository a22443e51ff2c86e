"""One recording session (torch.autograd.profiler.profile) and record_function.

`torch.profiler.profile` (profile_api.py) runs one session per recorded cycle of its
schedule; this class is also the public `ember.autograd.profiler.profile`.
"""
import functools
import time
import warnings

from ..autograd import graph
from .chrome_trace import write_chrome_trace
from .events import EventList, FunctionEvent
from .recorder import Recorder


def active_recorder():
    """The Recorder receiving ops now, or None."""
    return graph.profiler


class profile:
    """Record every op and range run inside `with profile() as prof:`; then
    `prof.key_averages().table()`, `prof.function_events`, `prof.export_chrome_trace(path)`."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        if not use_cpu:
            raise AssertionError("No activities specified for the profiler")
        if use_cuda or (use_device is not None and use_device != "cpu"):
            name = "CUDA" if use_cuda else str(use_device).upper()
            warnings.warn(f"{name} is not available, disabling {name} profiling")
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules   # (PyTorch uses it for TorchScript modules only)
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.entered = False
        self.function_events = None
        self._recorder = None
        self._previous = None
        self._wall_start_ns = None
        self._metadata = {}

    # ------------------------------------------------------------------ running
    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        self._stop()
        return False

    def _start(self):
        self._previous = active_recorder()   # an outer profile resumes when this one stops
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack,
                                  self.with_flops)
        self._wall_start_ns = time.time_ns()
        self._recorder.install()

    def _stop(self):
        recorder = self._recorder
        recorder.uninstall()
        if self._previous is not None:
            self._previous.install_again()
        events = build_events(recorder)
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events))
        events._profile_memory = self.profile_memory
        events._with_flops = self.with_flops
        self.function_events = events
        self.entered = False

    # ------------------------------------------------------------------ results
    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path):
        self._check_finish()
        recorder = self._recorder
        memory = [((t - recorder.start_ns) / 1e3, b, total)
                  for t, b, total in recorder.memory_events]
        settings = {"with_stack": self.with_stack, "profile_memory": self.profile_memory,
                    "record_shapes": self.record_shapes, "with_flops": self.with_flops}
        settings.update(self._metadata)
        if self.custom_trace_id_callback is not None:
            settings["trace_id"] = self.custom_trace_id_callback()
        write_chrome_trace(self.function_events, path, memory, self._wall_start_ns, settings)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        self.function_events.export_stacks(path, metric)

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)


def build_events(recorder):
    """The recorder's Records as FunctionEvents, sorted by start (an enclosing range before
    what it encloses), with parents, children and inclusive memory."""
    records = sorted(recorder.records, key=lambda r: (r.start_ns, -(r.end_ns or 0)))
    origin = recorder.start_ns
    events, by_record = EventList(), {}
    for i, r in enumerate(records, 1):
        end_ns = r.end_ns if r.end_ns is not None else recorder.end_ns
        shapes = r.shapes if r.shapes is not None else ([] if recorder.record_shapes else [])
        # (thread 1 as PyTorch numbers the profiled thread; the trace names the OS thread)
        event = FunctionEvent(i, r.name, 1, (r.start_ns - origin) / 1e3,
                              (end_ns - origin) / 1e3, input_shapes=shapes, stack=r.stack,
                              cpu_memory_usage=r.memory, flops=r.flops, category=r.category)
        event._trace_tid = recorder.native_thread
        by_record[id(r)] = event
        events.append(event)
    for r in records:
        if r.parent is not None and id(r.parent) in by_record:
            parent = by_record[id(r.parent)]
            child = by_record[id(r)]
            parent.append_cpu_child(child)
            child.set_cpu_parent(parent)
    for event in reversed(events):   # children start later: their totals are final first
        event.cpu_memory_usage += sum(c.cpu_memory_usage for c in event.cpu_children)
    return events


class record_function:
    """A named range: `with record_function("name"):` or `@record_function("name")`. Ops
    and ranges run inside it are its children in the profiler's results."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._record = None
        self._recorder = None

    def __enter__(self):
        recorder = active_recorder()
        if recorder is not None:
            self._recorder = recorder
            self._record = recorder.begin(self.name)
        return self

    def __exit__(self, *exc):
        if self._record is not None:
            self._recorder.end(self._record)
            self._record = self._recorder = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
