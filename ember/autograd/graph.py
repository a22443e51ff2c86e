"""The autograd graph and its engine.

A Node is recorded per differentiable op call; `backward()` sorts the nodes reachable from
the roots topologically and runs one reversed loop, like micrograd, calling each node's VJP
(written in ember ops, so `create_graph=True` differentiates it again). Gradients reaching a
leaf are accumulated into `.grad` by its AccumulateGrad node: accumulation across backward()
calls is PyTorch's documented behaviour, not a bug.
"""
import re
import sys
import weakref

from .. import _tensor as _T  # partially initialised here: attributes are read at call time
from .._constants import strided as _STRIDED
from . import anomaly
from .grad_mode import state

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


# Nodes PyTorch implements in C++ by hand report a namespaced name() (their repr does not).
_CPP_NAMES = {n: "torch::autograd::" + n for n in ("CopySlices", "CopyBackwards")}

_FREED = ("freed",)  # saved_versions of a node whose saved values backward released


class _NodeMeta(type):
    """Node's type: makes a leaf's AccumulateGrad (a separate, smaller class) an instance of
    Node too, as every grad_fn is one of torch.autograd.graph.Node."""

    def __instancecheck__(cls, obj):
        if cls is Node and type(obj) is AccumulateGrad:
            return True
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub):
        if cls is Node and sub is AccumulateGrad:
            return True
        return type.__subclasscheck__(cls, sub)


class Node(metaclass=_NodeMeta):
    """One recorded op: its inputs (saved where the VJP needs them) and edges to the nodes
    that produced them. `ctx` for VJPs: `inputs`, `params`, `output`/`outputs`."""

    # `saved_versions`: the version of each saved input at record time, aligned with
    # `inputs` (None where nothing was saved).
    # `view_version` (set on the nodes of view ops only): the shared version counter when the
    # view was made; a later in-place change of its memory makes the node stale.
    __slots__ = ("op", "inputs", "params", "edges", "in_meta", "saved_versions", "out_meta",
                 "view_version", "__weakref__", "__dict__")
    # NOTE: rarely-set fields are class defaults, not slots: recording (every op) then skips
    # six attribute writes; the few nodes with hooks get an instance dict instead.
    _out = None
    conj_around = False   # True on nodes with a complex result whose VJP is f'(z) * g (Op)
    pre_hooks = None
    retains = None
    hooks = None
    anomaly_trace = None

    def __init__(self, op, inputs, params, edges, in_meta):
        self.op = op
        self.inputs = inputs
        self.params = params
        self.edges = edges
        self.in_meta = in_meta
        self.saved_versions = None
        self.out_meta = None

    # --- what PyTorch shows of a node
    def name(self):
        n = self.op.node_name
        return _CPP_NAMES.get(n, n)

    def __repr__(self):
        return f"<{self.op.node_name} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.edges)

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    @property
    def needs_input_grad(self):
        return tuple(e is not None for e in self.edges)

    @property
    def ctx(self):
        return self

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node's VJP ran; may return new
        grad_inputs."""
        if self.hooks is None:
            self.hooks = _HookDict()
        return _add_hook(self.hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's VJP runs; may return replacements."""
        return self._add_output_hook(-1, fn)

    def _add_output_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        hooks = self.pre_hooks.get(output_nr)
        if hooks is None:
            hooks = self.pre_hooks[output_nr] = _HookDict()
        return _add_hook(hooks, fn)

    # --- saved values
    def save_output(self, arrays, dtypes, version):
        # NOTE: outputs are kept as arrays, not Tensors: a Tensor here would hold its own
        # grad_fn (this node) and make a reference cycle that only the GC can free.
        self._out = (arrays, dtypes, version, version.v)

    @property
    def outputs(self):
        if self.freed:
            raise RuntimeError(_FREED_MESSAGE)
        arrays, dtypes, version, _ = self._out
        outs = []
        device = self.in_meta[2]
        for nr, (a, d) in enumerate(zip(arrays, dtypes)):
            t = _T._wrap(a, d, device)
            if d.category >= 2:
                t._requires_grad = True
                t.grad_fn = self
                t._output_nr = nr
            t._vc = version
            outs.append(t)
        return tuple(outs)

    @property
    def output(self):
        return self.outputs[0]

    def output_array(self, nr=0):
        """The saved output's raw array (for VJPs that need values but no graph through
        them, such as relu's mask)."""
        if self.freed:
            raise RuntimeError(_FREED_MESSAGE)
        return self._out[0][nr]

    @property
    def device(self):
        return self.in_meta[2]

    def check_saved(self):
        """Raise PyTorch's error when a saved tensor changed in place since forward."""
        if self.saved_versions is _FREED:
            raise RuntimeError(_FREED_MESSAGE)
        if self.saved_versions:
            for t, v in zip(self._saved_inputs(), self.saved_versions):
                if v is not None and t._vc.v != v:
                    fn = t.grad_fn
                    raise RuntimeError(_inplace_message(
                        t._data.shape, t.dtype, t._vc.v, v,
                        None if fn is None else (t._output_nr, fn.name())))
        if self._out is not None:
            arrays, dtypes, version, v = self._out
            if version.v != v:
                raise RuntimeError(_inplace_message(arrays[0].shape, dtypes[0], version.v, v,
                                                    (0, self.op.node_name)))

    def _saved_inputs(self):
        return self.inputs

    def fill_missing(self, grads):
        """Zeros for outputs whose gradient nobody produced (multi-output ops)."""
        for nr, g in enumerate(grads):
            if g is None:
                grads[nr] = _T._zeros_like_meta(self, nr)

    @property
    def freed(self):
        return self.saved_versions is _FREED

    def free(self):
        self.inputs = None
        self.saved_versions = _FREED
        if self._out is not None:
            self._out = None


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def _inplace_message(shape, dtype, version, expected, producer):
    from .._dtype import type_name
    shape = "[" + ", ".join(map(str, shape)) + "]"
    # PyTorch names the producing node without its "Backward0" suffix ("output 0 of Exp").
    which = "" if producer is None else \
        f", which is output {producer[0]} of {_BACKWARD_SUFFIX.sub('', producer[1])},"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{type_name(dtype)}Tensor {shape}]{which} is at "
            f"version {version}; expected version {expected} instead. Hint: enable anomaly "
            "detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


