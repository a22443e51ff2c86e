"""THE op registry and its single door.

An op is a name, a forward on backend arrays (taking `xp` from its inputs, so one body
serves NumPy and CuPy) and a VJP written in ember ops (so double backward is free).
Every call goes through `dispatch`: it runs the forward, wraps the result and records the
graph node; optional instruments (the pitfall guard, anomaly mode) hook in there.
"""
import numpy as np

from .. import backends
from .._dtype import _BY_NP, COMPLEX, FLOATING, dtype as dtype_cls
from .._scalars import type_name
from .._tensor import FAST_TYPES, Tensor, _wrap
from ..backends import cpu_kernels
from ..autograd.node import get_accumulator
from .._dtype import from_numpy_dtype
from ..autograd.grad_mode import state
from ..autograd.node import Node

OPS = {}          # name -> Op
PUBLIC = {}       # name -> function exported as ember.<name>
METHODS = {}      # name -> function bound as Tensor.<name>
instruments = []  # callables(op, inputs, params, result) run after each op when present;
#                   one with `all_outputs = True` gets the tuple of a multi-output op's results
profiler = None   # the Recorder of a running ember.profiler, which times each call (it also
#                   sits in `instruments`, so the compiled door hands every call to this one)

_EMPTY = {}


_NODE_CLASSES = {}


def node_class(name):
    """The Node subclass named like PyTorch's grad_fn class (MulBackward0), one per name, so
    `type(t.grad_fn).__name__` reads as in PyTorch."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (Node,), {"__slots__": (),
                                                          "__module__": "ember.autograd.graph"})
    return cls


def name_node(result, node_name):
    """Give the node that made `result`, the last op of a composite written in ember ops,
    PyTorch's name for the whole composite (MseLossBackward0 on mse_loss's mean): its class
    (`type(t.grad_fn).__name__`) and op name change, its VJP stays the op's own, so gradients
    are untouched. `result` must be the composite's fresh output; no graph, no change."""
    fn = result.grad_fn
    if fn is not None:
        fn.op = fn.op.renamed(node_name)
        fn.__class__ = fn.op.node_class
    return result


class Op:
    """One primitive: `forward(*arrays, **params)` and `vjp(ctx, *grads)`.

    `saves` lists the inputs the VJP reads (their in-place modification is an error);
    `save_output` keeps the output for VJPs that prefer it (exp, tanh, sigmoid).

    Complex gradients follow PyTorch's convention (the conjugate Wirtinger derivative: for a
    holomorphic f the input gradient is conj(f'(z)) * g). A VJP written as f'(z) * g, the
    natural form and the one every real op has, gets it from the engine, which conjugates
    around the VJP of a node with a complex result. `conj_ready` marks the VJPs written in
    PyTorch's convention already (non-holomorphic ops, the linear algebra decompositions).
    """

    __slots__ = ("name", "forward", "vjp", "_node_name", "node_class",
                 "save_inputs", "save_output", "num_outputs", "saves", "view", "_renamed",
                 "conj_ready")

    def __init__(self, name, forward, node_name, save_inputs, save_output, num_outputs,
                 view=False, conj_ready=False):
        self.name = name
        self.conj_ready = conj_ready
        self.view = view
        self.forward = forward
        self.vjp = _missing_vjp(name)
        self.node_name = node_name
        self.save_inputs = save_inputs
        self.save_output = save_output
        self.num_outputs = num_outputs
        self.saves = save_output or save_inputs is None or bool(save_inputs)
        self._renamed = None

    @property
    def node_name(self):
        return self._node_name

    @node_name.setter
    def node_name(self, name):
        self._node_name = name
        self.node_class = node_class(name)

    def defvjp(self, fn):
        self.vjp = fn
        return fn

    def renamed(self, node_name):
        """This op recorded under another grad_fn name: PyTorch numbers the overloads of
        one op (SumBackward0 for sum(), SumBackward1 for sum(dim)), ember shares the body."""
        if self._renamed is None:
            self._renamed = {}
        twin = self._renamed.get(node_name)
        if twin is None:
            twin = Op(self.name, self.forward, node_name, self.save_inputs, self.save_output,
                      self.num_outputs, self.view, self.conj_ready)
            twin.vjp = self.vjp
            self._renamed[node_name] = twin
        return twin

    def __repr__(self):
        return f"<op {self.name}>"


