"""The autograd engine, and torch.autograd.graph's public names.

`backward()` sorts the nodes reachable from the roots topologically and runs one loop over
them, like micrograd: each node that received gradients runs its VJP (written in ember ops, so
`create_graph=True` differentiates it again) and hands each input's gradient on to the node
that made the input. The nodes themselves (Node, AccumulateGrad) live in node.py, hook handles
in hooks.py.
"""
from .. import _tensor as _T  # partially initialised here: attributes are read at call time
from .._constants import strided as _STRIDED
from ..backends.cpu_kernels import compiled
from . import anomaly
from .grad_mode import state
from .hooks import run_hooks
from .node import _FREED, AccumulateGrad, Node, _copy, edge_of

# (read here by the layers above: torch.autograd.graph's names, and the leaf accumulator)
from .hooks import RemovableHandle  # noqa: F401
from .node import get_accumulator  # noqa: F401

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node",
           "GradientEdge", "get_gradient_edge", "increment_version"]

_running = None  # the node whose VJP is executing (for instruments naming a backward op)
profiler = None  # the Recorder of a running ember.profiler (set by it), else None
final_callbacks = []   # run once when a backward pass ends (register_multi_grad_hook's)


def current_node():
    """The graph node whose backward is running now, or None outside backward."""
    return _running


# --- the engine

def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None,
                 accumulate=True):
    """Propagate `root_grads` from `roots` back through the graph.

    With `accumulate` (backward) gradients land in leaves' `.grad` (only `inputs`' when
    given); without it (autograd.grad) the gradients of `inputs` are returned instead.
    """
    root_edges = [edge_of(r) for r in roots]
    order = topological_order([e[0] for e in root_edges])
    grads = {}  # node -> list of gradient per output
    for (node, nr), g in zip(root_edges, root_grads):
        add_to_slot(grads, node, nr, g)
    capture = None if inputs is None else _Capture(inputs, order, accumulate)
    global _running
    outer, prev_mode = _running, state.enabled
    state.enabled = create_graph
    try:
        if capture is None and profiler is None and not anomaly.enabled:
            walk(order, grads, retain_graph, create_graph)   # (the common call)
        else:
            _instrumented_walk(order, grads, retain_graph, create_graph, capture, accumulate)
    finally:
        state.enabled = prev_mode
        _running = outer
    _run_final_callbacks()
    return None if capture is None else capture.results


def _topological_order(roots):
    """Nodes reachable from `roots`, each after every node that feeds gradient into it.

    Iterative (no recursion), so a graph 100,000 ops deep is fine."""
    order, seen = [], set()
    stack = [(r, False) for r in roots]
    append, pop = stack.append, stack.pop
    while stack:
        node, expanded = pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        append((node, True))
        for e in node.edges:
            if e is not None and e[0] not in seen:
                append((e[0], False))
    order.reverse()
    return order


def _arrivals(order, grads):
    """Each node in order that received gradients, with them (taken out of `grads`), after
    the hooks registered on the tensors the node produced."""
    pop = grads.pop
    for node in order:
        node_grads = pop(node, None)
        if node_grads is not None:
            if node.pre_hooks is not None or node.retains is not None:
                _tensor_hooks(node, node_grads)
            yield node, node_grads


def _walk(order, grads, retain_graph, create_graph):
    """The backward loop of the common call (no `inputs=` capture, no anomaly mode, no
    profiler): each node in order, given the gradients its outputs received. `walk` is this
    or its compiled twin (backends/csrc/autograd.c), which runs the same steps."""
    for node, node_grads in _arrivals(order, grads):
        if type(node) is AccumulateGrad:
            accumulate_leaf(node, node_grads, create_graph)
        else:
            apply_vjp(node, node_grads, grads, retain_graph, create_graph)


def _instrumented_walk(order, grads, retain_graph, create_graph, capture, accumulate):
    """The same loop with what the common call leaves out: the `inputs=` capture, anomaly
    mode's NaN check and the profiler's range per node."""
    check_nan = anomaly.enabled and anomaly.check_nan
    recorder = profiler
    for node, node_grads in _arrivals(order, grads):
        if capture is not None and not capture.take(node, node_grads, create_graph):
            continue
        try:
            if type(node) is not AccumulateGrad:
                apply_vjp(node, node_grads, grads, retain_graph, create_graph, check_nan,
                          recorder)
            elif accumulate:
                evaluation = None if recorder is None else recorder.begin_node(node)
                accumulate_leaf(node, node_grads, create_graph)
                if evaluation is not None:
                    recorder.end(evaluation)
        except Exception as exc:
            if anomaly.enabled and type(node) is not AccumulateGrad:
                anomaly.report(node, exc)
            raise


