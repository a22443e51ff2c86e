"""ember.profiler against torch.profiler on the same programs: op and range names, counts,
nesting, schedule steps, the table's layout and formatting, memory and FLOP counts, the
Chrome trace, trace files, errors; and the door left as it was when no profiler runs."""
import gzip
import json
import os
import re
import warnings

import pytest

import ember
from ember.ops import registry
from ember.autograd import graph


def _run_mlp(lib):
    """One training step of a small MLP, with a record_function around the forward."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.randn(3, 4)
    with lib.profiler.profile(record_shapes=True) as prof:
        with lib.profiler.record_function("model_inference"):
            y = model(x)
        y.sum().backward()
        opt.step()
        opt.zero_grad()
    return prof


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


# The names ember maps onto PyTorch's, and the ranges both libraries open.
SHARED = ["model_inference", "aten::addmm", "aten::relu", "aten::mm",
          "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
          "autograd::engine::evaluate_function: ReluBackward0", "ReluBackward0",
          "aten::threshold_backward", "TBackward0", "SumBackward0",
          "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
          "torch::autograd::AccumulateGrad", "Optimizer.step#SGD.step",
          "Optimizer.zero_grad#SGD.zero_grad"]


def test_training_step_names_and_counts_match_torch(torch_mod):
    ours, theirs = _counts(_run_mlp(ember)), _counts(_run_mlp(torch_mod))
    for name in SHARED:
        assert name in theirs, name   # (the list itself is checked against torch)
        assert ours.get(name) == theirs[name], (name, ours.get(name), theirs[name])


def _parents(event):
    names = []
    while event.cpu_parent is not None:
        event = event.cpu_parent
        names.append(event.name)
    return names


def _enclosing_ranges(prof, name, ranges):
    event = next(e for e in prof.events() if e.name == name)
    return [n for n in _parents(event) if n in ranges]


def test_record_function_nesting_matches_torch(torch_mod):
    def program(lib):
        x = lib.ones(3, 4, requires_grad=True)

        @lib.profiler.record_function("decorated")
        def body():
            with lib.autograd.profiler.record_function("inner"):
                return lib.relu(x)
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("outer"):
                y = body()
            (y * 2).sum().backward()
        return prof
    ours, theirs = program(ember), program(torch_mod)
    ranges = {"outer", "decorated", "inner"}
    assert _enclosing_ranges(ours, "aten::relu", ranges) == \
        _enclosing_ranges(theirs, "aten::relu", ranges) == ["inner", "decorated", "outer"]
    node = "autograd::engine::evaluate_function: ReluBackward0"
    for prof in (ours, theirs):
        inside = next(e for e in prof.events() if e.name == "ReluBackward0")
        assert inside.cpu_parent.name == node
        assert any(c.name == "aten::threshold_backward" for c in inside.cpu_children)


def test_times_nest_and_self_times_add_up():
    x = ember.randn(64, 64)
    with ember.profiler.profile() as prof:
        with ember.profiler.record_function("outer"):
            for _ in range(3):
                ember.relu(x @ x)
    events = prof.events()
    for e in events:
        for c in e.cpu_children:   # a child lies within its parent's interval
            assert e.time_range.start <= c.time_range.start <= c.time_range.end \
                <= e.time_range.end
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
    outer = next(e for e in events if e.name == "outer")
    assert sum(e.self_cpu_time_total for e in events) == pytest.approx(outer.cpu_time_total)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mm"].count == 3 and avg["aten::relu"].count == 3
    assert avg["aten::mm"].cpu_time == pytest.approx(avg["aten::mm"].cpu_time_total / 3)


@pytest.mark.parametrize("args", [dict(wait=1, warmup=1, active=2),
                                  dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
                                  dict(wait=2, warmup=1, active=3, repeat=1,
                                       skip_first_wait=1),
                                  dict(wait=0, warmup=2, active=1, repeat=3, skip_first=3)])
def test_schedule_matches_torch(torch_mod, args):
    ours, theirs = ember.profiler.schedule(**args), torch_mod.profiler.schedule(**args)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]
    assert [a.value for a in ember.profiler.ProfilerAction] == \
        [a.value for a in torch_mod.profiler.ProfilerAction]


def test_schedule_errors_and_warnings_match_torch(torch_mod):
    for args in (dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=1, active=0)):
        with pytest.raises(AssertionError) as theirs:
            torch_mod.profiler.schedule(**args)
        with pytest.raises(AssertionError, match=re.escape(str(theirs.value))):
            ember.profiler.schedule(**args)
    with pytest.warns(UserWarning) as theirs:
        torch_mod.profiler.schedule(wait=1, warmup=0, active=1)
    with pytest.warns(UserWarning, match=re.escape(str(theirs[0].message))):
        ember.profiler.schedule(wait=1, warmup=0, active=1)


def _stepped(lib, acc_events=False):
    seen = []
    x = lib.ones(4)

    def ready(p):
        seen.append((p.step_num, sorted({e.key for e in p.key_averages()})))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2),
                                  on_trace_ready=ready, acc_events=acc_events) as p:
            for step in range(7):
                with lib.profiler.record_function(f"work{step}"):
                    lib.relu(x)
                p.step()
    return seen


def test_schedule_driven_steps_record_the_same_steps_as_torch(torch_mod):
    ours, theirs = _stepped(ember), _stepped(torch_mod)
    strip = [(n, [k for k in keys if not k.startswith("aten::clamp")]) for n, keys in theirs]
    assert ours == strip
    assert ours[0] == (4, ["ProfilerStep*", "aten::relu", "work2", "work3"])


def test_step_without_schedule_and_start_stop_match_torch(torch_mod):
    def program(lib):
        x = lib.ones(3)
        with lib.profiler.profile() as p:
            lib.relu(x)
            p.step()
            lib.relu(x)
        q = lib.profiler.profile()
        q.start()
        lib.relu(x)
        q.stop()
        return p.step_num, _counts(p)["aten::relu"], _counts(q)["aten::relu"]
    assert program(ember) == program(torch_mod) == (1, 2, 1)


def test_profile_errors_match_torch(torch_mod):
    for make in (lambda lib: lib.profiler.profile().stop(),
                 lambda lib: lib.profiler.profile().events()):
        with pytest.raises(AssertionError) as theirs:
            make(torch_mod)
        with pytest.raises(AssertionError, match=re.escape(str(theirs.value))):
            make(ember)
    with pytest.raises(AssertionError, match="No activities specified"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ember.profiler.profile(activities=[ember.profiler.ProfilerActivity.CUDA])
    prof = ember.autograd.profiler.profile()
    assert repr(prof) == repr(torch_mod.autograd.profiler.profile())
    with prof:
        with pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
            prof.__enter__()


def test_activities_match_torch(torch_mod):
    ours, theirs = ember.profiler.ProfilerActivity, torch_mod.profiler.ProfilerActivity
    assert {n: m.value for n, m in ours.__members__.items()} == \
        {n: m.value for n, m in theirs.__members__.items()}
    assert repr(ours.CPU) == repr(theirs.CPU)
    assert ember.profiler.supported_activities() == {ours.CPU}
    assert str(ember.autograd.profiler.FunctionEvent(1, "a", 1, 0.0, 1.0).device_type) == \
        "DeviceType.CPU"


def test_time_and_memory_formats_match_torch(torch_mod):
    from torch.autograd import profiler_util
    from ember.profiler.table import format_memory, format_time
    for us in (0.0, 0.5, 999.9994, 1000.0, 12345.678, 999999.0, 1e6, 3.25e7):
        assert format_time(us) == profiler_util._format_time(us)
    for nbytes in (0, 120, -96, 1023, 1024, 360000, -360000, 12 * 2 ** 20, 3 * 2 ** 30):
        assert format_memory(nbytes) == profiler_util._format_memory(nbytes)


_TIMES = re.compile(r"-?\d+\.\d+(%|us|ms|s)")


def _layout(table):
    """The table with every time and percentage masked: what must match torch's exactly."""
    return _TIMES.sub(lambda m: "#" * len(m.group(0)), table)


