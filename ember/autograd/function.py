"""autograd.Function: user-defined ops with a hand-written backward.

A Function call is one graph Node, like a registry op: its `ctx` IS the node (a
`<Name>Backward` subclass of Node, as PyTorch's grad_fn is the ctx), and the node's op has a
VJP that calls the user's `backward(ctx, *grads)`. The engine runs that VJP with grad mode
equal to `create_graph`, so a backward written in ember ops differentiates again.
"""
import functools
import warnings

from .. import _inplace  # (cycle: _inplace imports autograd) attributes read at call time
from .. import _tensor
from .._dtype import FLOATING
from . import anomaly
from .grad_mode import no_grad, state
from .node import _FREED_MESSAGE, Node, edge_of, zeros_like_meta
from . import saved_hooks as _saved_hooks

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """What `forward`/`setup_context` may call on ctx (mixed into every Backward node)."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _tensor.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._saved_for_forward = tensors

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The grad_fn of a Function call; also its ctx."""

    __module__ = "ember.autograd.function"
    _forward_cls = None

    def __repr__(self):
        return f"<ember.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def name(self):
        return type(self).__name__

    @property
    def saved_tensors(self):
        if self.freed:
            raise RuntimeError(_FREED_MESSAGE)
        saved = self.__dict__.get("_saved")
        if saved is None:
            return ()
        self.check_saved()
        return saved if type(saved) is tuple else tuple(saved)   # (PackedSaved: unpacked)

    saved_variables = saved_tensors

    @property
    def needs_input_grad(self):
        return self._needs_input_grad

    def _saved_inputs(self):
        return self.__dict__.get("_saved", ())

    def fill_missing(self, grads):
        if not self.__dict__.get("materialize_grads", True):
            return
        for nr, g in enumerate(grads):
            if g is None and self.out_meta[nr] is not None:
                grads[nr] = zeros_like_meta(self, nr)

    def free(self):
        # Only a ctx that saved tensors is spent by backward (PyTorch's rule too).
        if self.__dict__.pop("_saved", None) is not None:
            Node.free(self)

    def apply(self, *grads):
        """Call the user's backward directly (as PyTorch's ctx.apply)."""
        return self._forward_cls.backward(self, *grads)


class _FunctionOp:
    """The registry-shaped op behind one Function class."""

    __slots__ = ("name", "node_name", "cls")
    saves = True
    num_outputs = 1

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.__name__
        self.node_name = cls.__name__ + "Backward"

    def vjp(self, ctx, *grads):
        result = self.cls.backward(ctx, *grads)
        if type(result) is not tuple:
            result = (result,)
        n = len(ctx.edges)
        if len(result) != n:
            # PyTorch tolerates extra trailing Nones; anything else is a bug in backward.
            if len(result) < n or any(g is not None for g in result[n:]):
                raise RuntimeError(f"function {self.node_name} returned an incorrect number "
                                   f"of gradients (expected {n}, got {len(result)})")
            result = result[:n]
        shapes = ctx.in_meta[0]
        for i, g in enumerate(result):
            if g is not None and ctx.edges[i] is not None:
                if not isinstance(g, _tensor.Tensor):
                    raise TypeError(f"function {self.node_name} returned a gradient different "
                                    "than None at position "
                                    f"{i + 1}, but the corresponding forward input was not a "
                                    "Variable")
                if not _expandable(g._data.shape, shapes[i]):
                    raise RuntimeError(
                        f"Function {self.node_name} returned an invalid gradient at index {i} "
                        f"- got [{', '.join(map(str, g._data.shape))}] but expected shape "
                        f"compatible with [{', '.join(map(str, shapes[i]))}]")
        return result


def _expandable(shape, target):
    """Can a gradient of `shape` be summed down to `target` (it broadcasts from target)?"""
    if shape == target:
        return True
    if len(shape) < len(target):
        return False
    for s, t in zip(shape[len(shape) - len(target):], target):
        if t != 1 and s != t:
            return False
    return True


class _FunctionMeta(type):
    """Gives each Function subclass its own `<Name>Backward` node class and op."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"__slots__": (), "_forward_cls": cls,
                                  "__module__": "ember.autograd.function"})
        cls._op = _FunctionOp(cls)


class Function(metaclass=_FunctionMeta):
    """Subclass with static `forward(ctx, *args)` (or `forward(*args)` plus
    `setup_context(ctx, inputs, output)`) and `backward(ctx, *grads)`; call `.apply`."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _apply(cls, args, kwargs):
    Tensor = _tensor.Tensor
    ctx = object.__new__(cls._backward_cls)
    edges, needs, shapes, dtypes, device = [], [], [], [], None
    for a in args:
        if isinstance(a, Tensor):
            e = edge_of(a)
            edges.append(e)
            needs.append(a._requires_grad)
            shapes.append(a._data.shape)
            dtypes.append(a.dtype)
            if device is None:
                device = a._device
        else:
            edges.append(None)
            needs.append(False)
            shapes.append(None)
            dtypes.append(None)
    Node.__init__(ctx, cls._op, None, None, tuple(edges), (tuple(shapes), tuple(dtypes),
                                                           device))
    ctx._needs_input_grad = tuple(needs)
    custom_setup = cls.setup_context is not Function.setup_context
    with no_grad():
        if custom_setup:
            outputs = cls.forward(*args, **kwargs)
        else:
            outputs = cls.forward(ctx, *args, **kwargs)
    if custom_setup:
        cls.setup_context(ctx, args, outputs)
    record = state.enabled and any(needs)
    return _finish(ctx, args, outputs, record)


def _finish(ctx, args, outputs, record):
    """Wire the forward's outputs to ctx (the node), honouring dirty/non-differentiable."""
    Tensor = _tensor.Tensor
    single = not isinstance(outputs, tuple)
    outs = [outputs] if single else list(outputs)
    d = ctx.__dict__
    dirty = {id(t) for t in d.get("_dirty", ())}
    non_diff = {id(t) for t in d.get("_non_differentiable", ())}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    meta = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        if id(o) in dirty:
            if record and o._requires_grad and o.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            _inplace.bump_version(o)
        elif id(o) in input_ids:
            # An input returned unchanged is a new tensor (a view of it), as in PyTorch.
            o = outs[nr] = o.detach()
        meta.append((o._data.shape, o.dtype))
        if record and id(o) not in non_diff and o.dtype.category >= FLOATING:
            o._requires_grad = True
            o.grad_fn = ctx
            o._output_nr = nr
    ctx.out_meta = tuple(meta)
    saved = d.pop("_to_save", None)
    if saved is not None:
        ctx._saved = tuple(saved)
        if record and _saved_hooks.state.active:   # saved_tensors_hooks: pack (no version check)
            ctx._saved = _saved_hooks.pack_function_saved(saved)
        elif record:
            ctx.saved_versions = [None if t is None else t._vc.v for t in saved]
    if record:
        if anomaly.enabled:
            anomaly.record_trace(ctx)
    return outs[0] if single else tuple(outs)


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs without recording,
    and differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not state.enabled:
            return outputs
        if not any(isinstance(a, _tensor.Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # The results hang off stand-in leaves through a node whose backward raises.
        wrapped = tuple(_DelayedError.apply(o.detach().requires_grad_(True))
                        if isinstance(o, _tensor.Tensor) and o.dtype.category >= FLOATING else o
                        for o in outs)
        return wrapped[0] if single else wrapped
    return wrapper


class _DelayedError(Function):
    @staticmethod
    def forward(ctx, x):
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._backward_cls.__name__ = "DelayedError"
_DelayedError._op.node_name = "DelayedError"


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
