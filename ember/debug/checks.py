"""The checks run at the registry's door for every op while the guard is on."""
import numpy as np

from .._dtype import INTEGER
from .._tensor import Tensor
from ..autograd import graph
from .state import report_pitfall, state, user_frame

_INT_ARITHMETIC = {"add", "sub", "mul", "neg", "pow", "sum", "prod", "cumsum", "cumprod",
                   "abs", "square", "_to_copy", "matmul", "floor_divide"}
_BROADCAST_OPS = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2",
                  "hypot", "xlogy"}


def _example(array, mask):
    idx = np.argwhere(np.asarray(mask))
    if not len(idx):
        return None
    pos = tuple(idx[0])
    return pos, array[pos] if array.ndim else array[()]


def guard_instrument(op, inputs, params, result):
    """Called by the registry after each op (only while the guard is on)."""
    if state.in_check:
        return
    state.in_check = True
    try:
        _check(op, inputs, params, result)
    finally:
        state.in_check = False


def _arrays(inputs):
    return [x._host() if isinstance(x, Tensor) else np.asarray(x) for x in inputs]


def _dtype_names(inputs):
    return ", ".join(x.dtype.name if isinstance(x, Tensor) else
                     type(x).__name__ for x in inputs)


def _check(op, inputs, params, result):
    out = result._host()
    kind = out.dtype.kind
    name = op.name
    backward_of = graph.current_node() if hasattr(graph, "current_node") else None
    if kind in "iu" and name in _INT_ARITHMETIC:
        _check_wraparound(op, inputs, params, out, result)
    elif kind in "fc":
        _check_nonfinite(op, inputs, out, result, backward_of)
    if name == "_to_copy" and kind in "iub":
        _check_lossy_cast(inputs, out, result)
    if name in _BROADCAST_OPS:
        _check_outer_broadcast(op, inputs, result)


def _check_wraparound(op, inputs, params, out, result):
    arrays = _arrays(inputs)
    wide = [a.astype(np.float64) if a.dtype.kind in "iub" else a for a in arrays]
    try:
        kw = {k: v for k, v in params.items() if k not in ("acc", "dtype")}
        if "acc" in params:
            kw["acc"] = np.float64
        exact = np.asarray(op.forward(*wide, **kw), dtype=np.float64)
    except Exception:
        return
    if exact.shape != out.shape:
        return
    bad = exact != out.astype(np.float64)
    if bad.any():
        pos, value = _example(out, bad)
        report_pitfall(
            "wraparound", op.name,
            f"integer wraparound in {op.name}({_dtype_names(inputs)}): the exact result "
            f"{exact[pos]:.0f} does not fit {result.dtype.name} and "
            f"was stored as {value} (use a wider dtype, e.g. .long() or dtype=torch.int64)")


def _finite(array):
    return array.dtype.kind not in "fc" or bool(np.isfinite(array).all())


def _check_nonfinite(op, inputs, out, result, backward_of):
    if np.isfinite(out).all():
        return
    arrays = _arrays(inputs)
    if not all(_finite(a) for a in arrays):
        return  # nan/inf came in: the op that made them was reported already
    nan = np.isnan(out)
    where = None
    context = ""
    if backward_of is not None:
        trace = getattr(backward_of, "guard_origin", None)
        context = f" in the backward of {backward_of.op.node_name}"
        if trace:
            context += f" (forward op {backward_of.op.name} at {trace[0]}:{trace[1]})"
    if nan.any():
        pos, _ = _example(out, nan)
        report_pitfall(
            "nan", op.name,
            f"{op.name}({_dtype_names(inputs)}) produced nan from finite inputs{context} "
            f"(first at index {pos}); e.g. log of 0 after an underflow, 0/0, or sqrt of a "
            "negative number", where)
    else:
        inf = np.isinf(out)
        pos, value = _example(out, inf)
        dtype = result.dtype.name
        report_pitfall(
            "overflow", op.name,
            f"{op.name}({_dtype_names(inputs)}) overflowed to {value} in {dtype} from finite "
            f"inputs{context} (first at index {pos}); the largest {dtype} is "
            f"{np.finfo(out.dtype).max if out.dtype.kind == 'f' else 'n/a'}", where)


