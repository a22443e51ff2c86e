"""PyTorch-identical `repr`/`str` of tensors, and `set_printoptions`.

The algorithm is PyTorch's: pick the elements that will be shown (all of them, or the
`edgeitems` at each end of every long dimension once the tensor has more than `threshold`
elements), let one formatter look at the shown floats to decide between integer style
(`1.`), fixed point and scientific notation and the common column width, then lay the
strings out in nested brackets wrapped at `linewidth`, and append the suffixes
(`device=`, `size=`, `dtype=`, `grad_fn=`/`requires_grad=`).

NOTE: every decision is made on exact float64 copies of the values (float16, bfloat16 and
float32 convert exactly), and strings come from Python's own float formatting, as in
PyTorch, so the digits agree to the last character.
"""
import contextlib
import math

import numpy as np

from . import _dtype as dt
from . import backends
from .backends import array_module

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr"]


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print (`profile` is 'default', 'short' or 'full'; the other
    arguments override it). `sci_mode=None` lets the formatter choose."""
    opts = PRINT_OPTS
    if profile in _PROFILES:
        opts.precision, opts.threshold, opts.edgeitems, opts.linewidth = _PROFILES[profile]
    if precision is not None:
        opts.precision = precision
    if threshold is not None:
        opts.threshold = threshold
    if edgeitems is not None:
        opts.edgeitems = edgeitems
    if linewidth is not None:
        opts.linewidth = linewidth
    # NOTE: as in PyTorch, every call resets sci_mode (None unless given).
    opts.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as keyword arguments for `set_printoptions`."""
    return {name: getattr(PRINT_OPTS, name) for name in _PrintOptions.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (same arguments as `set_printoptions`)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------- the whole repr
def tensor_repr(tensor, prefix=None, *, tensor_contents=None):
    """`repr(tensor)`. `prefix` replaces the opening `tensor(` (its length sets the
    indentation of wrapped lines); nn.Parameter prints
    `"Parameter containing:\\n" + tensor_repr(p, "tensor(")`."""
    from ._tensor import Tensor  # (cycle: _tensor imports this module)
    if prefix is None:
        prefix = "tensor(" if type(tensor) is Tensor else f"{type(tensor).__name__}("
    indent = len(prefix)
    opts = PRINT_OPTS
    data = tensor._data
    dtype = tensor.dtype
    default = dt.get_default_dtype()
    suffixes = []
    if tensor._device.type != "cpu":
        suffixes.append(f"device='{tensor._device}'")
    if data.size == 0:
        # NOTE: nothing to show means nothing to tell int64 or bool from the default float,
        # so any dtype but the default one is named; the shape too unless it is (0,).
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not opts.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype not in (default, dt.default_complex(), dt.int64, dt.bool):
            suffixes.append(f"dtype={dtype!r}")
        body = None if tensor_contents is not None else _tensor_str(tensor, indent)
    if tensor_contents is not None:
        body = tensor_contents
    node = tensor.grad_fn
    if node is not None:
        name = node.name() if hasattr(node, "name") else type(node).__name__
        suffixes.append(f"grad_fn=<{name.rpartition('::')[2]}>")   # (the type's name, not C++'s)
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, opts.linewidth)


def _add_suffixes(text, suffixes, indent, linewidth):
    parts = [text]
    # NOTE: PyTorch's measure of the last line: it counts two more than the line holds when
    # the text has no newline and one more otherwise; kept so wrapping matches exactly.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# ---------------------------------------------------------------------- the values