class _AccumulateOp:
    node_name = "AccumulateGrad"
    saves = False


class AccumulateGrad:
    """The node at a leaf: adds incoming gradients into the leaf's `.grad`."""

    __slots__ = ("_variable", "pre_hooks", "retains", "post_hooks", "hooks", "__weakref__")
    op = _AccumulateOp
    edges = ()
    out_meta = (None,)

    def __init__(self, tensor):
        self._variable = weakref.ref(tensor)
        self.pre_hooks = None
        self.retains = None
        self.post_hooks = None
        self.hooks = None

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    @property
    def metadata(self):
        return {}

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

    _add_output_hook = Node._add_output_hook

    register_hook = Node.register_hook

    def register_prehook(self, fn):
        return self._add_output_hook(-1, fn)

    def accumulate(self, grad, create_graph):
        t = self._variable()
        if t is None:
            return
        fresh = t._grad is None
        if grad.layout is not _STRIDED or (not fresh and t._grad.layout is not _STRIDED):
            from ..sparse.ops import accumulate_grad   # (PyTorch's sparse + dense rules)
            t._grad = accumulate_grad(t._grad, grad, create_graph)
        elif fresh:
            if create_graph:
                t._grad = grad
            elif _owned(grad):
                # Steal a gradient nobody else can see (as PyTorch does) instead of copying.
                t._grad = grad if not grad._requires_grad else grad.detach()
            else:
                # NOTE: the incoming gradient may alias the user's `gradient=` argument or
                # another leaf's gradient (add passes one buffer to both inputs); the later
                # in-place accumulation must not write through into them.
                t._grad = _copy(grad)
        elif create_graph:
            t._grad = t._grad + grad
        else:
            # PyTorch accumulates in place: a reference the user holds to .grad sees the sum.
            g = t._grad
            g._data += grad._data.astype(g._data.dtype, copy=False)
            g._vc.v += 1
        if _guard.enabled:
            from ..debug.checks import on_accumulate
            on_accumulate(t, fresh)
        if self.post_hooks:
            for fn in tuple(self.post_hooks.values()):
                fn(t)
        if self.hooks:
            for fn in tuple(self.hooks.values()):
                fn((), (grad,))


