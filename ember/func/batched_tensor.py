"""The batched value of ember.func.vmap and the registry door's batching step.

A BatchedTensor is the logical tensor one call of the vmapped function sees. It wraps
`_inner`, a tensor whose dim 0 is the batch dimension of vmap level `_level` (and which may
itself be batched at an outer level), so every op runs once on the whole batch. Its `_data`
is a read-only logical view (batch element 0, as a `LogicalView` array): argument checks that
read shapes, dtypes or even values before dispatch work unchanged, and arrays derived from it
stay LogicalViews, so a value that left ember's dispatch (an op ember cannot batch) is caught
at the door instead of silently standing for the whole batch.

Autograd never records on BatchedTensors: ops recorded under vmap are recorded on the inner
tensors (see transforms.py: grad under vmap differentiates the batched program).
"""
import warnings

import numpy as np

from .._tensor import Tensor, wrap_as
from ..ops.shape import stack
from . import _state

_new = object.__new__

# Open vmap levels, innermost last: each is [batch size].
LEVELS = []


class LogicalView(np.ndarray):
    """The logical `_data` of a BatchedTensor (NumPy keeps the subclass through views,
    casts and ufuncs, which is how leaked values are recognised).

    Functions that compute a result from the values themselves outside dispatch (argmax,
    all, unique, ...) would see batch element 0 only: called on a LogicalView they raise."""

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ in _VALUE_FUNCTIONS:
            raise UnbatchableError(f"vmap: ember computes {func.__name__}() outside its op "
                                   "dispatch and cannot batch it; ember does not support it "
                                   "inside vmap.")
        return super().__array_function__(func, types, args, kwargs)


# NumPy functions whose results ember's non-differentiable functions return as they are.
_VALUE_FUNCTIONS = frozenset((
    "argmax argmin argsort sort unique searchsorted histogram histogram_bin_edges bincount "
    "nonzero argwhere count_nonzero flatnonzero lexsort argpartition partition all any "
    "digitize isin in1d unique_values unique_counts unique_inverse unique_all").split())


class BatchedTensor(Tensor):
    """A tensor inside vmap: logical shape outside, physical batch at dim 0 of `_inner`."""

    __slots__ = ("_inner", "_level")

    @property
    def requires_grad(self):
        return self._inner.requires_grad

    @property
    def data(self):
        return make_batched(self._inner.data, self._level)

    def detach(self):
        return make_batched(self._inner.detach(), self._level)

    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
            "over calling .item() on a Tensor, please try to rewrite what you're doing with "
            "other operations. If error is occurring somewhere inside PyTorch internals, "
            "please file a bug report.")

    __float__ = __int__ = __complex__ = __index__ = item

    def __bool__(self):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")

    def _no_storage(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    tolist = numpy = _host = _no_storage

    # fill_ and zero_ write `_data` directly outside a graph: here they write the batch.
    def fill_(self, value):
        if isinstance(value, Tensor):
            return self.copy_(value.expand(self.shape))
        self._inner.fill_(value)
        return self

    def zero_(self):
        self._inner.zero_()
        return self

    def __repr__(self):
        inner = "\n".join("    " + line for line in repr(self._inner).splitlines())
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{inner}\n)"


def make_batched(inner, level):
    """The logical tensor of vmap level `level` whose batch is dim 0 of `inner`."""
    data = inner._data
    logical = data[0] if data.shape[0] else _empty_logical(data)
    if isinstance(logical, np.ndarray):
        logical = logical.view(LogicalView)
        logical.flags.writeable = False
    t = wrap_as(logical, inner.dtype, inner._device, BatchedTensor)
    t._inner = inner
    t._level = level
    return t


def debug_unwrap(tensor, *, recurse=True):
    """The tensor a BatchedTensor wraps (its batch at dim 0); every level with `recurse`."""
    while tensor.__class__ is BatchedTensor:
        tensor = tensor._inner
        if not recurse:
            break
    return tensor


def _empty_logical(data):
    """A batch of size 0 has no element 0: its logical view is a zero-filled stand-in."""
    return np.zeros(data.shape[1:], dtype=data.dtype)


def physical(value, level):
    """`value` as a tensor with the batch of `level` at dim 0 (unbatched values expanded)."""
    if value.__class__ is BatchedTensor and value._level == level:
        return value._inner
    size = LEVELS[level - 1][0]
    return value.unsqueeze(0).expand((size,) + tuple(value.shape))


# ---------------------------------------------------------------------- the door's step
class Call:
    """One op call at one vmap level: the inputs with this level's batched ones replaced by
    their physical tensors (`values`), which of them are batched, and the call's params."""

    __slots__ = ("op", "inputs", "values", "batched", "params", "dtype", "arrays", "level",
                 "size")

    def __init__(self, op, inputs, params, dtype, arrays, level):
        self.op, self.inputs, self.params, self.dtype = op, inputs, params, dtype
        self.arrays, self.level = arrays, level
        self.size = LEVELS[level - 1][0]
        self.values = [x._inner if x.__class__ is BatchedTensor and x._level == level else x
                       for x in inputs]
        self.batched = [x.__class__ is BatchedTensor and x._level == level for x in inputs]

    def run(self, values=None, params=None, op=None):
        """Dispatch the op (or `op`) on physical `values`."""
        values = self.values if values is None else values
        arrays = recast(self.op, values, self.arrays, self.inputs)
        return _registry.dispatch(op or self.op, tuple(values), self.params if params is None
                                  else params, self.dtype, arrays)

    def logical_ndim(self, i):
        v = self.values[i]
        return v.dim() - 1 if self.batched[i] else v.dim()


