"""The profiler's text table, laid out as PyTorch's: right-aligned columns two spaces apart,
dashed separators, times in us/ms/s with three decimals, memory in B/KB/MB/GB and a
'Self CPU time total' footer."""

_TIME_SCALE = {"s": 1e6, "ms": 1e3, "us": 1.0}


def format_time(time_us, unit=None):
    if unit is None:
        if time_us >= 1e6:
            unit = "s"
        elif time_us >= 1e3:
            unit = "ms"
        else:
            unit = "us"
    return f"{time_us / _TIME_SCALE[unit]:.3f}{unit}"


def format_memory(nbytes):
    size = abs(nbytes)
    for scale, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if size >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _percent(part, whole):
    return f"{(part / whole if whole else 0.0) * 100:.2f}%"


def _flops_unit(largest):
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if largest >= scale:
            return scale, prefix
    return 1.0, ""


def _truncate(text, width):
    # NOTE: PyTorch marks a text as cut from width - 3 characters on, even one that fits.
    return text if len(text) < width - 3 else text[:width - 3] + "..."


def _columns(name_width, profile_memory, shapes_width, source_width, flops_prefix):
    """(title, width) of each column: the times, memory when profiled, then the input shapes,
    the source location and the FLOPs where they are shown (None or False where not)."""
    columns = [("Name", name_width), ("Self CPU %", 12), ("Self CPU", 12),
               ("CPU total %", 12), ("CPU total", 12), ("CPU time avg", 12)]
    if profile_memory:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    if shapes_width:
        columns.append(("Input Shapes", shapes_width))
    if source_width:
        columns.append(("Source Location", source_width))
    if flops_prefix is not False:
        columns.append((f"Total {flops_prefix}FLOPs", 12))
    return columns


def _event_cells(e, stack, columns, self_total, time_unit, flops_scale):
    """One event's row, a cell per column (its stack's first frame as its source location)."""
    titles = {title for title, _ in columns}
    name_width = columns[0][1]
    cells = [_truncate(e.key, name_width),
             _percent(e.self_cpu_time_total, self_total),
             format_time(e.self_cpu_time_total, time_unit),
             _percent(e.cpu_time_total, self_total),
             format_time(e.cpu_time_total, time_unit),
             format_time(e.cpu_time, time_unit)]
    if "CPU Mem" in titles:
        cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
    cells.append(str(e.count))
    for title, width in columns[len(cells):]:
        if title == "Input Shapes":
            cells.append(_truncate(str(e.input_shapes), width))
        elif title == "Source Location":
            cells.append(_truncate(stack[0], width) if stack else "")
        else:   # (the FLOPs)
            cells.append(f"{e.flops / flops_scale:.3f}" if e.flops > 0 else "--")
    return cells


def build_table(events, sort_by=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, header=None,
                profile_memory=False, with_flops=False, top_level_events_only=False,
                time_unit=None):
    if not events:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    self_total = sum(e.self_cpu_time_total for e in events)
    show_shapes = any(e.input_shapes for e in events)
    show_stack = any(e.stack for e in events)
    show_flops = with_flops and any(e.flops > 0 for e in events)
    # (column widths fit every event, shown or not, as PyTorch's)
    name_width = min(max([len(e.key) for e in events] + [4]) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4,
                       max_shapes_column_width) if show_shapes else None
    if top_level_events_only:
        events = [e for e in events if e.cpu_parent is None]
    if row_limit is not None and row_limit >= 0:
        events = events[:row_limit]
    # (the FLOPs unit suits the smallest count, as PyTorch's: 30 and 27648 print as FLOPs)
    scale, prefix = _flops_unit(min(e.flops for e in events if e.flops > 0)) \
        if show_flops else (1, "")
    columns = _columns(name_width, profile_memory, shapes_width, show_stack and
                       max_src_column_width, show_flops and prefix)

    def line(cells):
        return "".join(f"{text:>{width}}  " for text, (_, width) in zip(cells, columns))

    separator = "".join("-" * width + "  " for _, width in columns)
    out = []
    if header is not None or top_level_events_only:
        out.append("=" * (len(separator) - 2))
        out.append(header if header is not None else
                   "This report only display top-level ops statistics")
    out += [separator, line([name for name, _ in columns]), separator]
    for e in events:
        stack = list(e.stack or [])
        out.append(line(_event_cells(e, stack, columns, self_total, time_unit, scale)))
        for frame in stack[1:]:   # the further frames under the first, other cells empty
            blank = [""] * len(columns)
            blank[[n for n, _ in columns].index("Source Location")] = \
                _truncate(frame, max_src_column_width)
            out.append(line(blank))
    out.append(separator)
    out.append(f"Self CPU time total: {format_time(self_total, time_unit)}")
    return "\n".join(out) + "\n"