def _check_lossy_cast(inputs, out, result):
    source = _arrays(inputs)[0]
    if source.dtype.kind not in "fc":
        return
    lossy = np.trunc(source.real) != source.real if source.dtype.kind == "f" else None
    if lossy is not None and lossy.any():
        pos, value = _example(source, lossy)
        report_pitfall(
            "lossy cast", "_to_copy",
            f"casting {source.dtype} to {result.dtype.name} truncated "
            f"{value} to {out[pos] if out.ndim else out[()]}")


def check_inplace_cast(target, source, value=None):
    """Called where values are written into a tensor (the in-place protocol, copy_,
    __setitem__): float values truncated into an integer tensor."""
    src = source._host() if source is not None else np.asarray(value)
    if src.dtype.kind == "f" and target.dtype.category == INTEGER:
        lossy = np.trunc(src) != src
        if lossy.any():
            pos, value = _example(src, lossy)
            report_pitfall("lossy cast", "copy_",
                           f"writing {src.dtype} values into a "
                           f"{target.dtype.name} tensor truncated "
                           f"{value}")


def _check_outer_broadcast(op, inputs, result):
    shapes = [x._data.shape for x in inputs if isinstance(x, Tensor)]
    if len(shapes) != 2:
        return
    a, b = shapes
    n = result._data.size
    # NOTE: the classic regression bug: prediction (N, 1) against target (N,) gives (N, N).
    if {len(a), len(b)} == {1, 2} and n > max(np.prod(a), np.prod(b)):
        vec, mat = (a, b) if len(a) == 1 else (b, a)
        if mat[1] == 1 and mat[0] == vec[0] and vec[0] > 1:
            report_pitfall(
                "broadcast", op.name,
                f"{op.name} broadcast shapes {list(a)} and {list(b)} to "
                f"{list(result._data.shape)}: an (N, 1) tensor against an (N,) tensor gives "
                "an N x N result; reshape one of them (e.g. target.view(-1, 1) or "
                "pred.squeeze(1))")


# ---------------------------------------------------------------------- gradient accumulation
_ACCUMULATION_HINT = ("gradients add up in .grad until zeroed; call optimizer.zero_grad() "
                      "once per iteration, or declare intended accumulation with "
                      "ember.debug.accumulate(n) or `with ember.debug.accumulating():`")


def _accumulation_declared(count):
    return state.accumulating_depth > 0 or count <= state.declared_accumulation


def on_accumulate(tensor, fresh):
    """AccumulateGrad calls this for each leaf gradient while the guard is on."""
    info = tensor.__dict__
    if fresh:
        info["_guard_count"] = 1
        info["_guard_stepped"] = False
        info["_guard_declared"] = state.accumulating_depth > 0
        return
    count = info.get("_guard_count", 1) + 1
    info["_guard_count"] = count
    if state.accumulating_depth > 0:
        info["_guard_declared"] = True
    stepped = info.get("_guard_stepped", False)
    info["_guard_stepped"] = False
    if not stepped and not _accumulation_declared(count):
        report_pitfall(
            "accumulation", "backward",
            f"backward() added into .grad of a {list(tensor.shape)} parameter that already "
            "held the gradient of an earlier backward(), with no optimizer.step() or "
            f"zero_grad() in between: {_ACCUMULATION_HINT}")


def on_step(params):
    """Optimizer.step calls this with the parameters it updates while the guard is on."""
    worst = 0
    for p in params:
        info = p.__dict__
        if not info.get("_guard_declared", False):
            worst = max(worst, info.get("_guard_count", 0))
        info["_guard_stepped"] = True
    if worst > 1 and not _accumulation_declared(worst):
        report_pitfall(
            "accumulation", "step",
            f"optimizer.step() used gradients accumulated over {worst} backward() calls since "
            f"the last zero_grad(): {_ACCUMULATION_HINT}")


def on_zero_grad(params):
    for p in params:
        p.__dict__["_guard_count"] = 0
        p.__dict__["_guard_declared"] = False


def on_record(node):
    """Remember the user's line that made a graph node (names forward ops in backward)."""
    node.guard_origin = user_frame()


guard_instrument.on_record = on_record
