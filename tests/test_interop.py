"""NumPy interop against real PyTorch: shared memory both ways, copies where PyTorch copies,
errors (requires grad, negative strides, bfloat16), Python scalar conversions."""
import warnings

import numpy as np
import pytest

import ember


def outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            return type(exc).__name__, str(exc).replace("ember", "torch")
    return r


def same_outcome(make, torch):
    e, t = outcome(lambda: make(ember)), outcome(lambda: make(torch))
    if isinstance(t, np.ndarray):
        assert isinstance(e, np.ndarray) and e.dtype == t.dtype
        np.testing.assert_array_equal(e, t)
    else:
        assert e == t and type(e) is type(t)


def test_numpy_shares_memory():
    t = ember.tensor([1.0, 2.0, 3.0])
    a = t.numpy()
    a[0] = 10.0
    assert t.tolist() == [10.0, 2.0, 3.0]
    assert isinstance(a, np.ndarray) and a.dtype == np.float32


def test_from_numpy_shares_memory(torch_mod):
    for dtype in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                  np.uint8, np.bool_, np.complex64, np.complex128):
        a = np.zeros((2, 3), dtype=dtype)
        t = ember.from_numpy(a)
        assert str(t.dtype).replace("ember", "torch") == \
            str(torch_mod.from_numpy(a).dtype)
        a[0, 1] = 1
        assert t.tolist() == a.tolist()
    a = np.arange(4.0)
    t = ember.from_numpy(a)
    t.numpy()[1] = 7.0
    assert a[1] == 7.0


def test_unsupported_numpy_dtype(torch_mod):
    # NOTE: PyTorch's message also lists uint16/32/64, which ember does not support.
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
        ember.from_numpy(np.array([1], dtype=object))
    with pytest.raises(TypeError):
        torch_mod.from_numpy(np.array([1], dtype=object))


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(3.0)
    for t in (ember.as_tensor(a), ember.asarray(a)):
        a[0] = 5.0
        assert t.tolist()[0] == 5.0
    b = np.arange(3.0)
    copied = ember.as_tensor(b, dtype=ember.float32)
    b[0] = 9.0
    assert copied.tolist()[0] == 0.0
    src = ember.tensor([1.0, 2.0])
    assert ember.as_tensor(src) is src
    assert ember.asarray(src, copy=True).numpy() is not src.numpy()


def test_np_asarray_of_tensor_shares_memory():
    t = ember.tensor([1.0, 2.0])
    a = np.asarray(t)
    a[0] = 4.0
    assert t.tolist() == [4.0, 2.0]
    assert np.array(t, dtype=np.float64).dtype == np.float64
    c = np.array(t)
    c[1] = 0.0
    assert t.tolist() == [4.0, 2.0]


CASES = {
    "numpy requires grad": lambda m: m.tensor([1.0], requires_grad=True).numpy(),
    "asarray requires grad": lambda m: np.asarray(m.tensor([1.0], requires_grad=True)),
    "numpy force": lambda m: m.tensor([1.0], requires_grad=True).numpy(force=True),
    "numpy bfloat16": lambda m: m.tensor([1.0], dtype=m.bfloat16).numpy(),
    "numpy bfloat16 force": lambda m: m.tensor([1.0], dtype=m.bfloat16).numpy(force=True),
    "numpy 0-dim": lambda m: m.tensor(2.5).numpy(),
    "from_numpy negative strides": lambda m: m.from_numpy(np.arange(3)[::-1]),
    "as_tensor negative strides": lambda m: m.as_tensor(np.arange(3)[::-1]),
    "from_numpy list": lambda m: m.from_numpy([1, 2]),
    "item": lambda m: m.tensor(1.5).item(),
    "item one element": lambda m: m.tensor([[1.5]]).item(),
    "item many": lambda m: m.tensor([1.5, 2]).item(),
    "item bool": lambda m: m.tensor(True).item(),
    "item uint8": lambda m: m.tensor(3, dtype=m.uint8).item(),
    "item bfloat16": lambda m: m.tensor(1.1, dtype=m.bfloat16).item(),
    "item complex": lambda m: m.tensor(1j).item(),
    "tolist": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist(),
    "tolist 0-dim": lambda m: m.tensor(2.5).tolist(),
    "tolist bfloat16": lambda m: m.tensor([1.1], dtype=m.bfloat16).tolist(),
    "tolist float16": lambda m: m.tensor([1.1], dtype=m.float16).tolist(),
    "float": lambda m: float(m.tensor([2.5])),
    "float many": lambda m: float(m.tensor([2.5, 1])),
    "float empty": lambda m: float(m.tensor([])),
    "float complex": lambda m: float(m.tensor(1j)),
    "int": lambda m: int(m.tensor(2.7)),
    "int negative": lambda m: int(m.tensor(-2.7)),
    "int many": lambda m: int(m.tensor([2, 3])),
    "int complex": lambda m: int(m.tensor(1 + 1j)),
    "complex": lambda m: complex(m.tensor(2.0)),
    "bool": lambda m: bool(m.tensor([0.0])),
    "bool empty": lambda m: bool(m.tensor([])),
    "bool many": lambda m: bool(m.tensor([1, 2])),
    "index": lambda m: [1, 2, 3][m.tensor(1)],
    "index float": lambda m: [1, 2, 3][m.tensor(1.0)],
    "index one element": lambda m: [1, 2, 3][m.tensor([1])],
    "index bool": lambda m: [1, 2, 3][m.tensor(True)],
    "format 0-dim": lambda m: f"{m.tensor(2.5):.2f}",
    "format int": lambda m: f"{m.tensor(3)}",
    "format 1-dim spec": lambda m: f"{m.tensor([2.5]):.2f}",
    "len": lambda m: len(m.tensor([])),
    "len 0-dim": lambda m: len(m.tensor(1.0)),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_conversions(case, torch_mod):
    same_outcome(CASES[case], torch_mod)


def test_scalar_conversion_warns_when_requires_grad():
    t = ember.tensor(2.5, requires_grad=True)
    with pytest.warns(UserWarning, match="requires_grad=True to a scalar"):
        assert float(t) == 2.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert t.item() == 2.5 and int(t) == 2


def test_numpy_scalar_times_tensor(torch_mod):
    """np.float64(2) * t: PyTorch keeps the tensor's dtype (NumPy scalars are weak)."""
    for scalar in (np.float64(2), np.float32(3), np.int64(2), np.bool_(True)):
        for dtype in ("float32", "int32", "float16"):
            e = scalar * ember.ones(2, dtype=getattr(ember, dtype))
            t = scalar * torch_mod.ones(2, dtype=getattr(torch_mod, dtype))
            assert isinstance(e, ember.Tensor)
            assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
            assert e.tolist() == t.tolist()
