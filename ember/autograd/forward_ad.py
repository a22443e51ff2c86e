"""Forward-mode AD (torch.autograd.forward_ad): dual tensors that carry a tangent through
every op.

Inside a dual level, `make_dual(primal, tangent)` gives a DualTensor; the registry door
hands every op call with a dual operand to `dual_step`, which runs the op on the primals and
computes the result's tangent from ember.func.jvp_rules.JVP_RULES (a table keyed by op name,
written in ember ops), or, for an op without a rule, by the double-VJP trick on that one op.
"""
from typing import NamedTuple

from .. import _creation   # (factories read at call time: ember.compile patches them)
from .._dtype import FLOATING
from .._printing import PRINT_OPTS
from .._tensor import Tensor, wrap_as
from ..func import _state
from ..ops import registry
from .node import get_accumulator

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

_current_level = -1   # PyTorch allows one dual level at a time


class UnpackedDualTensor(NamedTuple):
    """unpack_dual's result: the primal (a view of the dual tensor) and its tangent."""
    primal: Tensor
    tangent: Tensor


class DualTensor(Tensor):
    """A primal tensor with a tangent for dual level `_level`."""

    __slots__ = ("_primal", "_tangent", "_level")

    @property
    def requires_grad(self):
        return self._primal.requires_grad

    def detach(self):
        return self._primal.detach()

    def __repr__(self):
        primal = repr(self._primal)
        if self._level != _current_level:
            return primal
        # The tangent is one more suffix, as dtype= is: on the last line when it fits.
        head, suffix = primal[:-1], f"tangent={self._tangent!r}"
        last_line = len(head) - head.rfind("\n") + 1
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            return f"{head},\n       {suffix})"
        return f"{head}, {suffix})"


def _make(primal, tangent, level):
    t = wrap_as(primal._data, primal.dtype, primal._device, DualTensor)
    t._vc = primal._vc   # (a view of the primal, as PyTorch's dual tensors are)
    t._primal = primal
    t._tangent = tangent
    t._level = level
    if primal._requires_grad:
        # Reverse mode through a dual tensor reaches its primal's graph (or leaf).
        t._requires_grad = True
        t.grad_fn = primal.grad_fn
        t._output_nr = primal._output_nr
        if primal.grad_fn is None:
            t._accumulator = get_accumulator(primal)
    return t


# ---------------------------------------------------------------------- the public API
def enter_dual_level():
    """Open a dual level (only one at a time, as in PyTorch); returns its index."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level += 1
    _state.depth += 1
    return _current_level


def exit_dual_level(*, level=None):
    """Close the dual level: dual tensors made in it lose their tangents."""
    global _current_level
    level = _current_level if level is None else level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _current_level = -1
    _state.depth -= 1


class dual_level:
    """Context manager: the forward-AD region (`with dual_level(): ...`)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor, tangent, *, level=None):
    """`tensor` with `tangent` as its forward gradient for the current dual level."""
    level = _current_level if level is None else level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if tensor.dtype.category < FLOATING:
        raise ValueError("Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if tangent.dtype.category < FLOATING:
        raise ValueError("Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if isinstance(tensor, DualTensor):
        tensor = tensor._primal
    return _make(tensor, tangent, level)


def unpack_dual(tensor, *, level=None):
    """UnpackedDualTensor(primal, tangent); the tangent is None outside its dual level."""
    level = _current_level if level is None else level
    if isinstance(tensor, DualTensor):
        if level != _current_level and level >= 0:
            raise RuntimeError("Invalid level given to _fw_primal")
        tangent = tensor._tangent if tensor._level == level else None
        return UnpackedDualTensor(tensor._primal, tangent)
    return UnpackedDualTensor(tensor, None)


# ---------------------------------------------------------------------- the door's step
def _split(x):
    if x.__class__ is DualTensor:
        if x._level == _current_level:
            return x._primal, x._tangent
        return x._primal, None
    return x, None


def dual_step(op, inputs, params, dtype, arrays):
    """Run `op` on the primals and give its result the tangent of the JVP rule."""
    split = [_split(x) for x in inputs]
    primals = [p for p, _ in split]
    tangents = [t for _, t in split]
    out = registry.dispatch(op, tuple(primals), params, dtype,
                            _batched.recast(op, primals, arrays, inputs))
    if all(t is None for t in tangents):
        return out
    outs = out if type(out) is tuple else (out,)
    rule = _rules.JVP_RULES.get(op.name)
    if rule is not None:
        out_tangents = rule(op, primals, tangents, params, dtype, out)
    else:
        out_tangents = _rules.double_vjp(op, primals, tangents, params, dtype, arrays, inputs)
    if type(out_tangents) is not tuple:
        out_tangents = (out_tangents,)
    duals = tuple(_make(o, t, _current_level) if t is not None and o.dtype.category >= FLOATING
                  else o for o, t in zip(outs, out_tangents))
    return duals if type(out) is tuple else duals[0]


def dual_commit(self, result):
    """In place on a dual tensor: its primal takes the value, the tangent follows."""
    target, _ = _split(self)
    value, tangent = _split(result)
    target.copy_(value)
    if self.__class__ is DualTensor:
        if tangent is None:
            tangent = _creation.zeros_like(target)
        self._tangent = tangent
        return self
    if tangent is not None:
        raise RuntimeError("ember's forward AD does not support writing a dual tensor into a "
                           "tensor without a tangent in place; use an out-of-place op.")
    return self


from ..func import batched_tensor as _batched  # noqa: E402  (also installs the door's step)
from ..func import jvp_rules as _rules  # noqa: E402

_state.dual_type = DualTensor
_state.dual_step = dual_step
_state.dual_commit = dual_commit
