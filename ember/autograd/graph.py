"""The autograd graph and its engine.

A Node is recorded per differentiable op call; `backward()` sorts the nodes reachable from
the roots topologically and runs one reversed loop, like micrograd, calling each node's VJP
(written in ember ops, so `create_graph=True` differentiates it again). Gradients reaching a
leaf are accumulated into `.grad` by its AccumulateGrad node: accumulation across backward()
calls is PyTorch's documented behaviour, not a bug.
"""
import weakref

from .grad_mode import state

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """One recorded op: its inputs (saved where the VJP needs them) and edges to the nodes
    that produced them. `ctx` for VJPs: `inputs`, `params`, `output`/`outputs`."""

    __slots__ = ("op", "inputs", "params", "edges", "in_meta", "saved_versions", "_out",
                 "out_meta", "pre_hooks", "hooks", "freed", "anomaly_trace", "__weakref__",
                 "__dict__")

    def __init__(self, op, inputs, params, edges, in_meta):
        self.op = op
        self.inputs = inputs
        self.params = params
        self.edges = edges
        self.in_meta = in_meta
        self.saved_versions = None
        self._out = None
        self.out_meta = None
        self.pre_hooks = None
        self.hooks = None
        self.freed = False
        self.anomaly_trace = None

    # --- what PyTorch shows of a node
    def name(self):
        return self.op.node_name

    def __repr__(self):
        return f"<{self.op.node_name} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.edges)

    @property
    def metadata(self):
        return self.__dict__

    @property
    def needs_input_grad(self):
        return tuple(e is not None for e in self.edges)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node's VJP ran."""
        if self.hooks is None:
            self.hooks = {}
        return _add_hook(self.hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's VJP runs; may return replacements."""
        return self._add_output_hook(-1, fn)

    def _add_output_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return _add_hook(self.pre_hooks.setdefault(output_nr, {}), fn)

    # --- saved values
    def save_output(self, arrays, dtypes, version):
        # NOTE: outputs are kept as arrays, not Tensors: a Tensor here would hold its own
        # grad_fn (this node) and make a reference cycle that only the GC can free.
        self._out = (arrays, dtypes, version, version.v)

    @property
    def outputs(self):
        if self.freed:
            raise RuntimeError(_FREED_MESSAGE)
        from .._tensor import _wrap
        arrays, dtypes, version, _ = self._out
        outs = []
        for nr, (a, d) in enumerate(zip(arrays, dtypes)):
            t = _wrap(a, d, self.device)
            if d.category >= 2:
                t._requires_grad = True
                t.grad_fn = self
                t._output_nr = nr
            t._version = version
            outs.append(t)
        return tuple(outs)

    @property
    def output(self):
        return self.outputs[0]

    @property
    def device(self):
        return self.in_meta[2]

    def check_saved(self):
        """Raise PyTorch's error when a saved tensor changed in place since forward."""
        if self.freed:
            raise RuntimeError(_FREED_MESSAGE)
        if self.saved_versions:
            for i, t, v in self.saved_versions:
                if t._version.v != v:
                    raise RuntimeError(_inplace_message(t, v, self, f"input {i}"))
        if self._out is not None:
            arrays, dtypes, version, v = self._out
            if version.v != v:
                shape = "[" + ", ".join(map(str, arrays[0].shape)) + "]"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{_type_name(dtypes[0])} {shape}], which is "
                    f"output 0 of {self.op.node_name}, is at version {version.v}; expected "
                    f"version {v} instead. Hint: enable anomaly detection to find the "
                    "operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True).")

    def free(self):
        if self.op.saves:
            self.freed = True
            self.inputs = None
            self._out = None
            self.saved_versions = None


def _type_name(d):
    from .._dtype import type_name
    return f"torch.{type_name(d)}Tensor"


def _inplace_message(t, v, node, what):
    shape = "[" + ", ".join(map(str, t._data.shape)) + "]"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{_type_name(t.dtype)} {shape}] is at version "
            f"{t._version.v}; expected version {v} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True).")


class _AccumulateOp:
    node_name = "AccumulateGrad"
    saves = False


class AccumulateGrad:
    """The node at a leaf: adds incoming gradients into the leaf's `.grad`."""

    __slots__ = ("_variable", "pre_hooks", "post_hooks", "__weakref__")
    op = _AccumulateOp
    edges = ()

    def __init__(self, tensor):
        self._variable = weakref.ref(tensor)
        self.pre_hooks = None
        self.post_hooks = None

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def _add_output_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return _add_hook(self.pre_hooks.setdefault(output_nr, {}), fn)

    def accumulate(self, grad, create_graph):
        t = self._variable()
        if t is None:
            return
        if t._grad is None:
            # NOTE: a fresh grad must not alias the incoming buffer, which other nodes may
            # still hold; detach() shares memory, so copy unless we own it.
            t._grad = grad if create_graph else grad.detach()
        elif create_graph or state.enabled:
            t._grad = t._grad + grad
        else:
            t._grad._data += grad._data.astype(t._grad._data.dtype, copy=False)
            t._grad._version.v += 1
        if self.post_hooks:
            for fn in list(self.post_hooks.values()):
                fn(t)