class _Capture:
    """What autograd.grad and backward(inputs=) collect: the gradient arriving at each input's
    edge, and which nodes lie on a path to one (the others need not run)."""

    def __init__(self, inputs, order, accumulate):
        self.inputs, self.accumulate = inputs, accumulate
        self.where = {}  # (node, output_nr) -> positions in inputs
        for k, t in enumerate(inputs):
            e = edge_of(t)
            if e is not None:
                self.where.setdefault(e, []).append(k)
        self.results = [None] * len(inputs)
        self.reach = _reaching(order, [e[0] for e in self.where])

    def take(self, node, node_grads, create_graph):
        """Keep the gradients `node` received for captured inputs; whether it still runs."""
        leaf = type(node) is AccumulateGrad
        for nr, g in enumerate(node_grads):
            ks = self.where.get((node, nr))
            if ks is not None and g is not None:
                for k in ks:
                    self.results[k] = g
                if self.accumulate and not leaf:
                    _accumulate_nonleaf(self.inputs[ks[0]], g, create_graph)
        if leaf:
            return (node, 0) in self.where
        return any(e is not None and e[0] in self.reach for e in node.edges)


def _reaching(order, targets):
    """Nodes on some path to a target node (targets included)."""
    reach = set(targets)
    for node in reversed(order):
        if node in reach:
            continue
        for e in node.edges:
            if e is not None and e[0] in reach:
                reach.add(node)
                break
    return reach


def _run_final_callbacks():
    if final_callbacks:
        callbacks = final_callbacks[:]
        final_callbacks.clear()
        for callback in callbacks:
            callback()


# --- one node's steps

def _tensor_hooks(node, node_grads):
    """Hooks registered on the tensors this node produced, then retain_grad's stores."""
    if node.pre_hooks:
        for nr, hooks in node.pre_hooks.items():
            if nr >= 0 and node_grads[nr] is not None and hooks:
                node_grads[nr] = run_hooks(hooks, node_grads[nr])
    if node.retains:
        for nr, store in tuple(node.retains.items()):
            if node_grads[nr] is not None:
                store(node_grads[nr])


def _node_prehooks(node, node_grads):
    """The hooks registered on the node itself (register_prehook), before it runs."""
    if node.pre_hooks and -1 in node.pre_hooks:
        return list(run_hooks(node.pre_hooks[-1], tuple(node_grads)))
    return node_grads


def accumulate_leaf(node, node_grads, create_graph):
    """A leaf's AccumulateGrad: its pre-hooks, then the gradient into `.grad`. NOTE: the
    gradient is passed on from the list slot directly: `_owned` counts the references on this
    path (the slot, accumulate's argument) to decide whether `.grad` may keep the buffer."""
    node_grads = _node_prehooks(node, node_grads)
    node.accumulate(node_grads[0], create_graph)


def apply_vjp(node, node_grads, grads, retain_graph, create_graph, check_nan=False,
              recorder=None):
    """One node of backward: its pre-hooks, the check of its saved values, its VJP (and its
    hooks), then each input's gradient fitted to the input and added into the slot of the
    node that made it (`grads`); its saved values are freed after."""
    global _running
    node_grads = _node_prehooks(node, node_grads)
    if node.saved_versions is not None or node._out is not None:
        node.check_saved()
    if len(node_grads) > 1:  # (a single output's slot is never None)
        for g in node_grads:
            if g is None:
                node.fill_missing(node_grads)
                break
    evaluation = None if recorder is None else recorder.begin_node(node)
    _running = node
    in_grads = _call_vjp(node, node_grads)
    _running = None
    if recorder is not None:
        recorder.end(recorder.open[-1])   # the node's call; its evaluation goes on
    meta_shapes, meta_dtypes = node.in_meta[0], node.in_meta[1]
    for i, e in enumerate(node.edges):
        if e is not None and in_grads[i] is not None:
            g = _fit(in_grads[i], meta_shapes[i], meta_dtypes[i])
            if check_nan:
                anomaly.check_grad(node, i, g)
            add_to_slot(grads, e[0], e[1], g)
    if evaluation is not None:
        recorder.end(evaluation)
    if not retain_graph and node.op.saves:
        node.free()