def _copy(grad):
    return _T._wrap(grad._data.copy(), grad.dtype, grad._device)


def _fake_accumulate(self, grad, create_graph):
    return _probe(grad)


def _probe(grad):
    a = grad._data
    return sys.getrefcount(grad), sys.getrefcount(a)


def _calibrate():
    """How many references the engine itself holds on a gradient reaching `_owned` (the
    same call path: a list slot, accumulate's frame, _owned's frame)."""
    import numpy as np
    from .._tensor import _wrap
    from .._dtype import float32
    slot = [_wrap(np.zeros(2, np.float32), float32)]
    return _fake_accumulate(None, slot[0], False)


_BASELINE = None


def _owned(grad):
    """True when only the engine references `grad` and its buffer (safe to keep as .grad)."""
    global _BASELINE
    if _BASELINE is None:
        _BASELINE = _calibrate()
    a = grad._data
    if sys.getrefcount(grad) > _BASELINE[0] or sys.getrefcount(a) > _BASELINE[1]:
        return False
    base = getattr(a, "base", 0)
    if base is None:
        return True
    # A contiguous view of a buffer nobody else holds (the weight gradient of a Linear: the
    # matmul wrote W's gradient transposed so that TBackward's transpose lands contiguous):
    # the view's own reference and getrefcount's argument are the only ones on the buffer,
    # and on the Tensor that owned it.
    return (getattr(base, "base", 0) is None and a.flags.c_contiguous
            and sys.getrefcount(base) <= 2
            and (grad._base is None or sys.getrefcount(grad._base) <= 2))


class RemovableHandle:
    """Returned by every register_*hook: `remove()` (or leaving its `with` block) unhooks.
    PyTorch's torch.utils.hooks.RemovableHandle (ember.utils.hooks re-exports this class):
    weak references to the hook dicts, `extra_dict` entries removed too, picklable."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else _dead_ref
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        if self.extra_dict_ref is None:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # NOTE: a pickled handle whose dict was gone comes back holding a dead reference.
        self.hooks_dict_ref = _dead_ref if state[0] is None else weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _dead_ref():
    return None


class _HookDict(dict):
    """A dict that can be weakly referenced (for RemovableHandle)."""

    __slots__ = ("__weakref__",)


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
    fn = tensor.grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    acc = tensor._accumulator
    if acc is None:
        acc = tensor._accumulator = AccumulateGrad(tensor)
    return (acc, 0)


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


def _compiled_topological_order():
    """The walk above as compiled by the kernel layer (backends/csrc/autograd.c), the same
    steps and so the same order; the Python one stays the definition and the NumPy path's."""
    from ..backends.cpu_kernels import compiled
    return _topological_order if compiled is None else compiled.topological_order


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


def _run_hooks(hooks, grad):
    for fn in tuple(hooks.values()):
        result = fn(grad)
        if result is not None:
            grad = result
    return grad


