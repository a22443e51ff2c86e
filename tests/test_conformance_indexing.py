"""Every index kind PyTorch accepts, with PyTorch's results and errors (compared with real
torch on the same tensor): ranges, tuples of lists, lists of tensors, NumPy arrays and
scalars, torch.Size, float sequences (truncated to int64, as PyTorch's index conversion
does), and the kinds PyTorch rejects (np.bool_, float slices, str, sets...)."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def X(L):
    return L.arange(24).reshape(2, 3, 4)


KEYS = {
 "range": lambda L: (range(2), [0, 1]),
 "range_only": lambda L: range(2),
 "range_step": lambda L: range(0, 2, 1),
 "range_empty": lambda L: range(0),
 "range_dim1": lambda L: (slice(None), range(3)),
 "tuple_of_lists": lambda L: ([0, 1], [1, 2]),
 "list_of_lists": lambda L: [[0, 1], [1, 2]],
 "list_of_tensors": lambda L: [L.tensor([0, 1]), L.tensor([1, 2])],
 "tuple_of_tensors": lambda L: (L.tensor([0, 1]), L.tensor([1, 2])),
 "list_of_0d": lambda L: [L.tensor(0), L.tensor(1)],
 "list_mixed": lambda L: [0, L.tensor(1)],
 "list_bool": lambda L: [True, False],
 "list_of_bool_lists": lambda L: [[True, False], [False, True]],
 "np_int": lambda L: np.int64(1),
 "np_int32": lambda L: np.int32(1),
 "np_bool": lambda L: np.bool_(True),
 "py_bool": lambda L: True,
 "py_false": lambda L: False,
 "np_array": lambda L: np.array([0, 1]),
 "np_array_bool": lambda L: np.array([True, False]),
 "np_0d": lambda L: np.array(1),
 "np_float_array": lambda L: np.array([0., 1.]),
 "tensor_0d": lambda L: L.tensor(1),
 "tensor_0d_bool": lambda L: L.tensor(True),
 "float": lambda L: 1.5,
 "float_list": lambda L: [0.5],
 "str": lambda L: "a",
 "none_list": lambda L: [None, 0],
 "ellipsis_list": lambda L: (Ellipsis, [0, 1]),
 "slice_tensor": lambda L: slice(L.tensor(0), L.tensor(2)),
 "slice_np": lambda L: slice(np.int64(0), np.int64(2)),
 "slice_float": lambda L: slice(0.5, 2),
 "slice_zero_step": lambda L: slice(0, 2, 0),
 "slice_neg_step": lambda L: slice(None, None, -1),
 "dict": lambda L: {0: 1},
 "set": lambda L: {0, 1},
 "generator": lambda L: (i for i in range(2)),
 "nested_tuple": lambda L: ((0, 1), (1, 2)),
 "tuple_list_slice": lambda L: ([0, 1], slice(None), [0, 1]),
 "oob_range": lambda L: range(5),
 "neg_list": lambda L: [-1, -2],
 "oob_neg_list": lambda L: [-3],
 "list_len1": lambda L: [1],
 "list_int_tuple": lambda L: [0, (1,)],
 "long_list": lambda L: [0, 1, 0, 1, 1],
 "float_tensor": lambda L: L.tensor([0., 1.]),
 "int32_tensor": lambda L: L.tensor([0, 1], dtype=L.int32),
 "uint8_tensor": lambda L: L.tensor([1, 0], dtype=L.uint8),
 "int8_tensor": lambda L: L.tensor([0, 1], dtype=L.int8),
 "bool_tensor_wrong": lambda L: L.tensor([True, False, True]),
 "too_many": lambda L: (0, 0, 0, 0),
 "too_many_list": lambda L: ([0], [0], [0], [0]),
 "broadcast_bad": lambda L: ([0, 1], [0, 1, 2]),
 "mixed_range_tensor": lambda L: (range(2), L.tensor([0, 2])),
 "size": lambda L: L.Size([1]),
 "none_tuple": lambda L: (None, 0, None),
 "ellipsis_twice": lambda L: (Ellipsis, Ellipsis),
 "np_float_trunc": lambda L: np.array([0.5, 1.7]),
 "float_list_trunc": lambda L: [0.5, 1.7],
 "nested_float": lambda L: [[0.2], [1.9]],
 "list_tensor_float": lambda L: [L.tensor(1.5)],
 "list_true_int": lambda L: [True, 1],
 "list_complex": lambda L: [1 + 2j],
 "list_str": lambda L: ["a"],
 "np_str": lambda L: np.array(["a"]),
 "list_of_range": lambda L: [range(2)],
 "two_ranges": lambda L: (range(2), range(3)),
 "ragged_tuple": lambda L: ([0, 1], [1]),
 "list_none": lambda L: [None],
 "np_uint8": lambda L: np.uint8(1),
 "np_uint8_array": lambda L: np.array([1, 0], dtype=np.uint8),
 "np_int_list": lambda L: [np.int64(1), np.int64(0)],
 "size2": lambda L: L.Size([1, 0]),
 "long_float_list": lambda L: [0.5] * 40,
 "np_2d": lambda L: np.array([[0, 1]]),
 "list_of_np": lambda L: [np.array([0, 1])],
 "range_tensor_labels": lambda L: (range(2), L.tensor([2, 0])),
 "generator2": lambda L: iter([0, 1]),
}


def get(L, key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the deprecated list and uint8 forms warn on both)
        try:
            r = X(L)[KEYS[key](L)]
        except Exception as exc:
            return type(exc).__name__, str(exc).split("\n")[0]
    return tuple(r.shape), r.tolist()


def put(L, key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = X(L)
        try:
            x[KEYS[key](L)] = -1
        except Exception as exc:
            return type(exc).__name__, str(exc).split("\n")[0]
    return x.tolist()


@pytest.mark.parametrize("key", sorted(KEYS))
def test_getitem_as_torch(key):
    assert get(ember, key) == get(torch, key)


@pytest.mark.parametrize("key", sorted(KEYS))
def test_setitem_as_torch(key):
    assert put(ember, key) == put(torch, key)


def test_range_index_in_loss_code_has_torch_gradient():
    # The pattern from the issue: pick each row's label with x[range(n), labels].
    logits = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    labels = [1, 0, 4, 2]
    grads = []
    for L in (torch, ember):
        x = L.tensor(logits, requires_grad=True)
        loss = -x.log_softmax(1)[range(4), L.tensor(labels)].mean()
        loss.backward()
        grads.append((loss.item(), x.grad.numpy()))
    assert grads[1][0] == pytest.approx(grads[0][0], rel=1e-6)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-7)


def test_legacy_list_warning_as_torch():
    # x[[0, [1]]] reads as x[0, [1]] with PyTorch's deprecation warning; a plain list of ints
    # (or a range) is one index tensor, without a warning.
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        r = X(ember)[[0, [1, 2]]]
    assert r.tolist() == X(torch)[0, [1, 2]].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert X(ember)[range(2)].shape == X(ember)[[0, 1]].shape