def _call_vjp(node, node_grads):
    """The node's VJP (conjugated around for a complex result written as f'(z) * g), then
    the hooks registered on the node (register_hook); always a tuple."""
    if node.conj_around:
        in_grads = _conjugated(node.op.vjp, node, node_grads)
    else:
        in_grads = node.op.vjp(node, *node_grads)
    if type(in_grads) is not tuple:
        in_grads = (in_grads,)
    if node.hooks:
        for fn in tuple(node.hooks.values()):
            result = fn(in_grads, tuple(node_grads))
            if result is not None:
                in_grads = tuple(result)
    return in_grads


def _conjugated(vjp, node, grads):
    """conj(vjp(conj(g))): turns a VJP written as f'(z) * g into PyTorch's conj(f'(z)) * g
    (real gradients pass unchanged)."""
    from ..ops.complex import conj   # (cycle: ember.ops.registry imports this module)
    in_grads = vjp(node, *(None if g is None else conj(g) for g in grads))
    if type(in_grads) is not tuple:
        in_grads = (in_grads,)
    return tuple(None if g is None else conj(g) for g in in_grads)


def _fit(g, shape, dtype):
    """An input's gradient in the input's shape (broadcasting undone) and dtype."""
    if g._data.shape != shape:
        g = _T.unbroadcast(g, shape)
    if g.dtype is not dtype:
        g = _cast_grad(g, dtype)
    return g


def _cast_grad(g, dtype):
    """A gradient in its input's dtype; a real input keeps the real part of a complex one
    (as PyTorch, without the warning a user's complex-to-real cast gives)."""
    if g.dtype.is_complex and not dtype.is_complex:
        g = g.real
    return g if g.dtype is dtype else g.to(dtype)


def add_to_slot(grads, node, nr, g):
    """Add `g` into the gradient slot of output `nr` of `node`: the one place gradients
    meeting at a node are summed."""
    slot = grads.get(node)
    if slot is None:
        slot = grads[node] = [None] * len(node.out_meta)
    held = slot[nr]
    slot[nr] = g if held is None else _sum_grads(held, g)


def _sum_grads(held, g):
    """held + g; dense + sparse, never sparse + dense (PyTorch defines only the first)."""
    return g + held if held.layout is not _STRIDED else held + g


def _accumulate_nonleaf(t, g, create_graph):
    """backward(inputs=[non-leaf]) fills the non-leaf's .grad, as retain_grad would."""
    if t._grad is None:
        t._grad = g if create_graph else _copy(g)
    else:
        t._grad = t._grad + g


# --- the compiled twins (backends/csrc/autograd.c): the same steps, fewer Python frames; the
# Python functions above stay the definitions and the NumPy path's loop.

def _compiled(name, python):
    if compiled is None:
        return python
    if name == "walk":
        compiled.walk_setup({
            "globals": globals(), "AccumulateGrad": AccumulateGrad,
            "tensor_hooks": _tensor_hooks, "accumulate_leaf": accumulate_leaf,
            "apply_vjp": apply_vjp, "unbroadcast": _T.unbroadcast, "cast_grad": _cast_grad,
            "sum_grads": _sum_grads, "freed": _FREED})
    return getattr(compiled, name)


topological_order = _compiled("topological_order", _topological_order)
walk = _compiled("walk", _walk)


# torch.autograd.graph's public helpers (saved-tensor hooks, gradient edges, multi-grad hooks)
from .saved_hooks import (  # noqa: E402
    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)
from .graph_api import (  # noqa: E402
    GradientEdge, allow_mutation_on_saved_tensors, get_gradient_edge, increment_version,
    register_multi_grad_hook)


def __getattr__(name):
    if name == "Variable":   # (torch.autograd.graph re-exports torch.autograd.Variable)
        from . import Variable   # (cycle: ember.autograd imports this module before Variable)
        return Variable
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