def _missing_vjp(name):
    def vjp(ctx, *grads):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    return vjp


def defop(name, node=None, save=None, save_output=False, num_outputs=1, view=False,
          conj_ready=False):
    """Decorator: register `forward` as op `name`; returns the Op (add a VJP with .defvjp).

    `node`: grad_fn class name (PyTorch's, e.g. 'MulBackward0'); `save`: tuple of input
    positions the VJP reads (None = all tensor inputs); `view`: the output aliases input 0
    and shares its version counter; `conj_ready`: the VJP gives PyTorch's complex gradients
    itself (see Op).
    """
    def register(forward):
        node_name = node or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        op = Op(name, forward, node_name, save, save_output, num_outputs, view, conj_ready)
        OPS[name] = op
        return op
    return register


def export(fn=None, *, name=None, method=True, function=True, inplace=False, aliases=()):
    """Make `fn` public as `ember.<name>` and/or `Tensor.<name>` (and `<name>_` in place)."""
    def register(f):
        n = name or f.__name__
        for alias in (n,) + tuple(aliases):
            if function:
                PUBLIC[alias] = f
            if method:
                METHODS[alias] = f
            if inplace:
                METHODS[alias + "_"] = make_inplace(f, alias + "_")
        return f
    return register if fn is None else register(fn)


def not_tensor(fname, value, arg="input", position=1):
    """PyTorch's argument parser's error for a non-tensor where a Tensor is expected."""
    return TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor, not "
                     f"{type_name(value)}")


def check_tensor(fname, value, arg="input", position=1):
    """Raise PyTorch's TypeError unless `value` is a Tensor (function forms check their
    tensor arguments first, so a NumPy scalar is a TypeError, not an AttributeError)."""
    if value.__class__ is not Tensor and not isinstance(value, Tensor):
        raise not_tensor(fname, value, arg, position)


def check_tensor_list(fname, tensors, arg="tensors"):
    """`tensors` after PyTorch's checks of a tuple-of-tensors argument (cat, stack, ...)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of Tensors, "
                        f"not {type_name(tensors)}")
    check_elements(tensors)
    return tensors


def check_elements(tensors):
    """PyTorch's error for a non-tensor in a list of tensors (also *tensors arguments)."""
    for i, t in enumerate(tensors):
        if t.__class__ is not Tensor and not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(t)}")