def _tensor_hooks(node, node_grads):
    """Hooks registered on the tensors this node produced, then retain_grad's stores."""
    if node.pre_hooks:
        for nr, hooks in node.pre_hooks.items():
            if nr >= 0 and node_grads[nr] is not None and hooks:
                node_grads[nr] = _run_hooks(hooks, node_grads[nr])
    if node.retains:
        for nr, store in tuple(node.retains.items()):
            if node_grads[nr] is not None:
                store(node_grads[nr])


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None,
                 accumulate=True):
    """The engine: propagate `root_grads` from `roots` back through the graph.

    With `accumulate` (backward) gradients land in leaves' `.grad` (only `inputs`' when
    given); without it (autograd.grad) the gradients of `inputs` are returned instead.
    """
    root_edges = [edge_of(r) for r in roots]
    order = topological_order([e[0] for e in root_edges])
    grads = {}  # node -> list of gradient per output
    for (node, nr), g in zip(root_edges, root_grads):
        _add_grad(grads, node, nr, g)

    capture = reach = results = None
    if inputs is not None:
        capture = {}  # (node, output_nr) -> positions in inputs
        for k, t in enumerate(inputs):
            e = edge_of(t)
            if e is not None:
                capture.setdefault(e, []).append(k)
        results = [None] * len(inputs)
        reach = _reaching(order, [e[0] for e in capture])

    check_nan = anomaly.enabled and anomaly.check_nan
    recorder = profiler   # ember.profiler's, when one is recording: times each node
    node = None
    global _running
    outer = _running
    prev_mode = state.enabled
    state.enabled = create_graph
    try:
        if capture is None and recorder is None and not anomaly.enabled:
            walk(order, grads, retain_graph, create_graph)   # (the common call)
            return _finished(results)
        for node, node_grads in _arrivals(order, grads):
            if capture is not None:
                for nr, g in enumerate(node_grads):
                    ks = capture.get((node, nr))
                    if ks is not None and g is not None:
                        for k in ks:
                            results[k] = g
                        if accumulate and type(node) is not AccumulateGrad:
                            _accumulate_nonleaf(inputs[ks[0]], g, create_graph)
                g = None   # (no reference of the engine's own may reach _owned)
            if type(node) is AccumulateGrad:
                if accumulate and (capture is None or (node, 0) in capture):
                    if recorder is None:
                        accumulate_leaf(node, node_grads, create_graph)
                    else:
                        evaluation = recorder.begin_node(node)
                        accumulate_leaf(node, node_grads, create_graph)
                        recorder.end(evaluation)
                continue
            if reach is not None:
                for e in node.edges:
                    if e is not None and e[0] in reach:
                        break
                else:
                    continue
            apply_vjp(node, node_grads, grads, retain_graph, create_graph, check_nan,
                      recorder)
    except Exception as exc:
        if anomaly.enabled and node is not None and type(node) is not AccumulateGrad:
            anomaly.report(node, exc)
        raise
    finally:
        state.enabled = prev_mode
        _running = outer
    return _finished(results)


final_callbacks = []   # run once when a backward pass ends (register_multi_grad_hook's)


def _finished(results):
    if final_callbacks:
        callbacks = final_callbacks[:]
        final_callbacks.clear()
        for callback in callbacks:
            callback()
    return results


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


def accumulate_leaf(node, node_grads, create_graph):
    """A leaf's AccumulateGrad: its pre-hooks, then the gradient into `.grad`. NOTE: the
    gradient is passed on from the list slot directly: `_owned` counts the references on this
    path (the slot, accumulate's argument) to decide whether `.grad` may keep the buffer."""
    if node.pre_hooks and -1 in node.pre_hooks:
        node_grads = list(_run_hooks(node.pre_hooks[-1], tuple(node_grads)))
    node.accumulate(node_grads[0], create_graph)


def apply_vjp(node, node_grads, grads, retain_graph, create_graph, check_nan=False,
              recorder=None):
    """One node of backward: its pre-hooks, the check of its saved values, its VJP (and its
    hooks), then each input's gradient unbroadcast, cast to the input's dtype and added into
    the slot of the node that made the input (`grads`); its saved values are freed after."""
    global _running
    if node.pre_hooks and -1 in node.pre_hooks:
        node_grads = list(_run_hooks(node.pre_hooks[-1], tuple(node_grads)))
    if node.saved_versions is not None or node._out is not None:
        node.check_saved()
    if len(node_grads) > 1:  # (a single output's slot is never None)
        for g in node_grads:
            if g is None:
                node.fill_missing(node_grads)
                break
    _running = node
    op = node.op
    if recorder is not None:
        evaluation = recorder.begin_node(node)
    if node.conj_around:
        in_grads = _conjugated(op.vjp, node, node_grads)
    else:
        in_grads = op.vjp(node, *node_grads)
    _running = None
    if recorder is not None:
        recorder.end(recorder.open[-1])   # the node's call; its evaluation goes on
    if type(in_grads) is not tuple:
        in_grads = (in_grads,)
    if node.hooks:
        in_grads = _run_node_hooks(node, in_grads, node_grads)
    meta_shapes, meta_dtypes = node.in_meta[0], node.in_meta[1]
    for i, e in enumerate(node.edges):
        if e is None:
            continue
        g = in_grads[i]
        if g is None:
            continue
        if g._data.shape != meta_shapes[i]:
            g = _T.unbroadcast(g, meta_shapes[i])
        if g.dtype is not meta_dtypes[i]:
            g = _cast_grad(g, meta_dtypes[i])
        if check_nan:
            anomaly.check_grad(node, i, g)
        nxt, nr = e
        slot = grads.get(nxt)
        if slot is None:
            if len(nxt.out_meta) == 1:
                grads[nxt] = [g]
            else:
                slot = grads[nxt] = [None] * len(nxt.out_meta)
                slot[nr] = g
        elif slot[nr] is None:
            slot[nr] = g
        else:
            slot[nr] = _sum_grads(slot[nr], g)
    if recorder is not None:
        recorder.end(evaluation)
    if not retain_graph and op.saves:
        node.free()