def _ranges_only(lib, **kwargs):
    with lib.profiler.profile(**kwargs) as prof:
        for name in ("a_long_range_name", "b", "a_long_range_name"):
            with lib.profiler.record_function(name):
                pass
    return prof


@pytest.mark.parametrize("options", [
    dict(profile=dict(), table=dict(sort_by="count")),
    dict(profile=dict(profile_memory=True), table=dict(sort_by="count", header="HEADER")),
    dict(profile=dict(record_shapes=True), group=True, table=dict(row_limit=1)),
    dict(profile=dict(), table=dict(sort_by="count", max_name_column_width=8,
                                    time_unit="ms")),
    dict(profile=dict(), table=dict(sort_by="count", top_level_events_only=True)),
])
def test_table_layout_matches_torch(torch_mod, options):
    """Programs of record_function ranges only, so both tables have the same rows."""
    tables = []
    for lib in (ember, torch_mod):
        averages = _ranges_only(lib, **options["profile"]).key_averages(
            group_by_input_shape=options.get("group", False))
        tables.append(averages.table(**options["table"]))
    ours, theirs = tables
    # Masking can differ by a digit's width (1.234ms against 12.345ms): compare per line.
    assert len(ours.splitlines()) == len(theirs.splitlines())
    for a, b in zip(ours.splitlines()[:-1], theirs.splitlines()[:-1]):   # (footer below)
        assert len(a) == len(b)
        if not _TIMES.search(b):
            assert a == b
        else:
            assert a.split()[0] == b.split()[0] and a.split()[-1] == b.split()[-1]
    assert ours.endswith("\n") and re.search(r"Self CPU time total: \d+\.\d{3}(us|ms)\n$",
                                             ours)