def _device_error(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {a} and {b}!")


def dispatch(op, inputs, params=_EMPTY, dtype=None, arrays=None):
    """Run `op` on `inputs` (Tensors and Python scalars); the one door every op passes.

    `dtype` is the result's ember dtype (inferred from the array when None); `arrays` lets a
    caller pass inputs already cast to the compute dtype.
    """
    if profiler is not None:   # ember.profiler is recording: it times this call
        return profiler.op(op, inputs, params, dtype, arrays)
    if _func.depth:   # a module int: nonzero only inside ember.func.vmap (batched operands)
        batched = _func.handler(op, inputs, params, dtype, arrays)
        if batched is not None:
            return batched
    device = None
    needs_grad = False
    for x in inputs:
        if isinstance(x, Tensor):
            if device is None:
                device = x._device
            elif x._device is not device and x._device != device:
                raise _device_error(device, x._device)
            if x._requires_grad:
                needs_grad = True
    if device is not None and device.index is not None and \
            device.index != backends.current_gpu.index:
        with backends.get(device.type).guard(device.index):   # a GPU other than the current
            return dispatch(op, inputs, params, dtype, arrays)
    if _autocast.active:   # a module int: zero cost when no autocast region is open
        inputs, arrays, dtype = _autocast.apply(op, inputs, arrays, dtype)
    if arrays is None:
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    try:
        out = op.forward(*arrays, **params)
    except backends.oom_errors as exc:   # (evaluated only when something was raised)
        raise _out_of_memory(exc, device) from None
    if op.num_outputs == 1:
        if out.__class__ is _ndarray and dtype is not None and out.dtype is dtype.np:
            result = _wrap(out, dtype, device)   # (the common case, without a call)
        else:
            result = _wrap_out(out, dtype, device)
        if op.view:
            base = inputs[0]
            result._vc = base._vc
            result._base = base if base._base is None else base._base
        if needs_grad and state.enabled and result.dtype.category >= FLOATING:
            node = _record(op, inputs, params, (result,), device)
            if op.view:
                node.view_version = result._vc.v
        if instruments:
            for instrument in instruments:
                instrument(op, inputs, params, result)
        return result
    return _many_results(op, inputs, params, out, dtype, device, needs_grad)


def _many_results(op, inputs, params, out, dtype, device, needs_grad):
    """The end of `dispatch` for an op with several outputs: wrap each (`dtype`, when given,
    is the first one's), record one node for all of them, tell the instruments."""
    results = tuple(_wrap_out(o, None, device) for o in out)
    if dtype is not None:
        results[0].dtype = dtype
    if needs_grad and state.enabled:
        _record(op, inputs, params, results, device)
    if instruments:
        for instrument in instruments:
            # (a tracer that must see every output says so with `all_outputs`)
            instrument(op, inputs, params,
                       results if getattr(instrument, "all_outputs", False) else results[0])
    return results


def _out_of_memory(exc, device):
    """A GPU allocation failure as ember.cuda.OutOfMemoryError; anything else unchanged."""
    if device is None or device.type == "cpu":
        return exc
    return backends.get(device.type).out_of_memory(exc, device.index)


def _wrap_out(out, dtype, device):
    if isinstance(out, _SCALAR_TYPES):  # NumPy reductions return scalars, not 0-d arrays
        out = np.asarray(out)
    if dtype is None:
        dtype = from_numpy_dtype(out.dtype)
    elif out.dtype != dtype.np:
        out = out.astype(dtype.np)
    return _wrap(out, dtype, device)


_SCALAR_TYPES = (np.generic, int, float, bool, complex)
_ndarray = np.ndarray


def _record(op, inputs, params, results, device):
    """Make the graph node of one op call (one constructor call) and attach it to the
    results.

    NOTE: hot path on the Python door (every differentiable op): one pass over the inputs,
    no generators, and only the Node fields every node needs (hooks and the like are class
    defaults). backends/csrc/dispatch.c's `record` follows these steps one for one."""
    edges, shapes, dtypes, versions, scalars = _input_edges(inputs, op.save_inputs is None)
    kept, saved_versions = _kept_inputs(inputs, op.save_inputs, scalars)
    node = op.node_class(op, kept, params, edges, (shapes, dtypes, device))
    node.saved_versions = versions if saved_versions is None else saved_versions
    if len(results) == 1:
        _attach_result(node, op, results[0])
    else:
        _attach_results(node, op, results)
    if _saved_hooks.active:   # a saved_tensors_hooks region is open: pack what was saved
        _saved_hooks_pack(node, results)
    if _anomaly.enabled:
        _anomaly.record_trace(node)
    if instruments:
        for instrument in instruments:
            on_record = getattr(instrument, "on_record", None)
            if on_record is not None:
                on_record(node)
    return node


def _input_edges(inputs, keep_versions):
    """One pass over an op's inputs: each input's edge into the graph (None for a scalar or a
    tensor that needs no gradient), shape and dtype, the versions of all of them when the node
    saves every input (`keep_versions`), and whether any input is a Python scalar."""
    edges, shapes, dtypes = [], [], []
    versions = [] if keep_versions else None
    scalars = False
    for x in inputs:
        if isinstance(x, Tensor):
            if x._requires_grad:
                fn = x.grad_fn
                if fn is not None:
                    if x._base is not None:
                        fn = current_grad_fn(x)
                    edges.append((fn, x._output_nr))
                else:
                    acc = x._accumulator
                    edges.append((acc if acc is not None else get_accumulator(x), 0))
            else:
                edges.append(None)
            shapes.append(x._data.shape)
            dtypes.append(x.dtype)
            if versions is not None:
                versions.append(x._vc.v)
        else:
            edges.append(None)
            shapes.append(None)
            dtypes.append(None)
            if versions is not None:
                versions.append(None)
            scalars = True
    return edges, shapes, dtypes, versions, scalars


def _kept_inputs(inputs, save, scalars):
    """What the node keeps of its inputs, by the op's `save` (None: all of them; a tuple of
    positions: those tensors; empty: only the Python scalars, which a VJP may read as an
    exponent or an alpha), and the versions of the kept tensors where `save` names them (None
    where `_input_edges` took them, or nothing is kept)."""
    if save is None:
        return inputs, None
    if save:
        kept = list(inputs)
        versions = [None] * len(kept)
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor):
                if i in save:
                    versions[i] = x._vc.v
                else:
                    kept[i] = None
        return kept, versions
    if scalars:
        return [None if isinstance(x, Tensor) else x for x in inputs], None
    return _NONES.get(len(inputs)) or (None,) * len(inputs), None