def _sum_grads(held, g):
    """held + g; dense + sparse, never sparse + dense (PyTorch defines only the first)."""
    return g + held if held.layout is not _STRIDED else held + g


_running = None  # the node whose VJP is executing (for instruments naming a backward op)
profiler = None  # the Recorder of a running ember.profiler (set by it), else None


def current_node():
    """The graph node whose backward is running now, or None outside backward."""
    return _running


def _accumulate_nonleaf(t, g, create_graph):
    """backward(inputs=[non-leaf]) fills the non-leaf's .grad, as retain_grad would."""
    if t._grad is None:
        t._grad = g if create_graph else _copy(g)
    else:
        t._grad = t._grad + g


def _cast_grad(g, dtype):
    """A gradient in its input's dtype; a real input keeps the real part of a complex one
    (as PyTorch, without the warning a user's complex-to-real cast gives)."""
    if g.dtype.category == 3 and dtype.category < 3:
        g = g.real
    return g if g.dtype is dtype else g.to(dtype)


def _conjugated(vjp, node, grads):
    """conj(vjp(conj(g))): turns a VJP written as f'(z) * g into PyTorch's conj(f'(z)) * g
    (real gradients pass unchanged)."""
    conj = _T._fn["conj"]
    in_grads = vjp(node, *(None if g is None else conj(g) for g in grads))
    if type(in_grads) is not tuple:
        in_grads = (in_grads,)
    return tuple(None if g is None else conj(g) for g in in_grads)


def _run_node_hooks(node, in_grads, node_grads):
    for fn in tuple(node.hooks.values()):
        result = fn(in_grads, tuple(node_grads))
        if result is not None:
            in_grads = tuple(result)
    return in_grads


def _add_grad(grads, node, nr, g):
    slot = grads.get(node)
    if slot is None:
        slot = grads[node] = [None] * len(node.out_meta)
    if slot[nr] is None:
        slot[nr] = g
    else:
        slot[nr] = slot[nr] + g


from ..debug.state import state as _guard  # noqa: E402

topological_order = _compiled_topological_order()


def _compiled_walk():
    """`_walk` and `apply_vjp` as compiled by the kernel layer (backends/csrc/autograd.c),
    the same steps; the Python ones stay the definitions and the NumPy path's loop."""
    from ..backends.cpu_kernels import compiled
    if compiled is None:
        return _walk
    compiled.walk_setup({
        "globals": globals(), "AccumulateGrad": AccumulateGrad, "tensor_hooks": _tensor_hooks,
        "accumulate_leaf": accumulate_leaf, "apply_vjp": apply_vjp,
        "unbroadcast": _T.unbroadcast, "cast_grad": _cast_grad, "sum_grads": _sum_grads})
    return compiled.walk


walk = _compiled_walk()


# torch.autograd.graph's public helpers (saved-tensor hooks, gradient edges, multi-grad hooks)
from .saved_hooks import (  # noqa: E402,F401
    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)
from .graph_api import (  # noqa: E402,F401
    GradientEdge, allow_mutation_on_saved_tensors, get_gradient_edge, increment_version,
    register_multi_grad_hook)


def __getattr__(name):
    if name == "Variable":   # (torch.autograd.graph re-exports torch.autograd.Variable)
        from . import Variable
        return Variable
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
