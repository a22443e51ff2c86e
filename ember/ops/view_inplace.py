"""Autograd for in-place ops through views (PyTorch's CopySlices and view regeneration).

`y[1:].mul_(2)` writes into y's memory: y's graph must learn that part of it changed, and the
view's own grad_fn must then read from the new y. Both are expressed with the view's
positions in its root tensor (C-order flat indices, computed from the strides), so one pair of
ops serves every view however it was made (slices, transposes, diagonals, view chains):
`as_strided` (AsStridedBackward0) reads those positions, `copy_view_slices` (CopySlices)
writes them. A view made before its root changed is regenerated the same way the next time it
feeds an op (the engine compares the shared version counter with the one its node recorded).
"""
from .._inplace import bump_version
from .._tensor import _wrap
from ..autograd.grad_mode import state
from ..backends import array_module, numpy_backend
from .registry import METHODS, PUBLIC, _record, check_tensor, defop, dispatch

_UNSUPPORTED = ("in-place operation on a view of a tensor that requires grad is not "
                "supported by ember's autograd when the base's memory is not dense; use an "
                "out-of-place op instead")


def _address(a):
    return a.__array_interface__["data"][0] if hasattr(a, "__array_interface__") else \
        a.data.ptr


def _dense(a):
    """True when `a` covers its memory block exactly (C, F or any permuted order)."""
    expect = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expect:
            return False
        expect *= n
    return True


def is_part_view(root, view):
    """Is `view` a real-typed view into a complex root (.real, .imag, view_as_real)? Its
    positions then index the root's (real, imag) pairs, flattened in C order."""
    return view.dtype != root.dtype