class RemovableHandle:
    _next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else None
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        d = self.hooks_dict_ref() if self.hooks_dict_ref is not None else None
        if d is not None and self.id in d:
            del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that can be weakly referenced (for RemovableHandle)."""


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def get_accumulator(tensor):
    acc = tensor._accumulator
    if acc is None:
        acc = tensor._accumulator = AccumulateGrad(tensor)
    return acc


def edge_of(tensor):
    """(node, output_nr) through which a gradient reaches `tensor`, None if none needed."""
    if not tensor._requires_grad:
        return None
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    return (get_accumulator(tensor), 0)


def _topological_order(roots):
    """Nodes reachable from `roots`, each after every node that feeds gradient into it."""
    order, seen = [], set()
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for e in node.edges:
            if e is not None and id(e[0]) not in seen:
                stack.append((e[0], False))
    order.reverse()
    return order


def _needed(order, targets):
    """ids of nodes on some path to a target (when only some inputs' gradients are wanted)."""
    needed = set(id(n) for n in targets)
    for node in reversed(order):
        if id(node) in needed:
            continue
        for e in node.edges:
            if e is not None and id(e[0]) in needed:
                needed.add(id(node))
                break
    return needed


def _run_hooks(hooks, grad):
    for fn in list(hooks.values()):
        result = fn(grad)
        if result is not None:
            grad = result
    return grad


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None,
                 accumulate=True):
    """The engine: propagate `root_grads` from `roots` back through the graph.

    With `accumulate` (backward) gradients land in leaves' `.grad`; without it
    (autograd.grad) the gradients of `inputs` are returned instead.
    """
    from .._tensor import unbroadcast
    from . import anomaly

    root_edges = [edge_of(r) for r in roots]
    order = _topological_order([e[0] for e in root_edges])
    grads = {}  # id(node) -> list of gradient per output
    for (node, nr), g in zip(root_edges, root_grads):
        _add_grad(grads, node, nr, g)

    captured, needed = None, None
    if inputs is not None:
        target_edges = []
        for t in inputs:
            e = edge_of(t) if t._requires_grad else None
            target_edges.append(e)
        if not accumulate:
            captured = {(id(e[0]), e[1]): None for e in target_edges if e is not None}
        needed = _needed(order, [e[0] for e in target_edges if e is not None])

    prev_mode = state.enabled
    state.enabled = create_graph
    try:
        for node in order:
            if needed is not None and id(node) not in needed:
                continue
            node_grads = grads.pop(id(node), None)
            if node_grads is None:
                continue
            if node.pre_hooks:
                for nr, hooks in node.pre_hooks.items():
                    if nr >= 0 and node_grads[nr] is not None:
                        node_grads[nr] = _run_hooks(hooks, node_grads[nr])
            if captured is not None:
                for nr, g in enumerate(node_grads):
                    if (id(node), nr) in captured:
                        captured[(id(node), nr)] = g
            if type(node) is AccumulateGrad:
                if accumulate and (inputs is None or id(node) in needed):
                    node.accumulate(node_grads[0], create_graph)
                continue
            if captured is not None and not any(
                    id(e[0]) in needed for e in node.edges if e is not None):
                continue
            if node.pre_hooks and -1 in node.pre_hooks:
                node_grads = list(_run_hooks(node.pre_hooks[-1], tuple(node_grads)))
            node.check_saved()
            in_grads = _call_vjp(node, node_grads)
            if node.hooks:
                for fn in list(node.hooks.values()):
                    fn(in_grads, tuple(node_grads))
            for i, (e, g) in enumerate(zip(node.edges, in_grads)):
                if e is None or g is None:
                    continue
                shape, dtype = node.in_meta[0][i], node.in_meta[1][i]
                if g._data.shape != shape:
                    g = unbroadcast(g, shape)
                if g.dtype is not dtype:
                    g = g.to(dtype)
                if anomaly.enabled:
                    anomaly.check_grad(node, i, g)
                _add_grad(grads, e[0], e[1], g)
            if not retain_graph:
                node.free()
    finally:
        state.enabled = prev_mode
    if captured is not None:
        return [captured.get((id(e[0]), e[1])) if e is not None else None
                for e in target_edges]
    return None


def _call_vjp(node, node_grads):
    from .._tensor import _zeros_like_meta
    for nr, g in enumerate(node_grads):
        if g is None:
            node_grads[nr] = _zeros_like_meta(node, nr)
    result = node.op.vjp(node, *node_grads)
    if type(result) is not tuple:
        result = (result,)
    return result


def _add_grad(grads, node, nr, g):
    slot = grads.get(id(node))
    if slot is None:
        slot = grads[id(node)] = [None] * node_output_count(node)
    if slot[nr] is None:
        slot[nr] = g
    else:
        slot[nr] = slot[nr] + g


def node_output_count(node):
    if type(node) is AccumulateGrad:
        return 1
    return node.op.num_outputs