def test_memory_and_flops_match_torch(torch_mod):
    def program(lib):
        x = lib.randn(30, 40)
        with lib.profiler.profile(profile_memory=True, with_flops=True) as prof:
            y = lib.mm(x, x.t())
            z = lib.relu(y)
            del z
        return {e.key: e for e in prof.key_averages()}
    ours, theirs = program(ember), program(torch_mod)
    assert ours["aten::mm"].self_cpu_memory_usage == \
        theirs["aten::mm"].self_cpu_memory_usage == 30 * 30 * 4
    assert ours["aten::mm"].flops == theirs["aten::mm"].flops == 2 * 30 * 40 * 30
    assert ours["aten::relu"].cpu_memory_usage == theirs["aten::relu"].cpu_memory_usage
    assert ours["[memory]"].cpu_memory_usage == theirs["[memory]"].cpu_memory_usage \
        == -30 * 30 * 4   # z freed outside any op
    table = program_table = None
    with ember.profiler.profile(with_flops=True) as prof:
        ember.mm(ember.ones(100, 100), ember.ones(100, 100))
    program_table = prof.key_averages().table()
    table = program_table.splitlines()[1]
    assert table.rstrip().endswith("Total MFLOPs")   # 2e6 flops: the unit torch picks


def test_chrome_trace_is_valid_json_with_complete_events(tmp_path, torch_mod):
    x = ember.ones(8, 8, requires_grad=True)
    with ember.profiler.profile(profile_memory=True, record_shapes=True) as prof:
        with ember.profiler.record_function("block"):
            (x @ x).relu().sum().backward()
    path = str(tmp_path / "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        document = json.load(f)
    complete = [e for e in document["traceEvents"] if e["ph"] == "X"]
    assert {e["name"] for e in complete} >= {"block", "aten::mm", "aten::relu",
                                             "autograd::engine::evaluate_function: "
                                             "MmBackward0"}
    for e in complete:
        assert isinstance(e["ts"], float) and e["dur"] >= 0
        assert e["cat"] in ("cpu_op", "user_annotation")
    block = next(e for e in complete if e["name"] == "block")
    mm = next(e for e in complete if e["name"] == "aten::mm")
    assert block["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= block["ts"] + block["dur"]
    assert mm["args"]["Input Dims"] == [[8, 8], [8, 8]]
    first_mm = next(e for e in prof.events() if e.name == "aten::mm")   # ts/dur: its us
    assert mm["dur"] == pytest.approx(first_mm.cpu_time_total, abs=1e-3)
    assert mm["ts"] == pytest.approx(first_mm.time_range.start, abs=1e-3)
    assert any(e["ph"] == "i" and e["name"] == "[memory]" for e in document["traceEvents"])
    # The top-level keys torch writes.
    with torch_mod.profiler.profile() as theirs:
        torch_mod.ones(1)
    theirs.export_chrome_trace(str(tmp_path / "torch.json"))
    with open(tmp_path / "torch.json") as f:
        torch_keys = set(json.load(f))
    assert {"schemaVersion", "traceEvents", "displayTimeUnit", "baseTimeNanoseconds",
            "traceName"} <= set(document) & torch_keys


def test_tensorboard_trace_handler_names_files_as_torch(tmp_path, torch_mod):
    names = {}
    for lib in (ember, torch_mod):
        folder = tmp_path / lib.__name__
        for gz in (False, True):
            handler = lib.profiler.tensorboard_trace_handler(str(folder), worker_name=None
                                                             if gz else "w0", use_gzip=gz)
            with lib.profiler.profile(on_trace_ready=handler):
                lib.ones(2).relu()
        names[lib.__name__] = sorted(os.listdir(folder))
    pattern = r"^(w0|.+_\d+)\.\d{16,}\.pt\.trace\.json(\.gz)?$"
    for lib_names in names.values():
        assert len(lib_names) == 2 and all(re.match(pattern, n) for n in lib_names)
    host_pid = lambda n: n.split(".")[0]   # noqa: E731
    assert {host_pid(n) for n in names["ember"]} == {host_pid(n) for n in names["torch"]}
    gz = next(n for n in names["ember"] if n.endswith(".gz"))
    with gzip.open(tmp_path / "ember" / gz, "rt") as f:
        assert any(e["name"] == "aten::relu" for e in json.load(f)["traceEvents"])


def test_dataloader_and_optimizer_ranges_match_torch(torch_mod):
    def program(lib):
        lib.manual_seed(0)
        data = lib.utils.data.TensorDataset(lib.randn(8, 4), lib.randn(8, 2))
        model = lib.nn.Linear(4, 2)
        opt = lib.optim.Adam(model.parameters())
        with lib.profiler.profile() as prof:
            for x, y in lib.utils.data.DataLoader(data, batch_size=4):
                opt.zero_grad()
                lib.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
        counts = _counts(prof)
        return {k: counts.get(k) for k in (
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            "Optimizer.step#Adam.step", "Optimizer.zero_grad#Adam.zero_grad",
            "aten::addmm", "autograd::engine::evaluate_function: AddmmBackward0",
            "autograd::engine::evaluate_function: MseLossBackward0")}
    assert program(ember) == program(torch_mod)


def test_stack_export_and_grouping(tmp_path):
    def caller():
        return ember.relu(ember.ones(3))
    with ember.profiler.profile(with_stack=True) as prof:
        caller()
    relu = next(e for e in prof.events() if e.name == "aten::relu")
    assert relu.stack[0].endswith(": caller") and __file__ in relu.stack[0]
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    line = next(ln for ln in path.read_text().splitlines() if "aten::relu" in ln)
    frames, value = line.rsplit(" ", 1)
    assert frames.endswith(": caller;aten::relu") and int(value) >= 0
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table.splitlines()[1]


def test_autograd_profiler_aliases(torch_mod):
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("blk"):
            ember.relu(ember.ones(2))
    assert isinstance(prof.function_events, ember.autograd.profiler.EventList)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    assert str(prof).splitlines()[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU",
                                                 "CPU", "total", "%", "CPU", "total", "CPU",
                                                 "time", "avg", "#", "of", "Calls", "Input",
                                                 "Shapes"]
    assert prof.total_average().key == "Total"
    with pytest.raises(AssertionError):   # torch's CPU build raises AssertionError too
        with torch_mod.autograd.profiler.emit_nvtx():
            pass
    with pytest.raises(AssertionError, match="NVTX"):
        with ember.autograd.profiler.emit_nvtx():
            pass
    assert ember.profiler.itt.is_available() is False
    with pytest.raises(RuntimeError, match="ITT"):
        ember.profiler.itt.range_push("x")


def test_door_is_restored_after_profiling_even_on_error():
    before = list(registry.instruments)
    with pytest.raises(ValueError):
        with ember.profiler.profile():
            ember.relu(ember.ones(2))
            raise ValueError("boom")
    assert registry.profiler is None and graph.profiler is None
    assert registry.instruments == before
    with ember.profiler.profile() as outer:   # a nested profile borrows the door, gives it back
        ember.relu(ember.ones(2))
        with ember.profiler.profile() as inner:
            ember.exp(ember.ones(2))
        ember.neg(ember.ones(2))
    assert "aten::exp" in _counts(inner) and "aten::exp" not in _counts(outer)
    assert {"aten::relu", "aten::neg"} <= set(_counts(outer))
    assert registry.profiler is None and registry.instruments == before


def test_tensor_operators_are_recorded_as_torch_names_them(torch_mod):
    def program(lib):
        x, y = lib.ones(3, 3), lib.ones(3, 3)
        with lib.profiler.profile() as prof:
            x + y
            x * 2
            x @ y
            -x
        return {k: v for k, v in _counts(prof).items()
                if k in ("aten::add", "aten::mul", "aten::mm", "aten::neg")}
    assert program(ember) == program(torch_mod) == {"aten::add": 1, "aten::mul": 1,
                                                    "aten::mm": 1, "aten::neg": 1}


def test_step_tracker_and_enforce_unique_match_torch(torch_mod):
    def program(module):
        tracker = module.KinetoStepTracker
        saved = dict(tracker._step_dict), tracker._current_step
        tracker._step_dict.clear()
        tracker._current_step = 0
        try:
            out = [tracker.current_step(), tracker.init_step_count("a"),
                   tracker.increment_step("a"), tracker.increment_step("a"),
                   tracker.init_step_count("b"), tracker.increment_step("b"),
                   tracker.increment_step("new"), tracker.current_step(),
                   tracker.erase_step_count("a"), tracker.erase_step_count("zz")]
        finally:
            tracker._step_dict.clear()
            tracker._step_dict.update(saved[0])
            tracker._current_step = saved[1]
        unique = module.EnforceUnique()
        unique.see(1, 2)
        with pytest.raises(RuntimeError) as error:
            unique.see(1, 2)
        return out, str(error.value)
    assert program(ember.autograd.profiler) == program(torch_mod.autograd.profiler)


def test_other_threads_ops_run_unrecorded():
    import threading
    results = []
    with ember.profiler.profile() as prof:
        worker = threading.Thread(target=lambda: results.append(ember.exp(ember.zeros(2))))
        worker.start()
        worker.join()
        ember.relu(ember.ones(2))
    assert results[0].tolist() == [1.0, 1.0]
    counts = _counts(prof)
    assert "aten::exp" not in counts and counts["aten::relu"] == 1
    with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute"):
        prof.key_averages().table(sort_by="no_such_column")


CNN_SHARED = ["aten::conv2d", "aten::batch_norm", "aten::relu", "aten::max_pool2d_with_indices",
              "aten::layer_norm", "aten::log_softmax", "aten::nll_loss", "aten::gelu",
              "aten::sigmoid", "aten::tanh", "aten::softmax", "aten::mean", "aten::cat",
              "aten::exp", "aten::sum", "aten::convolution_backward",
              "aten::threshold_backward", "aten::nll_loss_backward",
              "aten::_log_softmax_backward_data", "aten::max_pool2d_with_indices_backward"]


def test_cnn_op_names_and_backward_nodes_match_torch(torch_mod):
    def program(lib):
        nn, F = lib.nn, lib.nn.functional
        lib.manual_seed(0)
        x = lib.randn(2, 3, 8, 8)
        conv, bn, ln = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.LayerNorm(3)
        with lib.profiler.profile() as prof:
            y = F.max_pool2d(F.relu(bn(conv(x))), 2)
            y = ln(y.reshape(2, 4, 3, 3)).reshape(2, -1)
            loss = F.cross_entropy(y, lib.tensor([0, 1]))
            F.gelu(y), lib.sigmoid(y), lib.tanh(y), F.softmax(y, 1), y.mean(), y.sum()
            lib.cat([y, y]).exp()
            loss.backward()
        return _counts(prof)
    ours, theirs = program(ember), program(torch_mod)
    nodes = [k for k in theirs if k.startswith("autograd::engine::evaluate_function: ")]
    assert len(nodes) == 9
    for name in CNN_SHARED + nodes + [n.split(": ", 1)[1] for n in nodes]:
        assert ours.get(name) == theirs[name], (name, ours.get(name), theirs[name])


def test_second_cycle_warns_as_torch(torch_mod):
    def program(lib, acc_events):
        x, found = lib.ones(2), []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched = lib.profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
            with lib.profiler.profile(schedule=sched, acc_events=acc_events) as p:
                for step in range(5):
                    lib.relu(x)
                    p.step()
                    found += [(step, str(w.message)) for w in caught]
                    caught.clear()
        return found, _counts(p).get("aten::relu")
    from ember.profiler import profile_api
    from torch.profiler import profiler as torch_profiler
    for acc_events in (False, True, False):
        profile_api._WARNINGS_SHOWN.clear()       # both warn once a process
        torch_profiler._WARNINGS_SHOWN.clear()
        assert program(ember, acc_events) == program(torch_mod, acc_events)
    assert program(ember, False) == program(torch_mod, False) == ([], 1)


def test_signatures_match_torch(torch_mod):
    import inspect

    def params(fn):
        return [(p.name, p.default if p.default is not inspect.Parameter.empty else None,
                 p.kind) for p in inspect.signature(fn).parameters.values()]
    ep, tp = ember.profiler, torch_mod.profiler
    pairs = [(ep.profile.__init__, tp.profile.__init__), (ep.schedule, tp.schedule),
             (ep.tensorboard_trace_handler, tp.tensorboard_trace_handler),
             (ep.record_function.__init__, tp.record_function.__init__),
             (ep.profile.key_averages, tp.profile.key_averages),
             (ep.profile.export_stacks, tp.profile.export_stacks),
             (ember.autograd.profiler.EventList.table,
              torch_mod.autograd.profiler.EventList.table),
             (ember.autograd.profiler.profile.__init__,
              torch_mod.autograd.profiler.profile.__init__),
             (ember.autograd.profiler.emit_nvtx.__init__,
              torch_mod.autograd.profiler.emit_nvtx.__init__)]
    for ours, theirs in pairs:
        assert params(ours) == params(theirs), ours


def test_ops_on_cuda_tensors_are_timed_on_the_host(cuda_standin, torch_mod):
    """The stand-in 'cuda' devices (NumPy): ops on device 1 pass the door's device guard
    (a second dispatch) and are recorded once, under the same names as on the CPU."""
    def program(lib, device):
        x = lib.ones(4, 4, device=device, requires_grad=True)
        with lib.profiler.profile() as prof:
            (x @ x).relu().sum().backward()
        return {k: v for k, v in _counts(prof).items()
                if k in ("aten::mm", "aten::relu", "aten::sum", "MmBackward0")}
    expected = program(torch_mod, "cpu")
    assert program(ember, "cuda:1") == program(ember, "cpu") == expected


@pytest.mark.parametrize("length", [51, 52, 53, 60])
def test_long_names_are_cut_as_torch_cuts_them(torch_mod, length):
    rows = []
    for lib in (ember, torch_mod):
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("x" * length):
                pass
        rows.append(prof.key_averages().table().splitlines()[3].split()[0])
    assert rows[0] == rows[1]


def test_column_widths_fit_the_rows_not_shown(torch_mod):
    lines = []
    for lib in (ember, torch_mod):
        with lib.profiler.profile(record_shapes=True) as prof:
            for name in ("b", "a" * 30):
                with lib.profiler.record_function(name):
                    pass
        table = prof.key_averages(group_by_input_shape=True).table(
            row_limit=1, max_shapes_column_width=3)
        lines.append([_layout(line) for line in table.splitlines()[:4]])
    assert lines[0][:3] == lines[1][:3]
    assert lines[0][3].split()[0] == lines[1][3].split()[0] == "b"
    assert len(lines[0][3]) == len(lines[1][3])


def test_flop_counts_and_unit_match_torch(torch_mod):
    def program(lib):
        lib.manual_seed(0)
        x, a, b = lib.randn(2, 3, 8, 8), lib.randn(5, 6), lib.randn(6, 7)
        bb, bc = lib.randn(4, 5, 6), lib.randn(4, 6, 7)
        linear, conv = lib.nn.Linear(6, 3), lib.nn.Conv2d(3, 4, 3, padding=1)
        with lib.profiler.profile(with_flops=True) as prof:
            lib.mm(a, b), linear(a), conv(x), lib.bmm(bb, bc), a * 2, a + a, a @ b
        flops = {e.key: e.flops for e in prof.key_averages() if e.flops}
        return flops, prof.key_averages().table().splitlines()[1].split()[-2:]
    ours, theirs = program(ember), program(torch_mod)
    assert ours == theirs
    assert ours[0]["aten::conv2d"] == 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3)


def test_event_reprs_match_torch(torch_mod):
    reprs = []
    for lib in (ember, torch_mod):
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("outer"):
                with lib.profiler.record_function("inner"):
                    pass
        # (times and torch's process-wide event ids masked; every other field must match)
        masked = [re.sub(r"\d+", "#", _TIMES.sub("T", repr(e)))
                  for e in list(prof.events()) + list(prof.key_averages())]
        reprs.append(masked)
    assert reprs[0] == reprs[1]


def test_profiler_util_names_match_torch(torch_mod):
    import torch.autograd.profiler_util as theirs
    ours = ember.autograd.profiler_util
    for name in ours.__all__:
        assert hasattr(theirs, name), name
    assert ours.MEMORY_EVENT_NAME == theirs.MEMORY_EVENT_NAME
    assert ours.OUT_OF_MEMORY_EVENT_NAME == theirs.OUT_OF_MEMORY_EVENT_NAME
    assert ours.EventList is ember.autograd.profiler.EventList


def test_device_type_is_one_enum_as_torchs(torch_mod):
    import ember.profiler
    assert ember.autograd.DeviceType is ember.profiler.DeviceType
    assert torch_mod.autograd.DeviceType is torch_mod.profiler.DeviceType
    ours = sorted((m.name, int(m), str(m), repr(m)) for m in ember.profiler.DeviceType)
    theirs = sorted((n, int(m), str(m), repr(m))
                    for n, m in torch_mod.profiler.DeviceType.__members__.items())
    assert ours == theirs
