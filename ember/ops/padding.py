"""Padding: F.pad's constant (any number of dims, negative entries crop), reflect, replicate
and circular (one to three trailing dims) modes, and nn.Conv's padding modes (`pad_nd`).
The non-constant modes are one index gather per padded dim over a precomputed source-index
vector, so gradients (scatter-add) and double backward come free."""
import numpy as np

from .. import _creation
from .index_ops import _index_select
from .nn_resample import constant_pad_nd
from .registry import dispatch, name_node

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")
_DIM_NAMES = ("W", "H", "D")
_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """Pad `input`'s trailing dims by `pad` = (left_last, right_last, left_prev, ...)."""
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.dim()
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    shape = tuple(input.shape)
    if mode != "circular" and any(s == 0 for s in shape[nd - k - 1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    out = input
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        idx = _source_index(mode, shape[d], lo, hi, i, d, shape)
        out = dispatch(_index_select, (out,), {"index": idx, "dim": d})
    if mode == "circular":   # (PyTorch's circular pad is a composite of copies)
        return out
    kind = "Reflection" if mode == "reflect" else "Replication"
    return name_node(out, f"{kind}Pad{k}DBackward0")


def _source_index(mode, n, lo, hi, i, d, shape):
    """Source position of every output position along one dim."""
    if mode == "circular":
        if lo > n or hi > n or n == 0:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        start = max(-lo, 0)
        m = n - start - max(-hi, 0)
        if m <= 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # NOTE: negative pads crop first; the wrap-around then runs over the cropped span.
        j = np.arange(m + max(lo, 0) + max(hi, 0))
        return start + (j - max(lo, 0)) % m
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                           "corresponding input dimension, but got: padding "
                           f"({lo}, {hi}) at dimension {d} of input {list(shape)}")
    size = n + lo + hi
    if size < 1:
        raise RuntimeError(f"input ({_DIM_NAMES[i]}: {n}) is too small. Calculated output "
                           f"{_DIM_NAMES[i]}: {size}")
    # Positions in the unpadded input's coordinates, mapped back inside it.
    v = np.arange(size) - lo
    if mode == "replicate":
        return np.clip(v, 0, n - 1)
    v = np.abs(v)
    return np.where(v > n - 1, 2 * (n - 1) - v, v)


def pad_nd(input, pads, mode):
    """nn.Conv's padding_mode: pad the last len(pads) dims by ((lo, hi), ...) with mode
    reflect, replicate or circular, one index_select per dim."""
    nd = len(pads)
    # NOTE: last dim first, as F.pad checks (and names) them.
    for i in range(nd - 1, -1, -1):
        lo, hi = pads[i]
        axis = input.dim() - nd + i
        size = input.shape[axis]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{axis} of input {list(input.shape)}")
        if not (lo or hi):
            continue
        idx = np.pad(np.arange(size), (lo, hi), mode=_NP_MODES[mode])
        input = input.index_select(axis, _creation.tensor(idx, device=input.device))
    return input
