"""The nodes of the autograd graph.

A `Node` is recorded per differentiable op call (a subclass named like PyTorch's grad_fn class,
`MulBackward0`); it holds the op, the inputs its VJP needs and their versions, its params, its
edges (one `(node, output_nr)` per input) and the shapes and dtypes of its inputs. A leaf that
requires grad gets an `AccumulateGrad` node, which adds the gradients reaching it into `.grad`.
"""
import re
import sys
import weakref

import numpy as np

from .. import backends
from .. import _inplace  # (cycle: _inplace imports autograd) attributes read at call time
from .. import _tensor as _T  # partially initialised here: attributes are read at call time
from .._constants import strided as _STRIDED
from .._dtype import FLOATING, float32, type_name
from .grad_mode import no_grad
from .hooks import HookDict, add_hook

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


def zeros_like_meta(node, nr):
    """Zeros standing for the gradient of an output nobody used (multi-output ops)."""
    shape, dtype = node.out_meta[nr]
    xp = backends.get(node.device.type).xp
    with backends.on(node.device):
        return _T._wrap(xp.zeros(shape, dtype=dtype.np), dtype, node.device)


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
            self.hooks = HookDict()
        return add_hook(self.hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's VJP runs; may return replacements."""
        return self._add_output_hook(-1, fn)

    def _add_output_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        hooks = self.pre_hooks.get(output_nr)
        if hooks is None:
            hooks = self.pre_hooks[output_nr] = HookDict()
        return add_hook(hooks, fn)

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
            if d.category >= FLOATING:
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
                grads[nr] = zeros_like_meta(self, nr)

    @property
    def freed(self):
        return self.saved_versions is _FREED

    def free(self):
        self.inputs = None
        self.saved_versions = _FREED
        if self._out is not None:
            self._out = None


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def forward_name(node_name):
    """The op a node's name stands for, as PyTorch's messages name it ("Exp" for
    "ExpBackward0")."""
    return _BACKWARD_SUFFIX.sub("", node_name)


def _inplace_message(shape, dtype, version, expected, producer):
    shape = "[" + ", ".join(map(str, shape)) + "]"
    # PyTorch names the producing node without its "Backward0" suffix ("output 0 of Exp").
    which = "" if producer is None else \
        f", which is output {producer[0]} of {forward_name(producer[1])},"
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
            # PyTorch's sparse + dense rules (cycle: ember.sparse builds on the ops, which
            # import this module)
            from ..sparse.ops import accumulate_grad
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
            _inplace.bump_version(g)
        if _guard.enabled:
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
    slot = [_T._wrap(np.zeros(2, np.float32), float32)]
    return _fake_accumulate(None, slot[0], False)


_BASELINE = None


def _owned(grad):
    """True when only the engine references `grad` and its buffer (safe to keep as .grad)."""
    global _BASELINE
    if _BASELINE is None:
        _BASELINE = _calibrate()
    return unshared(grad, _BASELINE[0] + 1, _BASELINE[1])   # (+1: unshared's own frame)


def unshared(grad, tensor_refs, array_refs):
    """True when `grad` has at most `tensor_refs` references and its array `array_refs` (the
    caller's own, counted as sys.getrefcount counts them here) and no other array or tensor
    shares its buffer."""
    a = grad._data
    if sys.getrefcount(grad) > tensor_refs or sys.getrefcount(a) > array_refs:
        return False
    base = getattr(a, "base", 0)
    if base is None:
        return True
    # A contiguous view of a buffer nobody else holds (the weight gradient of a Linear: the
    # matmul wrote W's gradient transposed so that TBackward's transpose lands contiguous; a
    # bias's, a sum reshaped). Counted here: `base`, `owner` and getrefcount's argument, the
    # view's own reference and, on the buffer, that of the Tensor that owned it, when only
    # the view holds that Tensor.
    if getattr(base, "base", 0) is not None or not a.flags.c_contiguous:
        return False
    owner = grad._base
    if owner is None:
        return sys.getrefcount(base) <= 3
    return sys.getrefcount(owner) <= 3 and \
        sys.getrefcount(base) <= (4 if owner._data is base else 3)


def get_accumulator(tensor):
    """The AccumulateGrad node of a leaf, made on first use."""
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


def reset_grads(tensors, set_to_none):
    """Module.zero_grad's and Optimizer.zero_grad's work: each tensor's `.grad` dropped, or
    detached from any graph and zeroed in place (a sparse one loses its entries), as
    PyTorch does."""
    for t in tensors:
        g = t._grad
        if g is None:
            continue
        if set_to_none:
            t._grad = None
            continue
        if g.grad_fn is not None:
            g = t._grad = g.detach()
        else:
            g.requires_grad_(False)
        with no_grad():
            g.zero_()


from ..debug.checks import on_accumulate  # noqa: E402
from ..debug.state import state as _guard  # noqa: E402
