"""The recorder: what a running profiler collects, and the hooks that feed it.

While a profiler records, `ops.registry.profiler` and `autograd.graph.profiler` hold its
Recorder: the op registry's door hands each op call to `Recorder.op` (the one check it
costs otherwise), the backward engine opens a range per graph node, and
`record_function`, the DataLoader and the optimizers open named ranges. Ranges nest: an op
or range belongs to the innermost range open when it started.
"""
import os
import sys
import threading
import weakref
from time import perf_counter_ns

import numpy as np

from ..autograd import graph
from ..ops import registry
from .names import backward_node_name, op_event_name

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Record:
    """One timed interval: an op call ('cpu_op') or a named range ('user_annotation')."""

    __slots__ = ("name", "category", "start_ns", "end_ns", "parent", "children", "shapes",
                 "memory", "stack", "flops", "thread", "sequence")

    def __init__(self, name, category, start_ns, parent, thread):
        self.name = name
        self.category = category
        self.start_ns = start_ns
        self.end_ns = None
        self.parent = parent
        self.children = []
        self.shapes = None
        self.memory = 0       # bytes allocated (+) and freed (-) while it was innermost
        self.stack = None
        self.flops = 0
        self.thread = thread
        self.sequence = -1


class Recorder:
    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.records = []          # every Record, in start order
        self.memory_events = []    # (time_ns, bytes, total allocated) when profile_memory
        self.open = []             # the ranges open now, innermost last
        self.current_op = None     # the op running now (frees during it are its own)
        self.allocated = 0
        self._finalizers = []
        self.thread = threading.get_ident()
        self.native_thread = threading.get_native_id()
        self._registry = registry   # (read on every op)
        self.start_ns = self.end_ns = None

    # ------------------------------------------------------------------ installing
    def install(self):
        self.start_ns = perf_counter_ns()
        self.install_again()

    def install_again(self):
        """Receive ops (again, after an inner profile that borrowed the door stopped). The
        recorder also joins the registry's instruments: the compiled door sends every call
        to the Python door while an instrument is present, and that door asks `op`."""
        registry.profiler = graph.profiler = self
        if self not in registry.instruments:
            registry.instruments.append(self)

    def uninstall(self):
        if registry.profiler is self:
            registry.profiler = None
        if graph.profiler is self:
            graph.profiler = None
        if self in registry.instruments:
            registry.instruments.remove(self)
        now = perf_counter_ns()
        while self.open:   # ranges left open (an exception in a backward node, a step range)
            self.open.pop().end_ns = now
        for finalizer in self._finalizers:   # frees after the profile are not ours
            finalizer.detach()
        self._finalizers.clear()
        self.end_ns = now

    # ------------------------------------------------------------------ ops (the door)
    def op(self, op, inputs, params, dtype, arrays):
        """Run one op through the registry's door, timed. The door is closed to the
        profiler meanwhile, so the call below runs it once, unprofiled."""
        registry = self._registry
        if threading.get_ident() != self.thread:
            # NOTE: another thread's op runs unrecorded (it would nest inside this thread's
            # ranges). The door is closed meanwhile, so an op of this thread that starts in
            # that window goes unrecorded too: profile one thread at a time.
            registry.profiler = None
            try:
                return registry.python_dispatch(op, inputs, params, dtype, arrays)
            finally:
                registry.profiler = self
        parent = self.open[-1] if self.open else None
        record = Record(op_event_name(op, inputs, params), "cpu_op", 0, parent, self.thread)
        outer_op, self.current_op = self.current_op, record
        registry.profiler = None
        record.start_ns = perf_counter_ns()
        try:
            result = registry.python_dispatch(op, inputs, params, dtype, arrays)
        finally:
            record.end_ns = perf_counter_ns()
            registry.profiler = self
            self.current_op = outer_op
        self.records.append(record)
        if parent is not None:
            parent.children.append(record)
        if self.record_shapes:
            record.shapes = [list(x._data.shape) if hasattr(x, "_data") else []
                             for x in inputs]
        if self.with_stack:
            record.stack = user_stack()
        if self.with_flops:
            record.flops = flops_of(record.name, inputs, result)
        if self.profile_memory:
            self._track_allocations(record, inputs, result)
        return result

    def __call__(self, op, inputs, params, result):
        """As an instrument: nothing (see `install`); `op` has done the work already."""

    # ------------------------------------------------------------------ ranges
    def begin(self, name, category="user_annotation"):
        parent = self.open[-1] if self.open else None
        record = Record(name, category, perf_counter_ns(), parent, self.thread)
        self.records.append(record)
        if parent is not None:
            parent.children.append(record)
        if self.with_stack:
            record.stack = user_stack()
        self.open.append(record)
        return record

    def end(self, record):
        """Close `record` (and whatever was left open inside it)."""
        now = perf_counter_ns()
        if record in self.open:
            while self.open:
                inner = self.open.pop()
                inner.end_ns = now
                if inner is record:
                    break

    def begin_node(self, node):
        """The two ranges PyTorch's engine opens per graph node: the node's whole evaluation
        and, inside it, the node's own call."""
        name = backward_node_name(node)
        outer = self.begin("autograd::engine::evaluate_function: " + name, "cpu_op")
        self.begin(name, "cpu_op")
        return outer

    # ------------------------------------------------------------------ memory
    def _track_allocations(self, record, inputs, result):
        results = result if isinstance(result, tuple) else (result,)
        operands = [x._data for x in inputs if hasattr(x, "_data")]
        for r in results:
            array = getattr(r, "_data", None)
            if array is None or not array.nbytes:
                continue
            # A view of an operand allocated nothing (reshape, transpose, slicing).
            if any(np.may_share_memory(array, a) for a in operands):
                continue
            root = array
            while isinstance(root.base, np.ndarray):
                root = root.base
            self._allocate(record, array.nbytes)
            self._finalizers.append(weakref.finalize(root, self._free, array.nbytes))

    def _allocate(self, record, nbytes):
        self.allocated += nbytes
        record.memory += nbytes
        self.memory_events.append((perf_counter_ns(), nbytes, self.allocated))

    def _free(self, nbytes):
        """A tracked array died: its bytes count against the op or range running now, or
        against PyTorch's '[memory]' pseudo-event outside any."""
        self.allocated -= nbytes
        now = perf_counter_ns()
        self.memory_events.append((now, -nbytes, self.allocated))
        owner = self.current_op or (self.open[-1] if self.open else None)
        if owner is None:
            owner = Record("[memory]", "cpu_instant_event", now, None, self.thread)
            owner.end_ns = now
            self.records.append(owner)
        owner.memory -= nbytes


def user_stack():
    """The calling program's frames, innermost first, as 'file(line): function' (ember's own
    frames left out)."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_EMBER_DIR):
            frames.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return frames


def flops_of(name, inputs, result):
    """Floating-point operations of the ops PyTorch counts: matrix products and 2-D
    convolutions (2 per multiply-add), mul and add (one per output element); 0 for the
    others, as PyTorch."""
    if name in ("aten::mul", "aten::add"):
        return result._data.size
    shapes = [x._data.shape for x in inputs if hasattr(x, "_data")]
    if name in ("aten::mm", "aten::matmul", "aten::bmm", "aten::addmm"):
        a, b = (shapes[1], shapes[2]) if name == "aten::addmm" else (shapes[0], shapes[1])
        if len(a) < 2 or len(b) < 1:
            return 0
        batch = 1
        for n in a[:-2]:
            batch *= n
        return 2 * batch * a[-2] * a[-1] * b[-1]
    if name == "aten::conv2d" and len(shapes) >= 2:
        out = result._data.shape
        w = shapes[1]
        per_output = 1
        for n in w[1:]:
            per_output *= n
        total = 1
        for n in out:
            total *= n
        return 2 * total * per_output
    return 0
