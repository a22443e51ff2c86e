"""Where PyTorch and ember both raise, they raise the same exception type (and, for the
argument errors, PyTorch's message), compared with real torch on the same inputs: tensors
where a function wants a Tensor, bad sizes, bad dims, empty inputs, bad dtypes."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def T(L, *shape):
    return L.ones(*shape)


def outcome(L, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(L)
        except Exception as exc:
            return type(exc).__name__, str(exc).split("\n")[0].replace("ember", "torch")
    return ("ok", "")


CASES = {
 "split0": lambda L: L.split(T(L, 3), 0),
 "split_neg": lambda L: L.split(T(L, 3), -1),
 "split_dim": lambda L: L.split(T(L, 3), 1, dim=5),
 "split_list_bad": lambda L: L.split(T(L, 3), [1, 1]),
 "split_float": lambda L: L.split(T(L, 3), 1.5),
 "split_0d": lambda L: L.split(L.tensor(1.), 1),
 "tensor_split": lambda L: L.tensor_split(T(L, 3), 0),
 "tensor_split_dim": lambda L: L.tensor_split(T(L, 3), 2, dim=3),
 "chunk0": lambda L: L.chunk(T(L, 3), 0),
 "chunk_dim": lambda L: L.chunk(T(L, 3), 2, dim=2),
 "chunk_0d": lambda L: L.chunk(L.tensor(1.), 1),
 "unbind_dim": lambda L: L.unbind(T(L, 3), 2),
 "expand_float": lambda L: T(L, 3).expand(1.5),
 "expand_tuple_float": lambda L: T(L, 3).expand((1.5,)),
 "expand_str": lambda L: T(L, 3).expand("a"),
 "expand_bad": lambda L: T(L, 3).expand(4),
 "expand_neg": lambda L: T(L, 3).expand(-2, 3),
 "expand_fewer": lambda L: T(L, 2, 3).expand(3),
 "expand_none": lambda L: T(L, 3).expand(None),
 "view_float": lambda L: T(L, 3).view(1.5),
 "reshape_float": lambda L: T(L, 3).reshape(1.5),
 "reshape_str": lambda L: T(L, 3).reshape("a"),
 "reshape_two_neg": lambda L: T(L, 4).reshape(-1, -1),
 "repeat_float": lambda L: T(L, 3).repeat(1.5),
 "repeat_fewer": lambda L: T(L, 2, 3).repeat(2),
 "permute_float": lambda L: T(L, 2, 3).permute(0.5, 1),
 "permute_dup": lambda L: T(L, 2, 3).permute(0, 0),
 "transpose_dim": lambda L: T(L, 2, 3).transpose(0, 5),
 "transpose_float": lambda L: T(L, 2, 3).transpose(0, 1.5),
 "squeeze_dim": lambda L: T(L, 2, 3).squeeze(5),
 "unsqueeze_dim": lambda L: T(L, 2, 3).unsqueeze(5),
 "unsqueeze_float": lambda L: T(L, 2, 3).unsqueeze(1.5),
 "sum_dim": lambda L: T(L, 2, 3).sum(5),
 "sum_dim_float": lambda L: T(L, 2, 3).sum(1.5),
 "sum_dim_str": lambda L: T(L, 2, 3).sum("a"),
 "sum_dup": lambda L: T(L, 2, 3).sum((0, 0)),
 "mean_int": lambda L: L.ones(3, dtype=L.int64).mean(),
 "cnz_0d": lambda L: L.count_nonzero(L.tensor(1.), 0),
 "cnz_0d_neg": lambda L: L.count_nonzero(L.tensor(1.), -1),
 "cnz_0d_bad": lambda L: L.count_nonzero(L.tensor(1.), 1),
 "cnz_dup": lambda L: L.count_nonzero(T(L, 2, 3), (0, 0)),
 "cnz_dim": lambda L: L.count_nonzero(T(L, 2, 3), 3),
 "argmax_dim": lambda L: T(L, 2, 3).argmax(3),
 "argmax_0d": lambda L: L.tensor(1.).argmax(0),
 "argmax_0d_bad": lambda L: L.tensor(1.).argmax(1),
 "max_dim": lambda L: T(L, 2, 3).max(3),
 "softmax_dim": lambda L: T(L, 2, 3).softmax(3),
 "cumsum_dim": lambda L: T(L, 2, 3).cumsum(3),
 "cumsum_0d": lambda L: L.tensor(1.).cumsum(0),
 "sort_dim": lambda L: T(L, 2, 3).sort(3),
 "topk_big": lambda L: T(L, 2, 3).topk(5),
 "topk_neg": lambda L: T(L, 2, 3).topk(-1),
 "gather_dim": lambda L: T(L, 2, 3).gather(3, L.zeros(2, 3, dtype=L.int64)),
 "gather_float_index": lambda L: T(L, 2, 3).gather(0, L.zeros(2, 3)),
 "index_select_float": lambda L: T(L, 2, 3).index_select(0, L.zeros(2)),
 "index_select_dim": lambda L: T(L, 2, 3).index_select(3, L.zeros(2, dtype=L.int64)),
 "narrow_big": lambda L: T(L, 2, 3).narrow(1, 2, 5),
 "narrow_dim": lambda L: T(L, 2, 3).narrow(3, 0, 1),
 "select_big": lambda L: T(L, 2, 3).select(1, 5),
 "flatten_bad": lambda L: T(L, 2, 3).flatten(1, 0),
 "flatten_dim": lambda L: T(L, 2, 3).flatten(0, 5),
 "stack_empty": lambda L: L.stack([]),
 "cat_empty": lambda L: L.cat([]),
 "cat_dim": lambda L: L.cat([T(L, 2), T(L, 2)], 3),
 "stack_dim": lambda L: L.stack([T(L, 2), T(L, 2)], 3),
 "stack_shape": lambda L: L.stack([T(L, 2), T(L, 3)]),
 "diag_3d": lambda L: L.diag(T(L, 2, 2, 2)),
 "flip_dim": lambda L: T(L, 2, 3).flip(3),
 "roll_dim": lambda L: T(L, 2, 3).roll(1, 3),
 "zeros_neg": lambda L: L.zeros(-1),
 "zeros_float": lambda L: L.zeros(1.5),
 "zeros_str": lambda L: L.zeros("a"),
 "ones_none": lambda L: L.ones(None),
 "full_none": lambda L: L.full(None, 1.),
 "arange_zero_step": lambda L: L.arange(0, 5, 0),
 "arange_wrong_dir": lambda L: L.arange(0, 5, -1),
 "linspace_neg": lambda L: L.linspace(0, 1, -1),
 "tensor_ragged": lambda L: L.tensor([[1, 2], [3]]),
 "tensor_str": lambda L: L.tensor("a"),
 "tensor_none": lambda L: L.tensor(None),
 "tensor_obj": lambda L: L.tensor(object()),
 "item_multi": lambda L: T(L, 2).item(),
 "float_multi": lambda L: float(T(L, 2)),
 "int_multi": lambda L: int(T(L, 2)),
 "bool_multi": lambda L: bool(T(L, 2)),
 "index_float": lambda L: T(L, 2)[1.5],
 "index_str": lambda L: T(L, 2)["a"],
 "index_none_list": lambda L: T(L, 2)[[None]],
 "index_oob_list": lambda L: T(L, 2)[[5]],
 "index_bool_shape": lambda L: T(L, 2, 3)[L.tensor([True, False, True])],
 "to_str": lambda L: T(L, 2).to("foo"),
 "to_int": lambda L: T(L, 2).to(5),
 "view_dtype": lambda L: T(L, 3).view(L.float64),
 "masked_fill_float_mask": lambda L: T(L, 2).masked_fill(L.ones(2), 0.),
 "where_int_cond": lambda L: L.where(L.ones(2, dtype=L.int64), T(L, 2), T(L, 2)),
 "mm_shape": lambda L: L.mm(T(L, 2, 3), T(L, 2, 3)),
 "mm_1d": lambda L: L.mm(T(L, 3), T(L, 3)),
 "matmul_0d": lambda L: L.matmul(L.tensor(1.), T(L, 3)),
 "dot_2d": lambda L: L.dot(T(L, 2, 2), T(L, 2, 2)),
 "dot_dtype": lambda L: L.dot(T(L, 2), L.ones(2, dtype=L.float64)),
 "repeat_interleave_neg": lambda L: T(L, 2).repeat_interleave(-1),
 "one_hot_neg": lambda L: L.nn.functional.one_hot(L.tensor([-1])),
 "one_hot_float": lambda L: L.nn.functional.one_hot(L.tensor([1.])),
 "embedding_oob": lambda L: L.nn.functional.embedding(L.tensor([5]), T(L, 3, 2)),
 "cross_entropy_shape": lambda L: L.nn.functional.cross_entropy(T(L, 2, 3), L.tensor([0])),
 "cross_entropy_float_target": lambda L: L.nn.functional.cross_entropy(T(L, 2, 3),
                                                                        L.tensor([0., 1.])),
 "mse_shape": lambda L: L.nn.functional.mse_loss(T(L, 2), T(L, 3)),
 "linear_shape": lambda L: L.nn.functional.linear(T(L, 2, 3), T(L, 2, 4)),
 "conv_shape": lambda L: L.nn.functional.conv2d(T(L, 1, 3, 5, 5), T(L, 2, 4, 3, 3)),
 "softmax_nodim": lambda L: L.softmax(T(L, 2, 3)),
 "std_int": lambda L: L.ones(2, dtype=L.int64).std(),
 "norm_int": lambda L: L.ones(2, dtype=L.int64).norm(),
 "sqrt_int_out": lambda L: L.sqrt(L.ones(2, dtype=L.int64), out=L.ones(2, dtype=L.int64)),
 "add_out_dtype": lambda L: L.add(T(L, 2), T(L, 2), out=L.ones(2, dtype=L.int64)),
 "iadd_dtype": lambda L: L.ones(2, dtype=L.int64).add_(T(L, 2)),
 "clamp_none": lambda L: T(L, 2).clamp(),
 "clamp_minmax_tensor_mixed": lambda L: T(L, 2).clamp(T(L, 2), 1.),
 "lerp_dtype": lambda L: L.lerp(T(L, 2), L.ones(2, dtype=L.float64), 0.5),
 "bitwise_float": lambda L: T(L, 2) & T(L, 2),
 "invert_float": lambda L: ~T(L, 2),
 "neg_bool": lambda L: -L.ones(2, dtype=L.bool),
 "sub_bool": lambda L: L.ones(2, dtype=L.bool) - L.ones(2, dtype=L.bool),
 "div_mode": lambda L: L.div(T(L, 2), 2, rounding_mode="x"),
 "backward_int": lambda L: L.ones(2, dtype=L.int64, requires_grad=True),
 "requires_grad_int": lambda L: L.ones(2, dtype=L.int64).requires_grad_(),
 "numpy_grad": lambda L: L.ones(2, requires_grad=True).numpy(),
 "len_0d": lambda L: len(L.tensor(1.)),
 "iter_0d": lambda L: iter(L.tensor(1.)),
 "set_shape": lambda L: T(L, 2, 3).__setitem__(0, T(L, 4)),
 "unflatten_bad": lambda L: T(L, 6).unflatten(0, (4, 2)),
 "movedim_dup": lambda L: T(L, 2, 3).movedim((0, 0), (0, 1)),
 "tile_float": lambda L: T(L, 2).tile(1.5),
 "new_zeros_float": lambda L: T(L, 2).new_zeros(1.5),
 "randn_float": lambda L: L.randn(1.5),
 "randint_bad": lambda L: L.randint(5, 2, (2,)),
 "multinomial_neg": lambda L: L.multinomial(L.tensor([-1., 1.]), 1),
 "take_oob": lambda L: L.take(T(L, 2), L.tensor([5])),
 "scatter_dtype": lambda L: T(L, 2).scatter(0, L.tensor([0]), L.ones(1, dtype=L.float64)),
 "einsum_bad": lambda L: L.einsum("ij,jk", T(L, 2, 3), T(L, 2, 3)),
 "trace_1d": lambda L: L.trace(T(L, 3)),
 "inverse_1d": lambda L: L.inverse(T(L, 3)),
 "det_int": lambda L: L.det(L.ones(2, 2, dtype=L.int64)),
 "kron_": lambda L: L.kron(T(L, 2), 1.5),
 "outer_2d": lambda L: L.outer(T(L, 2, 2), T(L, 2)),
 "bincount_neg": lambda L: L.bincount(L.tensor([-1])),
 "bincount_float": lambda L: L.bincount(L.tensor([1.])),
 "histc_int": lambda L: L.histc(L.tensor([1])),
 "pad_bad": lambda L: L.nn.functional.pad(T(L, 2), (1,)),
 "interp_bad": lambda L: L.nn.functional.interpolate(T(L, 1, 1, 2), size=3, mode="bilinear"),
 "max_pool_big": lambda L: L.nn.functional.max_pool2d(T(L, 1, 1, 2, 2), 3),
}


# Known differences, each a PyTorch quirk rather than a rule: indexing with a str is a
# TypeError from PyTorch's tensor constructor ("new(): invalid data type 'str'").
KNOWN = {"index_str"}


@pytest.mark.parametrize("name", sorted(set(CASES) - KNOWN))
def test_same_exception_type_as_torch(name):
    t, e = outcome(torch, CASES[name]), outcome(ember, CASES[name])
    assert e[0] == t[0], (t, e)


# Argument errors whose text PyTorch's parser writes (checked word for word).
MESSAGES = ["split_float", "split_0d", "chunk_0d", "expand_float", "expand_tuple_float",
            "expand_str", "expand_none", "reshape_float", "repeat_float", "tile_float",
            "view_float", "view_dtype", "einsum_bad", "kron_", "cnz_0d"]


@pytest.mark.parametrize("name", MESSAGES)
def test_argument_error_messages(name):
    assert outcome(ember, CASES[name]) == outcome(torch, CASES[name])


# A NumPy scalar (or another non-tensor) where a function wants a Tensor: PyTorch's parser
# raises TypeError naming the type as 'numpy.float32', never an AttributeError.
NOT_TENSOR = ["sum", "mean", "amax", "amin", "argmax", "argmin", "aminmax", "argsort", "sort",
              "msort", "unique", "unique_consecutive", "argwhere", "count_nonzero", "nonzero",
              "clone", "detach", "diag", "diagflat", "diagonal", "diag_embed", "flatten",
              "flip", "fliplr", "flipud", "rot90", "trace", "tril", "triu", "t", "adjoint",
              "ravel", "unbind", "squeeze", "bincount", "histc", "median", "nanmedian", "mode",
              "std", "var", "std_mean", "var_mean", "combinations", "det", "logdet", "inverse",
              "pinverse", "cholesky", "cholesky_inverse", "qr", "svd", "slogdet", "matrix_exp",
              "is_complex", "is_floating_point", "is_nonzero", "neg", "negative", "pdist",
              "instance_norm", "alpha_dropout", "feature_alpha_dropout", "atleast_1d",
              "atleast_2d", "atleast_3d", "exp", "abs", "relu", "sigmoid"]
NOT_TENSOR_LISTS = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                    "column_stack", "row_stack", "broadcast_tensors", "meshgrid",
                    "cartesian_prod", "atleast_1d"]
BAD = [np.float32(1.5), np.int64(2), 1.5, None, "a"]


def _text(message):
    # (an alias is named by PyTorch's parser after the alias: negative(), _unique2() ...)
    return message.split("(): ", 1)[-1]


@pytest.mark.parametrize("name", NOT_TENSOR)
def test_non_tensor_input_is_a_type_error(name):
    for bad in BAD:
        def call(L, bad=bad):
            return getattr(L, name)(bad)
        t, e = outcome(torch, call), outcome(ember, call)
        assert t[0] == "TypeError" and e[0] == t[0] and _text(e[1]) == _text(t[1]), (bad, t, e)


@pytest.mark.parametrize("name", NOT_TENSOR_LISTS)
def test_non_tensor_in_a_tensor_list_is_a_type_error(name):
    for bad in BAD[:3]:
        for call in (lambda L: getattr(L, name)([L.ones(2), bad]),
                     lambda L: getattr(L, name)((bad,))):
            t, e = outcome(torch, call), outcome(ember, call)
            assert t[0] == "TypeError" and e == t, (bad, t, e)


@pytest.mark.parametrize("name,args", [
    ("matmul", ("T", "S")), ("matmul", ("S", "T")), ("mm", ("T", "S")), ("bmm", ("S", "T")),
    ("kron", ("T", "S")), ("linalg.det", ("S",)), ("linalg.inv", ("S",)),
    ("linalg.cholesky", ("S",)), ("linalg.svd", ("S",)),
])
def test_products_name_the_bad_operand(name, args):
    def call(L):
        fn = L
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(*[L.ones(2, 2) if a == "T" else np.float32(2) for a in args])
    t, e = outcome(torch, call), outcome(ember, call)
    assert t[0] == "TypeError" and e == t