def recast(op, values, arrays, inputs):
    """The caller's pre-cast `arrays` for `inputs`, made again from the tensors replacing
    them (`values`): the only change callers make to them is a dtype cast."""
    if arrays is None:
        return None
    out = []
    for v, a, x in zip(values, arrays, inputs):
        if isinstance(v, Tensor):
            d = v._data
            if getattr(a, "shape", None) != x._data.shape:
                raise _unsupported(op, "its caller reshaped a batched operand")
            out.append(d if a.dtype == d.dtype else d.astype(a.dtype))
        else:
            out.append(a)
    return out


def intercept(op, inputs, params, dtype, arrays):
    """The batching step of `registry.dispatch` (active only inside vmap): None for a call
    without batched operands, else the batched result of the op's rule (or of the loop)."""
    level = 0
    for x in inputs:
        cls = x.__class__
        if cls is BatchedTensor:
            if x._level > level:
                level = x._level
        elif cls is _state.dual_type:   # forward AD (ember.autograd.forward_ad)
            return _state.dual_step(op, inputs, params, dtype, arrays)
        elif cls is not int and cls is not float and isinstance(x, Tensor) and \
                x._data.__class__ is LogicalView:
            raise _leaked(op)
    if not level:
        return None
    if params:
        _check_params(op, params)
    call = Call(op, inputs, params, dtype, arrays, level)
    rule = _rules.BATCHING_RULES.get(op.name)
    out = loop_fallback(call) if rule is None else rule(call)
    if type(out) is tuple:
        return tuple(make_batched(o, level) for o in out)
    result = make_batched(out, level)
    result._made_by = op.name   # (named in the error of an in-place write it cannot take)
    return result


def _check_params(op, params):
    for value in params.values():
        if value.__class__ is LogicalView or (type(value) in (tuple, list) and any(
                v.__class__ is LogicalView for v in value)):
            raise _unsupported(op, "a batched tensor reaches it as an index or a parameter")


class UnbatchableError(RuntimeError):
    """A call ember cannot batch (its values leave the op dispatch); transforms that batch
    internally (jacrev, jacfwd) catch it and loop instead."""


def _unsupported(op, why):
    return UnbatchableError(f"vmap: ember cannot batch the op '{op.name}' here ({why}); "
                        "ember does not support this call inside vmap.")


def _leaked(op):
    return UnbatchableError(f"vmap: the op '{op.name}' got a tensor computed from a batched "
                        "tensor outside ember's op dispatch (a function ember cannot batch); "
                        "ember does not support that function inside vmap.")


_warned = set()


def loop_fallback(call):
    """Ops without a batching rule: the op once per batch element, results stacked (with
    PyTorch's one-time performance warning per op)."""
    name = call.op.name
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {name}. Please file us an issue on GitHub so that "
                      "we can prioritize its implementation.", UserWarning, stacklevel=4)
    rows = []
    for b in range(call.size):
        values = [v.select(0, b) if bt else v for v, bt in zip(call.values, call.batched)]
        rows.append(call.run(values))
    if type(rows[0]) is tuple:
        return tuple(stack([r[k] for r in rows]) for k in range(len(rows[0])))
    return stack(rows)


# PyTorch names the in-place op in this error: arithmetic ones by their kind, others by name.
_ARITHMETIC = {"sub", "mul", "div", "copy_", "copy_slices", "index_put"}
_OVERLOAD_SUFFIXES = ("_scalar", "_tensor", "_min", "_max", "_base", "_self", "_other")


def _inplace_error(self, result, level):
    made_by = getattr(result, "__dict__", {}).get("_made_by", "")
    if made_by == "add":   # (add_ reports the shapes instead)
        return RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                            f"shape {[LEVELS[level - 1][0]] + list(result.shape)}")
    name, where = "inplace arithmetic", "in a vmap"
    if made_by and made_by not in _ARITHMETIC:
        for suffix in _OVERLOAD_SUFFIXES * 2:
            if made_by.endswith(suffix):
                made_by = made_by[:-len(suffix)]
        name, where = f"aten::{made_by}_", f"at level {level}"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over {where}. Please try "
        f"to use out-of-place operators instead of {name}. If said operator is being called "
        "inside the PyTorch framework, please file a bug report instead.")


def commit_inplace(self, result):
    """In-place ops on batched tensors write the physical batch; writing a batched value
    into a tensor that is not batched at its level is PyTorch's shape error."""
    if _state.dual_type is not None and _state.dual_type in (self.__class__, result.__class__):
        return _state.dual_commit(self, result)
    level = max(x._level if x.__class__ is BatchedTensor else 0 for x in (self, result))
    if not level:
        return None
    self_batched = self.__class__ is BatchedTensor and self._level == level
    if not self_batched:
        raise _inplace_error(self, result, level)
    source = result._inner if result.__class__ is BatchedTensor and result._level == level \
        else result
    self._inner.copy_(source)
    return self


from ..ops import registry as _registry  # noqa: E402
from . import batching_rules as _rules  # noqa: E402

_state.handler = intercept
_state.commit_inplace = commit_inplace
