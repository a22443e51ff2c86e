"""PyTorch's repr of sparse tensors: each component tensor's body after its name, then
size, nnz, dtype, layout and the autograd suffix, wrapped at the print width."""
from .. import _dtype as dt
from .._printing import PRINT_OPTS, _tensor_str

__all__ = ["sparse_repr"]


def _component(name, t, indent):
    prefix = f"{name}=tensor("
    if t._data.size == 0:
        body = f"[], size={tuple(t._data.shape)}"
    else:
        body = _tensor_str(t, indent + len(prefix))
    return prefix + body + ")"


def sparse_repr(t, components, force_newline):
    """`components`: (name, tensor) pairs; COO forces its first suffix onto a new line."""
    prefix = "tensor("
    indent = len(prefix)
    text = prefix + (",\n" + " " * indent).join(
        _component(name, c, indent) for name, c in components)
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype not in (dt.get_default_dtype(), dt.default_complex(), dt.int64, dt.bool):
        suffixes.append(f"dtype={t.dtype!r}")
    suffixes.append(f"layout={t.layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rpartition('::')[2]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    parts = [text]
    # (PyTorch's measure of the last line, kept so that wrapping matches exactly)
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
