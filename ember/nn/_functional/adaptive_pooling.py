"""Adaptive average and max pooling (1d/2d/3d): windows that split the input evenly into
the requested output size."""
import numpy as np

from ... import _dtype as dt
from ..._creation import tensor, zeros
from ...ops.select import where
from ..._signatures import Parser
from ...ops.pooling import adaptive_bounds, adaptive_max_pool_nd
from ._pool_args import FLOATS, int_list, refuse_none
from .dispatch_helpers import boolean_dispatch

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


# NOTE: as in torch, adaptive_{avg,max}_pool{2,3}d are Python functions that fill None
# entries of output_size from the input's sizes before the C builtin's parser sees it (so a
# non-sized output_size fails in len(), and a short input with ValueError); the 1d forms are
# the builtins, which pool as 2-D over a unit height.
_ADAPTIVE_PARSERS = {
    (kind, nd): Parser(f"adaptive_{kind}_pool{nd}d",
                       ("Tensor input, int or tuple of ints output_size",))
    for kind in ("avg", "max") for nd in (1, 2, 3)}


def _list_with_default(output_size, input):
    """output_size with its None entries taken from the input's trailing sizes."""
    defaults = input.size()
    if isinstance(output_size, int):
        return output_size
    if len(defaults) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return [d if v is None else v for v, d in zip(output_size, defaults[-len(output_size):])]


def _adaptive_1d(input, output_size, kind):
    """The 1d builtins' checks: the rank, then one int."""
    name = f"adaptive_{kind}_pool1d"
    _ADAPTIVE_PARSERS[kind, 1].check((input, output_size), {})
    refuse_none(name, output_size=output_size)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")
    out = int_list(output_size, 1)
    if len(out) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(out)})")
    if kind == "max":
        _non_batch_check(input, 1, name)
    return (1,) + out


def _non_batch_check(input, nd, name):
    """Max pooling refuses any empty dim but the first; average pooling only empty spatial
    dims."""
    shape = list(input.shape)
    first = input.dim() - nd if "avg" in name else 1
    for i in range(first, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape} with dimension {i} "
                               "being empty")


def _dtype_check(input, nd, name):
    if input.dtype not in FLOATS:
        kernel = name + ("_cpu" if nd == 3 else "")
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dt.type_name(input.dtype)}'")


def _adaptive_avg(input, output_size, nd):
    """The builtin adaptive_avg_pool{nd}d on an output_size the parser accepted: torch's
    checks in its order (a 1x1 output is a mean, before the rank and dtype checks)."""
    name = f"adaptive_avg_pool{nd}d"
    out = int_list(output_size, nd)
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if all(o == 1 for o in out):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    if any(o < 0 for o in out):
        got = ", ".join(map(str, out[:2])) + "".join(f",{o}" for o in out[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{got}}}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    _non_batch_check(input, nd, name)
    spatial = tuple(input.shape[-nd:])
    lead = tuple(input.shape[:-nd])
    empty = 0 in lead + out   # (then the 2-d kernel never runs; the 3-d one checks the dtype)
    if not empty or nd == 3:
        _dtype_check(input, nd, name)
    if empty:
        return zeros(lead + out, dtype=input.dtype, device=input.device)
    if all(n % o == 0 for n, o in zip(spatial, out)):
        # Equal windows: a reshape and one mean (global pooling is the common case).
        shape = lead
        for n, o in zip(spatial, out):
            shape += (o, n // o)
        dims = tuple(len(lead) + 2 * d + 1 for d in range(nd))
        return input.reshape(shape).mean(dims)
    # Windows of different sizes: the average is separable, one dim at a time: each window's
    # elements gathered (padded to the longest window by repeating its last), summed without
    # the padding (selected away, not multiplied by 0: an inf stays in its own windows only),
    # divided by its length.
    x = input
    for d, (n, o) in enumerate(zip(spatial, out)):
        start, end = adaptive_bounds(n, o)
        k = int((end - start).max())
        pos = start[:, None] + np.arange(k)
        axis = len(lead) + d
        picked = x.index_select(axis, tensor(np.minimum(pos, end[:, None] - 1).reshape(-1),
                                             device=input.device))
        picked = picked.unflatten(axis, (o, k))
        shape = [1] * picked.dim()
        shape[axis:axis + 2] = [o, k]
        keep = tensor(pos < end[:, None], device=input.device).reshape(shape)
        total = where(keep, picked, zeros((), dtype=x.dtype, device=input.device)).sum(axis + 1)
        shape.pop(axis + 1)
        x = total / tensor((end - start).astype(input.dtype.np),
                           device=input.device).reshape(shape)
    return x


def adaptive_avg_pool1d(input, output_size):
    out = _adaptive_1d(input, output_size, "avg")
    return _adaptive_avg(input.unsqueeze(-2), out, 2).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    output_size = _list_with_default(output_size, input)
    _ADAPTIVE_PARSERS["avg", 2].check((input, output_size), {})
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    output_size = _list_with_default(output_size, input)
    _ADAPTIVE_PARSERS["avg", 3].check((input, output_size), {})
    return _adaptive_avg(input, output_size, 3)


def _adaptive_max(input, output_size, nd):
    """The builtin adaptive_max_pool{nd}d: (values, indices), torch's checks in its order."""
    name = f"adaptive_max_pool{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    out = int_list(output_size, nd)
    if len(out) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    _non_batch_check(input, nd, name)
    lead = tuple(input.shape[:-nd])
    bad = next((o for o in out if o < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{list(lead + out)}")
    _dtype_check(input, nd, name)
    if 0 in lead + out:
        return (zeros(lead + out, dtype=input.dtype, device=input.device),
                zeros(lead + out, dtype=dt.int64, device=input.device))
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    values, indices = adaptive_max_pool_nd(x, out)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    out = _adaptive_1d(input, output_size, "max")
    values, indices = _adaptive_max(input.unsqueeze(-2), out, 2)
    return values.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    output_size = _list_with_default(output_size, input)
    _ADAPTIVE_PARSERS["max", 2].check((input, output_size), {})
    return _adaptive_max(input, output_size, 2)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    output_size = _list_with_default(output_size, input)
    _ADAPTIVE_PARSERS["max", 3].check((input, output_size), {})
    return _adaptive_max(input, output_size, 3)


def _adaptive_max_pool1d(input, output_size, return_indices=False):
    return adaptive_max_pool1d_with_indices(input, output_size)[0]


def _adaptive_max_pool2d(input, output_size, return_indices=False):
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


def _adaptive_max_pool3d(input, output_size, return_indices=False):
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


adaptive_max_pool1d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool1d_with_indices, _adaptive_max_pool1d,
                                       __name__, "adaptive_max_pool1d")
adaptive_max_pool2d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool2d_with_indices, _adaptive_max_pool2d,
                                       __name__, "adaptive_max_pool2d")
adaptive_max_pool3d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool3d_with_indices, _adaptive_max_pool3d,
                                       __name__, "adaptive_max_pool3d")
