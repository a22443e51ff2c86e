"""torch.cond and torch.while_loop, the higher-order control-flow operators, with their eager
semantics: ember has no graph capture, so the predicate is read and the chosen Python branch
runs (autograd records the branch's ops as usual)."""
from ._scalars import type_name
from ._tensor import Tensor

__all__ = ["cond", "while_loop", "fork", "wait"]


def _truth(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError("Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")


def cond(pred, true_fn, false_fn, operands=()):
    """`true_fn(*operands)` if `pred` else `false_fn(*operands)`."""
    branch = true_fn if _truth(pred) else false_fn
    return branch(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs `carried_inputs = body_fn(*carried_inputs)` while `cond_fn(*carried_inputs)`;
    returns the final carried values as a tuple."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("carried_inputs must be a tuple or list, got "
                           f"{type_name(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried


def fork(func, *args, **kwargs):
    """torch.fork (torch.jit.fork): runs `func` now; `wait` returns its result."""
    from .jit import fork as jit_fork  # (lazy: `import ember` leaves ember.jit unloaded)
    return jit_fork(func, *args, **kwargs)


def wait(future):
    return future.wait()
