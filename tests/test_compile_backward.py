"""ember.compile of functions that call `backward()`: the backward recorded as steps (the
VJPs' door calls and each leaf's accumulation), replayed without recording a graph.

References: PyTorch's gradients on the same inputs (the op table), eager ember for what must
be bit-identical (training steps), and eager's errors. Each replay is made on new input
values, so a value the capture kept by mistake (instead of recomputing it) shows."""
import numpy as np
import pytest

import ember
from checks import assert_close, to_torch, torch_to_numpy
from op_db import all_ops
from test_compile import MODELS, _run_steps

nn = ember.nn


def _compiled(fn):
    return fn._ember_compiled


def _program(fn):
    (entry,) = _compiled(fn).entries.values()
    return entry.program


# Entries whose PyTorch 2.13 gradient is wrong: the replay is compared with eager ember,
# whose gradient test_ops checks against finite differences.
_TORCH_GRADIENT_WRONG = {
    # torch's input gradient keeps the scattered positions and zeroes the rest (the reverse)
    # when storage_offset is not 0
    "as_strided_scatter",
}


def _differentiable_cases():
    return [pytest.param(info, id=info.name) for info in all_ops()
            if info.grad and info.inplace is None and "float64" in info.dtypes]


def _grad_step(lib, info, kwargs, weights):
    """A function running the op, a weighted sum of its float outputs and backward()."""
    def step(*args):
        out = info.op(lib, *args, **kwargs) if lib is ember else info.torch_call(lib, *args,
                                                                                 **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = [o for o in outs if isinstance(o, lib.Tensor) and o.dtype.is_floating_point]
        loss = sum((o * w).sum() for o, w in zip(outs, weights))
        loss.backward()
        return loss
    return step


def _leaves(lib, sample, convert):
    grad = sample.grad if sample.grad is not None else [
        i for i, a in enumerate(sample.args)
        if isinstance(a, np.ndarray) and a.dtype == np.float64]
    args = [convert(a) for a in sample.args]
    for i in grad:
        args[i].requires_grad_(True)
    return args, grad


def _backward_replay(info, torch_mod):
    """(compiled function, ember grads, torch grads) of the replay, or None when eager
    refuses the call or the op has no float output with a graph."""
    first, second = (info.samples(np.random.default_rng(seed), "float64")[0]
                     for seed in (0, 1))
    if [getattr(a, "shape", a) for a in first.args] != \
            [getattr(a, "shape", a) for a in second.args] or \
            repr(first.kwargs) != repr(second.kwargs):
        return None   # (the replay needs the same call on other values)
    rng = np.random.default_rng(2)
    try:
        with ember.no_grad():
            probe = info.op(ember, *[ember.tensor(a) if isinstance(a, np.ndarray) else a
                                     for a in first.args], **first.kwargs)
    except Exception:
        return None
    probe = probe if isinstance(probe, (tuple, list)) else (probe,)
    shapes = [tuple(o.shape) for o in probe
              if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]
    if not shapes:
        return None
    weights = [rng.standard_normal(s) for s in shapes]
    fn = ember.compile(_grad_step(ember, info, first.kwargs,
                                  [ember.tensor(w) for w in weights]))
    try:
        for sample in (first, second):
            args, grad = _leaves(ember, sample, lambda a: ember.tensor(a)
                                 if isinstance(a, np.ndarray) else a)
            loss = fn(*args)
    except RuntimeError:
        return None   # (no graph: a loss without grad_fn, as in eager)
    ref = ember if info.name in _TORCH_GRADIENT_WRONG else torch_mod
    targs, _ = _leaves(ref, second, lambda a: to_torch(ref, a))
    tloss = _grad_step(ref, info, second.kwargs, [ref.tensor(w) for w in weights])(*targs)
    return fn, loss, tloss, [(args[i].grad, targs[i].grad) for i in grad]


@pytest.mark.parametrize("info", _differentiable_cases())
def test_op_table_backward_replays_match_torch(info, torch_mod):
    """Each differentiable op-table entry, forward and backward compiled as one function:
    the replay on new values gives PyTorch's loss and gradients."""
    result = _backward_replay(info, torch_mod)
    if result is None:
        return
    fn, loss, tloss, grads = result
    if _compiled(fn).replays != 1:
        return   # (eager for this signature: the capture refused it; counted below)
    assert_close(loss, _numpy(tloss), atol=1e-9, rtol=1e-9)
    for got, want in grads:
        if want is None:
            assert got is None or not got.detach().numpy().any()
        else:
            assert_close(got, _numpy(want), atol=max(info.grad_atol, 1e-9) * 1e-3, rtol=1e-7)


def _numpy(t):
    return t.detach().numpy() if isinstance(t, ember.Tensor) else torch_to_numpy(t)


def test_most_of_the_op_table_backward_is_recorded_as_steps(torch_mod):
    """A capture that recorded no backward as steps would leave the test above comparing
    eager with PyTorch again: over the table's differentiable entries, most calls replay
    without recording a graph (70% when written: the rest are VJPs that make tensors from
    arrays outside the door, such as the linear algebra decompositions', and captures that
    stay eager)."""
    lowered = {}
    for param in _differentiable_cases():
        info = param.values[0]
        result = _backward_replay(info, torch_mod)
        if result is not None:
            program = _program(result[0]) if _compiled(result[0]).replays == 1 else None
            lowered[info.name] = program is not None and program.lowered
    assert len(lowered) > 200
    share = sum(lowered.values()) / len(lowered)
    assert share > 0.65, sorted(k for k, v in lowered.items() if not v)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_steps_replay_without_a_graph(name):
    """Every model of test_compile's bit-for-bit training test (which compares its 20 steps
    with eager's) has its backward recorded as steps."""
    run, _, _ = _run_steps(name, compiled=True, steps=2)
    assert _program(run).lowered


def test_returned_loss_has_eager_s_freed_node():
    """A training step returning its loss: the replayed loss prints as eager's, and a second
    backward through it raises eager's error."""
    ember.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(4, 3)

    def step():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), ember.zeros(4, 1))
        loss.backward()
        opt.step()
        return loss
    compiled = ember.compile(step)
    eager = step()
    replayed = (compiled(), compiled())[1]
    assert _program(compiled).lowered and _compiled(compiled).replays == 1
    assert type(replayed.grad_fn).__name__ == type(eager.grad_fn).__name__ == \
        "MseLossBackward0"
    assert replayed.requires_grad and not replayed.is_leaf
    for loss in (eager, replayed):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_hooks_keep_the_engine():
    """A tensor hook in the graph, retain_graph or create_graph: the backward stays one call
    to the engine (the hook runs on every replay, as in eager)."""
    w = ember.ones(3, requires_grad=True)
    seen = []

    def hook(g):
        seen.append(1)

    def hooked(x):
        y = x * w
        y.register_hook(hook)
        y.sum().backward()

    def retained(x):
        (x * w).sum().backward(retain_graph=True)
    for fn in (hooked, retained):
        w.grad = None
        compiled = ember.compile(fn)
        for _ in range(3):
            compiled(ember.ones(3))
        assert _compiled(compiled).replays == 2 and not _program(compiled).lowered
        np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 3.0))
    assert len(seen) == 3