def _parts(a):
    """A complex array as real (..., 2) [real, imag] pairs sharing its memory."""
    xp = array_module(a)
    return xp.lib.stride_tricks.as_strided(a.real, a.shape + (2,), a.strides + (a.itemsize // 2,))


def _flat(a, parts):
    """`a` flattened in C order (as pairs of real numbers with `parts`); a view when `a` is
    C-contiguous, which the writes below rely on."""
    return (_parts(a) if parts else a).reshape(-1)


def flat_positions(root, view):
    """The C-order flat index into `root` (into its real pairs for a part view) of each
    element of `view` (an array aliasing root's memory), or None when root's layout does
    not allow it."""
    xp = array_module(root)
    if view.size == 0:
        return xp.zeros(view.shape, dtype=xp.int64)
    if is_part_view(root, view):
        if root.dtype.kind != "c" or view.itemsize * 2 != root.itemsize:
            return None
        root = _parts(root)
    if not _dense(root):
        return None
    item = root.itemsize
    mem = xp.empty(max(root.size, 1), dtype=xp.int64)
    # `lin` lays the int64 buffer out as root is laid out: lin[i] = C position of i
    lin = xp.lib.stride_tricks.as_strided(mem, root.shape, [s // item * 8 for s in
                                                            root.strides])
    lin[...] = xp.arange(root.size).reshape(root.shape)
    offset = (_address(view) - _address(root)) // item
    strides = [s // item * 8 for s in view.strides]
    return xp.lib.stride_tricks.as_strided(mem[offset:], view.shape, strides).copy()


# NOTE: these three move elements (or, with `parts`, real and imaginary parts) between
# places, so their VJPs are PyTorch's complex gradients as written (conj_ready).
@defop("as_strided", node="AsStridedBackward0", save=(), conj_ready=True)
def _gather(a, idx, shape, parts=False):
    return _flat(array_module(a).ascontiguousarray(a), parts)[idx]


@_gather.defvjp
def _gather_vjp(ctx, g):
    p = ctx.params
    return dispatch(_scatter, (g,), {"idx": p["idx"], "shape": ctx.in_meta[0][0],
                                     "parts": p.get("parts", False)}, ctx.in_meta[1][0])


@defop("as_strided_scatter", node="AsStridedScatterBackward0", save=(), conj_ready=True)
def _scatter(g, idx, shape, parts=False):
    xp = array_module(g)
    out = xp.zeros(shape, dtype=xp.result_type(g.dtype, xp.complex64) if parts else g.dtype)
    numpy_backend.scatter_add(_flat(out, parts), idx, g)
    return out


@_scatter.defvjp
def _scatter_vjp(ctx, g):
    p = ctx.params
    return dispatch(_gather, (g,), {"idx": p["idx"], "shape": None,
                                    "parts": p.get("parts", False)})


@defop("copy_view_slices", node="CopySlices", save=(), conj_ready=True)
def _copy_view(base, value, idx, shape, parts=False):
    out = base.copy()
    _flat(out, parts)[idx] = value
    return out


@_copy_view.defvjp
def _copy_view_vjp(ctx, g):
    p = ctx.params
    g_base = dispatch(_copy_view, (g, 0), p) if ctx.edges[0] is not None else None
    g_value = dispatch(_gather, (g,), p, ctx.in_meta[1][1]) \
        if ctx.edges[1] is not None else None
    return g_base, g_value


def _view_node(view, root, idx):
    """Give `view` a grad_fn that reads its elements from `root`'s current graph."""
    node = _record(_gather, (root,), {"idx": idx, "shape": None,
                                      "parts": is_part_view(root._data, view._data)},
                   (view,), view._device)
    node.view_version = view._vc.v
    return node


def rebase_view(view, result):
    """`view` (sharing memory with its root) was just overwritten with `result`: the root's
    graph becomes CopySlices(old root, result) and the view reads from the new root."""
    root = view._base
    idx = flat_positions(root._data, view._data)
    if idx is None:
        raise RuntimeError(_UNSUPPORTED)
    old = _wrap(root._data, root.dtype, root._device)  # the old root's place in the graph
    old._requires_grad = root._requires_grad
    old.grad_fn = root.grad_fn
    old._output_nr = root._output_nr
    old._accumulator = root._accumulator
    _record(_copy_view, (old, result), {"idx": idx, "shape": root._data.shape,
                                        "parts": is_part_view(root._data, view._data)},
            (root,), root._device)
    _view_node(view, root, idx)


def refresh_view(view):
    """The grad_fn of a view whose root changed in place since the view was made."""
    root = view._base
    if root._requires_grad:
        idx = flat_positions(root._data, view._data)
        if idx is not None:
            return _view_node(view, root, idx)
    return view.grad_fn


# ---------------------------------------------------------------------- in-place view ops
def _inplace_view(name, node, nodes=None):
    """`x.t_()`, `x.squeeze_()`...: x itself takes the view's shape and strides (same memory);
    its grad_fn becomes the view op's node under PyTorch's in-place overload name."""
    def method(self, *args, **kwargs):
        if self._requires_grad and self.grad_fn is None and state.enabled:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        out = METHODS[name](self, *args, **kwargs)
        if out is self:
            return self
        self._data = out._data
        bump_version(self)
        fn = out.grad_fn
        if fn is not None:
            fn.op = fn.op.renamed(node if nodes is None else nodes(*args, **kwargs))
            fn.view_version = self._vc.v
            self.grad_fn = fn
            self._output_nr = out._output_nr
        return self
    method.__name__ = name + "_"
    return method


def _squeeze_node(dim=None):
    return ("SqueezeBackward3" if dim is None else
            "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4")


METHODS["squeeze_"] = _inplace_view("squeeze", None, _squeeze_node)
METHODS["unsqueeze_"] = _inplace_view("unsqueeze", "UnsqueezeBackward1")
METHODS["t_"] = _inplace_view("t", "TBackward1")
for _name in ("transpose", "swapaxes", "swapdims"):
    METHODS[_name + "_"] = _inplace_view(_name, "TransposeBackward1")


def detach(input):
    check_tensor("detach", input)
    return input.detach()


PUBLIC["detach"] = detach
