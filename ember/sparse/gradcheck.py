"""torch.sparse.as_sparse_gradcheck: gradcheck for functions of sparse tensors. Each sparse
input that requires grad is replaced by its (coalesced) values, which gradcheck perturbs one
by one, and rebuilt on the same coordinates inside the checked function; sparse outputs are
compared densified. So the check is on the specified entries (PyTorch's masked semantics)."""
from .. import _constants
from .._tensor import Tensor
from ..autograd import Function
from .coo import make_coo
from .csr import make_csr

__all__ = ["as_sparse_gradcheck"]


def _as_dense(out):
    if isinstance(out, Tensor) and out.layout is not _constants.strided:
        return out.to_dense()
    return out


def _densify(x):
    """x itself, whose incoming gradient is made dense (an identity in the graph)."""

    class DenseGradient(Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, g):
            return _as_dense(g)

    return DenseGradient.apply(x)


def as_sparse_gradcheck(gradcheck):
    """Wrap `gradcheck` (ember.autograd.gradcheck or gradgradcheck) to accept sparse inputs
    and outputs."""
    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        kwargs.pop("masked", None)   # (always the specified entries: see the module)
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        flat, rebuilders = [], []
        for x in inputs:
            if isinstance(x, Tensor) and x.requires_grad and x.layout is _constants.sparse_coo:
                c = x.detach().coalesce()
                flat.append(c._values().clone().requires_grad_(True))
                rebuilders.append(lambda v, c=c: make_coo(c._indices(), v, c.shape, True,
                                                          values_grad=True))
            elif isinstance(x, Tensor) and x.requires_grad and \
                    x.layout is _constants.sparse_csr:
                flat.append(x.values().detach().clone().requires_grad_(True))
                rebuilders.append(lambda v, x=x: make_csr(x.crow_indices(), x.col_indices(), v,
                                                          x.shape, values_grad=True))
            else:
                flat.append(x)
                rebuilders.append(None)

        def on_values(*args):
            # NOTE: a dense input goes through _densify so that a sparse gradient bound for
            # it (s * d gives d one) reaches gradcheck dense, as gradcheck compares arrays.
            rebuilt = [(_densify(a) if isinstance(a, Tensor) and a.requires_grad else a)
                       if r is None else r(a) for a, r in zip(args, rebuilders)]
            out = func(*rebuilt)
            if isinstance(out, (tuple, list)):
                return type(out)(_as_dense(o) for o in out)
            return _as_dense(out)

        return gradcheck(on_values, tuple(flat), **kwargs)
    gradcheck_with_sparse_support.__name__ = getattr(gradcheck, "__name__", "gradcheck")
    return gradcheck_with_sparse_support