def test_explain_says_how_a_replay_differentiates():
    model = nn.Linear(3, 1)

    def plain(x):
        model(x).sum().backward()

    def retained(x):
        model(x).sum().backward(retain_graph=True)
    x = ember.ones(2, 3)
    assert ember._dynamo.explain(plain)(x).backward == [
        "recorded as steps: the replay records no graph"]
    report = ember._dynamo.explain(retained)(x)
    assert report.backward[1] == "backward with retain_graph, create_graph or inputs="
    assert "the replay records graphs for autograd's engine" in str(report)


def _accumulating_step(compiled):
    """Two micro-batches' backward into the same gradients, clipping, then AdamW, on a model
    whose VJPs read many saved outputs (tanh, sigmoid, log_softmax): 6 steps."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Sigmoid(),
                          nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = ember.optim.AdamW(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        for k in range(2):
            loss = nn.functional.cross_entropy(model(x[k::2]), y[k::2]) / 2
            loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss.detach(), norm
    run = ember.compile(step) if compiled else step
    results = []
    for i in range(6):
        rng = np.random.default_rng(i)
        x = ember.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        results.append([t.numpy() for t in run(x, ember.tensor(rng.integers(0, 3, 8)))])
    return run, model, results


def test_gradient_accumulation_and_clipping_replay_eager_bit_for_bit():
    run, model, results = _accumulating_step(compiled=True)
    assert _compiled(run).replays == 5 and _program(run).lowered
    _, eager_model, eager_results = _accumulating_step(compiled=False)
    for got, want in zip(results, eager_results):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_a_function_under_no_grad_replays_its_ops_on_the_fast_path():
    """Every op of a function that runs under no_grad (an evaluation step) is a fast step:
    the replay loop runs under the ops' own grad mode (eager's outputs, no graph)."""
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))

    def evaluate(x):
        with ember.no_grad():
            return model(x).softmax(-1)
    compiled = ember.compile(evaluate)
    x = ember.randn(5, 3)
    for _ in range(2):
        out = compiled(x)
    program = _program(compiled)
    assert program.mode is False and all(entry[0] is not None for entry in program.code)
    assert not out.requires_grad and ember.is_grad_enabled()
    np.testing.assert_array_equal(out.numpy(), evaluate(x).numpy())


def test_a_gradient_kept_as_grad_is_shared_with_nothing():
    """The replay keeps a gradient as `.grad` when no later step reads it, as the engine does
    in eager; one gradient reaching two leaves (add's backward hands both the same one) is
    kept by one and copied for the other, so changing one `.grad` in place leaves the other
    as torch leaves it. Weight gradients (transposed views) and bias gradients (reshaped
    sums) are kept too, with the values torch computes."""
    torch = pytest.importorskip("torch")
    weight = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)

    def step(lib, a, b, lin, x):
        for p in (a, b, *lin.parameters()):
            p.grad = None
        ((a + b) * x).sum().backward()
        lin(x.reshape(2, 2)).sum().backward()
        a.grad.mul_(2)
        return a.grad + 0, b.grad + 0

    def setup(lib):
        a = lib.ones(4, requires_grad=True)
        b = lib.zeros(4, requires_grad=True)
        lin = lib.nn.Linear(2, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(weight))
            lin.bias.fill_(0.5)
        return a, b, lin, lib.arange(4.0)
    t_args = setup(torch)
    want = step(torch, *t_args)
    a, b, lin, x = setup(ember)
    run = ember.compile(lambda: step(ember, a, b, lin, x))
    for _ in range(3):
        got = run()
    assert _compiled(run).replays == 2 and _program(run).lowered
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    for p, q in zip(lin.parameters(), t_args[2].parameters()):
        assert_close(p.grad, q.grad)
