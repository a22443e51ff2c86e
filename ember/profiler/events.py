"""The profiler's results: FunctionEvent (one op call or range), FunctionEventAvg (the
events of one key summed) and EventList (a list of either, with key_averages, table and the
exports), as torch.autograd.profiler_util has them. Times are in microseconds."""
from collections import OrderedDict

from .activities import DeviceType
from .chrome_trace import write_chrome_trace
from .table import build_table, format_time


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class FormattedTimesMixin:
    """`cpu_time_str`, ...: the times as the table prints them."""

    @property
    def cpu_time_str(self):
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return format_time(self.self_cpu_time_total)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count


class FunctionEvent(FormattedTimesMixin):
    """One op call or range: its name, interval, nesting, shapes, memory and stack."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 cpu_memory_usage=0, flops=0, category="cpu_op", sequence_nr=-1):
        self.id = id
        self.node_id = -1
        self.name = name
        self.overload_name = ""
        self.trace_name = name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = None
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = []
        self.stack = stack if stack is not None else []
        self.scope = 0
        self.use_device = None
        self.cpu_memory_usage = cpu_memory_usage   # this event and those inside it
        self.device_memory_usage = 0
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = sequence_nr
        self.device_type = _cpu_device_type()
        self.device_index = 0
        self.is_legacy = False
        self.flops = flops
        self.is_user_annotation = category == "user_annotation"
        self.category = category

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name="
                f"{self.overload_name} device_type={self.device_type} node_id="
                f"{self.node_id} cpu_time={self.cpu_time_str} start_us="
                f"{self.time_range.start} end_us={self.time_range.end} cpu_children="
                f"{[c.id for c in self.cpu_children]} None_time=0.000us name={self.name} "
                f"thread={self.thread} input_shapes={self.input_shapes} cpu_memory_usage="
                f"{self.cpu_memory_usage} None_memory_usage=0 is_async={self.is_async} "
                f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The events sharing one key (name, and shapes or stack when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = _cpu_device_type()
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is not None and other.key != self.key:
            raise AssertionError("Expected keys to match")
        return self._accumulate(other, other.key)

    def _accumulate(self, other, key):
        if self.key is None:
            self.key = key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.is_user_annotation = other.is_user_annotation
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us "
                f"input_shapes={self.input_shapes if self.input_shapes else ''} "
                f"cpu_memory_usage={self.cpu_memory_usage} cuda_memory_usage=0>")


class EventList(list):
    """A list of FunctionEvent (or of FunctionEventAvg, from key_averages)."""

    def __init__(self, *args, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as PyTorch's text table (see ember.profiler.table)."""
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           profile_memory=self._profile_memory,
                           with_flops=self._with_flops,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per key, in order of first appearance. The key is the name
        (`ProfilerStep#N` all count as `ProfilerStep*`), plus the input shapes with
        `group_by_input_shape` and the `group_by_stack_n` innermost frames."""
        averages = OrderedDict()
        for event in self:
            name = event.key
            if name.startswith("ProfilerStep#"):
                name = "ProfilerStep*"
            key = [name, str(event.node_id)]
            if group_by_input_shape:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += list(event.stack[:group_by_stack_n])
            if group_by_overload_name:
                key.append(event.overload_name)
            key = tuple(key)
            avg = averages.get(key)
            if avg is None:
                avg = averages[key] = FunctionEventAvg()
            avg._accumulate(event, name)
            if not group_by_input_shape:
                avg.input_shapes = None
            if group_by_stack_n > 0:
                avg.stack = list(event.stack[:group_by_stack_n])
            else:
                avg.stack = []
        return EventList(averages.values(), profile_memory=self._profile_memory,
                         with_flops=self._with_flops)

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total._accumulate(event, "Total")
        return total

    def export_chrome_trace(self, path):
        write_chrome_trace(self, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """One line per event with a stack: 'outer;...;inner <metric as an integer>', the
        input of flamegraph.pl and speedscope."""
        if metric not in ("self_cpu_time_total", "self_cuda_time_total",
                          "self_device_time_total"):
            raise AssertionError(f"metric should be one of ['self_cpu_time_total', "
                                 f"'self_cuda_time_total', 'self_device_time_total'] but "
                                 f"got {metric}")
        with open(path, "w") as f:
            for event in self:
                if event.stack:
                    value = getattr(event, metric, 0) if metric == "self_cpu_time_total" \
                        else 0
                    frames = ";".join(reversed([s.replace(";", "") for s in event.stack]))
                    f.write(f"{frames};{event.name} {int(value)}\n")


def _cpu_device_type():
    return DeviceType.CPU