def _attach_result(node, op, r):
    """Make `node` the grad_fn of an op's single result `r` (saving it where the op's VJP
    reads its output)."""
    node.out_meta = ((r._data.shape, r.dtype),)
    if op.save_output:
        version = r._vc
        node._out = ((r._data,), (r.dtype,), version, version.v)  # (see save_output)
    if r.dtype.category == COMPLEX and not op.conj_ready:
        node.conj_around = True
    r._requires_grad = True
    r.grad_fn = node
    r._output_nr = 0


def _attach_results(node, op, results):
    """Make `node` the grad_fn of each floating result of a many-output op."""
    node.out_meta = tuple((r._data.shape, r.dtype) for r in results)
    if op.save_output:
        node.save_output([r._data for r in results], [r.dtype for r in results],
                         results[0]._vc)
    if not op.conj_ready and any(r.dtype.category == COMPLEX for r in results):
        node.conj_around = True
    for nr, r in enumerate(results):
        if r.dtype.category >= FLOATING:
            r._requires_grad = True
            r.grad_fn = node
            r._output_nr = nr


_NONES = {n: (None,) * n for n in range(1, 5)}


def current_grad_fn(view):
    """A view's grad_fn, regenerated first when its memory changed in place since it was
    recorded (through its root or another view): the old node would read stale values."""
    fn = view.grad_fn
    version = getattr(fn, "view_version", None)
    if version is not None and version != view._vc.v:
        from .view_inplace import refresh_view   # (cycle: view_inplace imports this module)
        fn = refresh_view(view)
    return fn


from ..autograd import anomaly as _anomaly  # noqa: E402
from ..amp import autocast_mode as _autocast  # noqa: E402
from ..func import _state as _func  # noqa: E402
from ..autograd.saved_hooks import state as _saved_hooks  # noqa: E402
from ..autograd.saved_hooks import pack_node as _saved_hooks_pack  # noqa: E402


def _compiled_door():
    """`dispatch` as compiled by the kernel layer (backends/csrc/dispatch.c) when it is built:
    the same steps without Python frames for plain CPU calls, handing every other call to the
    Python `dispatch` above, which stays the definition (and the door on the NumPy path)."""
    kernels = cpu_kernels.compiled
    if kernels is None:
        return dispatch
    kernels.dispatch_setup({
        "dispatch": dispatch, "record": _record, "wrap_out": _wrap_out,
        "current_grad_fn": current_grad_fn, "get_accumulator": get_accumulator,
        "Node": Node, "Op": Op, "dtype": dtype_cls, "ndarray": np.ndarray, "grad_state": state,
        "autocast": _autocast, "anomaly": _anomaly, "instruments": instruments,
        "empty_params": _EMPTY, "plain_types": FAST_TYPES, "dtype_of_numpy": _BY_NP,
        # (object, attribute): while any is true the Python door takes every call
        "switches": [(_func, "depth"), (_saved_hooks, "active")]})
    return kernels.dispatch


python_dispatch = dispatch
dispatch = _compiled_door()


def compiled_operator(op, general, name, reflected=False):
    """Tensor's Python operator `name` (`__mul__`) for `op`: `general` (the operator written
    in Python, the definition) with a compiled twin in front for the plain call (a floating
    tensor with a same-dtype tensor or a Python number) when the kernel layer is built."""
    if dispatch is python_dispatch:
        return general
    return cpu_kernels.compiled.binary_operator(op, general, name, reflected)


# (cycle: the in-place protocol reads current_grad_fn above and imports the view ops, which
# register through this module; `export(inplace=True)` needs it only when an op module loads)
from .inplace import make_inplace  # noqa: E402