def _tensor_str(tensor, indent):
    opts = PRINT_OPTS
    data = tensor._data
    ndim = data.ndim
    summarize = data.size > opts.threshold
    edge = opts.edgeitems
    if summarize and not edge and ndim:
        return "[...]"
    cut = tuple(summarize and n > 2 * edge for n in data.shape)
    for axis, is_cut in enumerate(cut):
        if is_cut:
            data = _ends(data, axis, edge)
    host = tensor._host() if data is tensor._data else backends.to_host(tensor._device, data)
    if tensor.dtype is dt.bfloat16:
        host = host.astype(np.float32)
    flat = host.reshape(-1)
    category = tensor.dtype.category
    if category == dt.COMPLEX:
        real, real_width = _float_strings(flat.real)
        imag, imag_width = _float_strings(flat.imag)
        strings = [_join_complex(r, i) for r, i in zip(real, imag)]
        element_len = real_width + imag_width + 3
    else:
        if category == dt.FLOATING:
            strings, width = _float_strings(flat)
        else:
            strings = [str(v) for v in flat.tolist()]
            width = max(map(len, strings))
            strings = [s.rjust(width) for s in strings]
        element_len = width + 2
    if ndim == 0:
        return strings[0]
    return _nest(strings, host.shape, cut, indent, element_len, edge, opts.linewidth)


def _ends(data, axis, edge):
    """The first and last `edge` entries of `data` along `axis` (what a summary shows)."""
    head = (slice(None),) * axis
    n = data.shape[axis]
    return array_module(data).concatenate(
        (data[head + (slice(0, edge),)], data[head + (slice(n - edge, n),)]), axis=axis)


def _float_strings(values):
    """Each value of the flat float array `values` as PyTorch prints it, padded to a common
    width, and that width. The style and width come from the nonzero finite values only."""
    precision = PRINT_OPTS.precision
    values = values.astype(np.float64, copy=False)
    shown = np.isfinite(values) & (values != 0)
    items = values.tolist()  # NOTE: one Python format per printed element is unavoidable
    if not shown.any():
        # PyTorch's formatter gives up: integer style, width 1 (`tensor([0., nan])`).
        return [_int_style(v) for v in items], 1
    finite = values[shown]
    magnitude = np.abs(finite)
    lo, hi = float(magnitude.min()), float(magnitude.max())
    sci_mode = PRINT_OPTS.sci_mode
    if sci_mode is None:
        sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
    if sci_mode:
        fmt = f"{{:.{precision}e}}".format
        strings = [fmt(v) for v in items]
    elif bool((np.ceil(finite) == finite).all()):
        strings = [_int_style(v) for v in items]
    else:
        fmt = f"{{:.{precision}f}}".format
        strings = [fmt(v) for v in items]
    width = max(len(s) for s, keep in zip(strings, shown.tolist()) if keep)
    return [s.rjust(width) for s in strings], width


def _int_style(value):
    # Integer-valued floats print as `3.`; the point marks the float (not after inf/nan).
    text = f"{value:.0f}"
    return text + "." if text[-1].isdigit() else text


def _join_complex(real, imag):
    imag = (imag + "j").lstrip()
    # NOTE: a sign already separates the parts (also for -0.0); otherwise add a '+'.
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _nest(strings, shape, cut, indent, element_len, edge, linewidth):
    """Lay the flat, row-major `strings` of a summarised array of `shape` out in brackets;
    `cut[d]` says dimension d lost its middle, shown as `...`."""
    ndim = len(shape)
    steps = [1] * ndim
    for d in range(ndim - 2, -1, -1):
        steps[d] = steps[d + 1] * shape[d + 1]

    def build(offset, depth):
        pad = indent + depth
        if depth == ndim - 1:
            row = strings[offset:offset + shape[-1]]
            if cut[depth]:
                row = row[:edge] + [" ..."] + row[edge:]
            per_line = max(1, math.floor((linewidth - pad) / element_len))
            lines = [", ".join(row[i:i + per_line]) for i in range(0, len(row), per_line)]
            return "[" + (",\n" + " " * (pad + 1)).join(lines) + "]"
        parts = [build(offset + i * steps[depth], depth + 1) for i in range(shape[depth])]
        if cut[depth]:
            parts = parts[:edge] + ["..."] + parts[edge:]
        sep = "," + "\n" * (ndim - depth - 1) + " " * (pad + 1)
        return "[" + sep.join(parts) + "]"

    return build(0, 0)
