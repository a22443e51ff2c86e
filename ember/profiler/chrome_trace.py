"""The Chrome trace-event JSON PyTorch's profiler writes (chrome://tracing, Perfetto):
metadata events naming the process and thread, then one complete ('X') event per op or
range with `ts`/`dur` in microseconds, and instant ('i') '[memory]' events."""
import gzip
import json
import os
import socket
import uuid


def trace_document(events, memory_events=(), base_ns=0, settings=None):
    """The document: `events` (FunctionEvents, start times in us from the profile's start),
    `memory_events` ((ts in us, bytes, total allocated)...), `base_ns` the wall-clock time
    of the profile's start (Perfetto adds it to every ts)."""
    pid = os.getpid()
    threads = sorted({getattr(e, "_trace_tid", pid) for e in events}) or [pid]
    first_ts = min((e.time_range.start for e in events), default=0.0)
    trace = []
    for name, args in (("process_name", {"name": "python"}),
                       ("process_labels", {"labels": "CPU"}),
                       ("process_sort_index", {"sort_index": pid})):
        trace.append({"ph": "M", "name": name, "ts": first_ts, "pid": pid, "tid": 0,
                      "args": args})
    for tid in threads:
        trace.append({"ph": "M", "name": "thread_name", "ts": first_ts, "pid": pid,
                      "tid": tid, "args": {"name": f"thread {tid} (python)"}})
        trace.append({"ph": "M", "name": "thread_sort_index", "ts": first_ts, "pid": pid,
                      "tid": tid, "args": {"sort_index": tid}})
    for index, e in enumerate(events):
        if e.category == "cpu_instant_event":
            continue   # ('[memory]' rows: written below from the allocation log)
        args = {"External id": e.id, "Record function id": 0, "Ev Idx": index}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.flops:
            args["flops"] = e.flops
        trace.append({"ph": "X", "cat": e.category, "name": e.name, "pid": pid,
                      "tid": getattr(e, "_trace_tid", pid),
                      "ts": round(e.time_range.start, 3),
                      "dur": round(e.cpu_time_total, 3), "args": args})
    for ts, nbytes, total in memory_events:
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                      "pid": pid, "tid": threads[0], "ts": round(ts, 3),
                      "args": {"Total Reserved": 0, "Total Allocated": total,
                               "Bytes": nbytes, "Device Id": -1, "Device Type": 0}})
    document = {"schemaVersion": 1, "deviceProperties": [],
                "trace_id": uuid.uuid4().hex.upper()}
    document.update(settings or {})
    document.update({"host_name": socket.gethostname(), "displayTimeUnit": "ms",
                     "baseTimeNanoseconds": base_ns, "traceEvents": trace,
                     "traceName": ""})
    return document


def write_chrome_trace(events, path, memory_events=(), base_ns=0, settings=None):
    document = trace_document(events, memory_events, base_ns, settings)
    document["traceName"] = path
    opener = open
    if path.endswith(".gz"):
        opener = gzip.open
    with opener(path, "wt") as f:
        json.dump(document, f)
