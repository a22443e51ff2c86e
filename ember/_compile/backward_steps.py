"""`loss.backward()` inside a compiled function, recorded as steps (capture.py's Recorder
hands it here).

What the engine does is recorded as what it is made of: the door calls of the VJPs, each
leaf's accumulation into `.grad` and the zeros standing for unused outputs' gradients. A
program whose every backward was recorded so replays with no graph recorded in the forward
and no engine walk in the backward (program.py). A backward that would run what the steps
cannot repeat stays one call to the engine: one with hooks, `retain_graph`,
`create_graph`, `inputs=`, saved-tensor hooks, anomaly mode or the profiler (checked before
it runs), or one whose VJPs made tensors or arrays outside the door (found while it runs:
the steps recorded meanwhile are dropped and the call recorded in their place).
"""
from ..autograd import anomaly, graph
from ..autograd.grad_mode import state as grad_state
from ..autograd.node import AccumulateGrad, Node, get_accumulator
from ..autograd.saved_hooks import PackedSaved
from .._creation import zeros
from .._tensor import Tensor

BACKWARD = Tensor.__dict__["backward"]
_ACCUMULATE = AccumulateGrad.accumulate


def engine_reason(tensor, gradient=None, retain_graph=None, create_graph=False,
                  inputs=None):
    """Why `tensor.backward(...)` cannot be recorded as steps, or None when it can: a plain
    backward (the graph freed after it, no `inputs=`, no double backward) through a graph
    without hooks, kept gradients or saved-tensor hooks, outside anomaly mode and the
    profiler."""
    if retain_graph or create_graph or inputs is not None:
        return "backward with retain_graph, create_graph or inputs="
    if anomaly.enabled or graph.profiler is not None:
        return "backward under anomaly mode or the profiler"
    if tensor.grad_fn is None:
        return "backward of a tensor without a graph"
    for node in graph.topological_order([tensor.grad_fn]):
        if node.pre_hooks or node.retains or node.hooks:
            return "backward through a graph with hooks or retain_grad"
        if isinstance(getattr(node, "inputs", None), PackedSaved):
            return "backward through values saved under saved_tensors_hooks"
    return None


def record(recorder, fn, args, kwargs):
    """`loss.backward()` recorded as what the engine does: the door calls of the VJPs
    and each leaf's accumulation, as steps. A replay then records no graph in the
    forward and walks no graph in the backward (see Program). When the engine did
    something those steps would not repeat, the backward becomes one call step."""
    recorder.current = "backward"
    recorder.check_rng()
    args_t, kwargs_t = recorder.template(args), recorder.template(kwargs)
    before = recorder.versions()
    enabled = grad_state.enabled
    mark, refusals, breaks = recorder.mark(), recorder.refusals, len(recorder.breaks)
    recorder.refusals, recorder.lowering = [], True

    def accumulate(node, grad, create_graph):   # (AccumulateGrad.accumulate, recorded)
        leaf = node._variable()
        if leaf is not None:
            recorder.call(accumulate_grad, (leaf, grad), {})

    def fill_missing(node, grads):   # (Node.fill_missing: the zeros made by a step)
        for nr, g in enumerate(grads):
            if g is None:
                shape, dtype = node.out_meta[nr]
                grads[nr] = recorder.call(missing_gradient, (shape, dtype, node.device),
                                          {})
    recorder.patch(AccumulateGrad, "accumulate", accumulate)
    recorder.patch(Node, "fill_missing", fill_missing)
    try:
        result = fn(*args, **kwargs)
    finally:
        for _ in range(2):
            owner, name, original = recorder.patches.pop()
            setattr(owner, name, original)
        recorder.lowering = False
        unrepeatable, recorder.refusals = recorder.refusals, refusals
    if not unrepeatable and len(recorder.breaks) == breaks:
        recorder.backwards += 1
        return result
    recorder.rollback(mark)
    recorder.account(before)
    recorder.add_call(fn, args_t, kwargs_t, enabled, result)
    recorder.engine_reasons.extend(unrepeatable or ["a graph break inside backward"])
    return result


def accumulate_grad(leaf, grad):
    """A leaf's gradient accumulation (`.grad` set or added to, its hooks), as a step. Its
    result is the leaf's `.grad`, so code reading it later (gradient clipping) reads the
    step's result."""
    _ACCUMULATE(get_accumulator(leaf), grad, False)
    return leaf._grad


def missing_gradient(shape, dtype, device):
    """The zeros standing for the gradient of an output nobody used, as a step."""
    return zeros(shape, dtype=dtype, device=device)
