"""Shared pieces of the sparse tests (test_sparse*.py): the sample tensors and comparisons of
ember's results with torch's (layout, shape, dtype, coordinates, values)."""
import warnings

import numpy as np
import pytest

import ember


@pytest.fixture(autouse=True)
def quiet_sparse_warnings():
    """torch warns that sparse support is beta and that invariant checks are off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]          # (0, 2) appears twice: uncoalesced


V = [3.0, 4.0, 5.0, 1.0, -2.0]


D = np.arange(12.0).reshape(3, 4).T.copy() - 4   # (4, 3): the dense factor of s @ D


def _np(t):
    return t.detach().numpy()


def assert_same(e, t):
    """Same layout, shape, dtype and numbers; for sparse results the same coordinates too."""
    assert str(e.layout).split(".")[-1] == str(t.layout).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if t.is_sparse:
        assert e.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(_np(e._indices()), _np(t._indices()))
        np.testing.assert_allclose(_np(e._values()), _np(t._values()), rtol=1e-6, atol=1e-6)
    elif str(t.layout).endswith("sparse_csr"):
        np.testing.assert_array_equal(_np(e.crow_indices()), _np(t.crow_indices()))
        np.testing.assert_array_equal(_np(e.col_indices()), _np(t.col_indices()))
        np.testing.assert_allclose(_np(e.values()), _np(t.values()), rtol=1e-6)
    else:
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6, atol=1e-6)


def assert_same_grad(e, t):
    """Gradients: same layout; sparse ones compared coalesced (PyTorch's order of entries)."""
    assert (e is None) == (t is None)
    if t is None:
        return
    if t.is_sparse:
        assert e.is_sparse
        assert_same(e.coalesce(), t.coalesce())
    else:
        assert_same(e, t)


def repr_of(t):
    return repr(t).replace("ember", "torch")


def both(lib_fn, torch):
    return lib_fn(ember), lib_fn(torch)


def coo(lib, dtype=None, requires_grad=False, size=(3, 4)):
    return lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(V, dtype=dtype), size,
                                 requires_grad=requires_grad)


def _dense(L):
    return L.tensor(np.arange(12.0).reshape(3, 4) - 5)


HYBRID_I = [[0, 2, 0, 1], [1, 1, 1, 0]]


HYBRID_V = np.arange(8.0).reshape(4, 2) - 3


def hybrid(lib, requires_grad=False):
    return lib.sparse_coo_tensor(lib.tensor(HYBRID_I), lib.tensor(HYBRID_V), (3, 2, 2),
                                 requires_grad=requires_grad)


def csr(lib):
    return lib.tensor([[0., 1.5, 0., 2.], [0., 0., 0., 0.], [3., 0., -1., 0.]]).to_sparse_csr()
