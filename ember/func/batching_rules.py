"""vmap's rule table: op name -> how to run that op once on a whole batch.

A rule gets a `Call` (batched_tensor.py): the op, its inputs with this level's batched ones
replaced by physical tensors whose dim 0 is the batch (`call.values`, `call.batched`), and
its params, which speak of the logical tensors. It returns the physical result (batch at dim
0), usually by dispatching the same op with the dims shifted past the batch dim. Ops missing
here run once per batch element (batched_tensor.loop_fallback), with a warning.
"""
from .._tensor import Tensor
from ..backends import array_module
from ..ops.arithmetic import add
from .batched_tensor import commit_inplace, loop_fallback

BATCHING_RULES = {}


def rule(*names):
    def register(fn):
        for name in names:
            BATCHING_RULES[name] = fn
        return fn
    return register


def _shift(d):
    """A logical dim as a physical one (negative dims count from the end: unchanged)."""
    return d + 1 if d >= 0 else d


def _all_dims(ndim):
    return tuple(range(1, ndim + 1))


def _pad_batched(call, rank, values=None):
    """Batched operands with 1s inserted after the batch dim up to logical rank `rank`, so
    that broadcasting aligns logical dims from the right (unbatched operands broadcast as
    they are: their rank is at most `rank`)."""
    values = list(call.values if values is None else values)
    for i, batched in enumerate(call.batched):
        if batched:
            v = values[i]
            missing = rank - (v.dim() - 1)
            if missing > 0:
                values[i] = v.reshape((v.shape[0],) + (1,) * missing + tuple(v.shape[1:]))
    return values


def _logical_rank(call):
    return max((call.logical_ndim(i) for i, v in enumerate(call.values)
                if isinstance(v, Tensor)), default=0)


def _expanded(call, i):
    """Operand i as a physical tensor: unbatched operands expanded along the batch."""
    v = call.values[i]
    if call.batched[i]:
        return v
    return v.unsqueeze(0).expand((call.size,) + tuple(v.shape))


# ---------------------------------------------------------------------- elementwise family
ELEMENTWISE = (
    "abs acos acosh angle asin asinh atan atan2 atanh bitwise_and bitwise_left_shift "
    "bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil clamp clamp_max "
    "clamp_max_scalar clamp_min clamp_min_scalar clamp_scalar clone complex conj copysign cos "
    "cosh deg2rad digamma div div_floor div_trunc eq erf erfc erfinv exp exp2 expm1 floor fmax "
    "fmin fmod fmod_scalar frac gcd ge gelu gelu_backward gt heaviside hypot i0 igamma igammac "
    "imag isclose isfinite isinf isnan isneginf isposinf isreal lcm ldexp le lerp lerp_scalar "
    "lgamma log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or "
    "logical_xor logit lt maximum minimum mul nan_to_num ne neg nextafter "
    "polygamma pow pow_scalar_base pow_tensor rad2deg real reciprocal relu remainder "
    "remainder_scalar remainder_scalar_self round round_decimals rsqrt sgn sigmoid sign "
    "signbit sin sinc sinh special_i1 sqrt sub tan tanh threshold_backward trunc where xlogy "
    "xlogy_scalar_other xlogy_scalar_self add addcdiv addcmul _to_copy _exp _log _abs_pow "
    "linalg_abs_pow linalg_sgn_pow fill fill_scalar zero"
).split()


@rule(*ELEMENTWISE)
def elementwise(call):
    return call.run(_pad_batched(call, _logical_rank(call)))


# Ops on the trailing dims only, batched over any leading dims by their kernels.
@rule("tril", "triu", "view_as_real", "view_as_complex", "linalg_det", "linalg_inv",
      "linalg_slogdet", "linalg_cholesky", "linalg_matrix_exp")
def trailing(call):
    return call.run()


# ---------------------------------------------------------------------- reductions
@rule("sum", "mean", "nansum", "nanmean", "prod", "prod_dim", "amax", "amin", "aminmax",
      "logsumexp", "norm", "std", "var", "std_mean", "var_mean", "max_all", "min_all",
      "linalg_vector_norm")
def reduction(call):
    dims = call.params["dims"]
    if isinstance(dims, int):
        dims = (dims,)
    dims = _all_dims(call.logical_ndim(0)) if dims is None else tuple(_shift(d) for d in dims)
    return call.run(params=dict(call.params, dims=dims))


@rule("softmax", "log_softmax", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
      "max", "min", "sort", "topk", "kthvalue", "median", "mode", "nanmedian", "linalg_cross")
def along_dim(call):
    rank = _logical_rank(call)
    if rank == 0:
        # NOTE: dim 0 of a 0-d tensor is the tensor itself: the op runs over a dim of size 1
        # that is dropped again (dim 1 of the physical (B,) tensor does not exist).
        values = [v.unsqueeze(1) if b else v for v, b in zip(call.values, call.batched)]
        out = call.run(values, dict(call.params, dim=1))
        if type(out) is tuple:
            return tuple(o.reshape(call.size) for o in out)
        return out.reshape(call.size)
    values = _pad_batched(call, rank)
    return call.run(values, dict(call.params, dim=_shift(call.params["dim"])))


@rule("softmax_backward_data", "log_softmax_backward_data")
def softmax_backward(call):
    # The fused kernels take operands of one shape: an unbatched one is expanded.
    values = [_expanded(call, i) for i in range(len(call.values))]
    dim = call.params["dim"]
    return call.run(values, dict(call.params, dim=dim + 1 if dim >= 0 else dim))


@rule("gather", "_gather_dim")
def gather(call):
    # The index (a param: never batched here) is expanded along the batch.
    index = call.params["index"]
    index = array_module(index).broadcast_to(index, (call.size,) + index.shape)
    return call.run(params=dict(call.params, index=index, dim=_shift(call.params["dim"])))


@rule("scatter", "scatter_value", "scatter_add", "scatter_reduce")
def scatter(call):
    """Scatters into the batch: both tensors carry it, the index (a param) is expanded."""
    index = call.params["index"]
    index = array_module(index).broadcast_to(index, (call.size,) + index.shape)
    values = [_expanded(call, i) if isinstance(v, Tensor) else v
              for i, v in enumerate(call.values)]
    return call.run(values, dict(call.params, index=index, dim=_shift(call.params["dim"])))


@rule("index_add", "index_copy", "index_fill")
def index_along_dim(call):
    """index_add/copy/fill along a dim (a 1-d index param, the same for every element)."""
    if call.logical_ndim(0) == 0 or any(call.batched[1:]) and call.op.name == "index_fill":
        return loop_fallback(call)
    values = [_expanded(call, i) if isinstance(v, Tensor) else v
              for i, v in enumerate(call.values)]
    return call.run(values, dict(call.params, dim=_shift(call.params["dim"])))


@rule("masked_fill")
def masked_fill(call):
    # The mask (a param, never batched here) may broadcast the input to more dims.
    rank = max(_logical_rank(call), call.params["mask"].ndim)
    return call.run(_pad_batched(call, rank))


@rule("unsqueeze")
def unsqueeze(call):
    return call.run(params=dict(call.params, dim=_shift(call.params["dim"])))


@rule("index_select")
def index_select(call):
    if call.logical_ndim(0) == 0:
        return loop_fallback(call)
    return call.run(params=dict(call.params, dim=_shift(call.params["dim"])))


@rule("copy_")
def copy(call):
    if not call.batched[0]:
        return commit_inplace(call.inputs[0], call.inputs[1])   # raises PyTorch's error
    return call.run(_pad_batched(call, _logical_rank(call)))


@rule("cat", "stack")
def cat(call):
    values = [_expanded(call, i) for i in range(len(call.values))]
    return call.run(values, dict(call.params, dim=_shift(call.params["dim"])))


# ---------------------------------------------------------------------- views and shapes
@rule("transpose")
def transpose(call):
    p = call.params
    return call.run(params=dict(p, dim0=_shift(p["dim0"]), dim1=_shift(p["dim1"])))


@rule("permute")
def permute(call):
    dims = (0,) + tuple(d % call.logical_ndim(0) + 1 for d in call.params["dims"])
    return call.run(params=dict(call.params, dims=dims))


@rule("view")
def view(call):
    shape = (call.size,) + tuple(call.params["shape"])
    try:
        return call.run(params=dict(call.params, shape=shape))
    except RuntimeError:
        # NOTE: the physical tensor (batch moved to the front) may not be viewable where the
        # logical one is; PyTorch's vmap copies then too.
        return call.values[0].reshape(shape)


@rule("expand")
def expand(call):
    shape = tuple(call.params["shape"])
    values = _pad_batched(call, len(shape))    # new leading dims go after the batch dim
    return call.run(values, dict(call.params, shape=(call.size,) + shape))


@rule("squeeze", "squeeze_dim", "squeeze_dims")
def squeeze(call):
    dims = call.params["dims"]
    if dims is None:
        logical = call.values[0].shape[1:]
        dims = tuple(i for i, s in enumerate(logical) if s == 1)
    if isinstance(dims, int):
        dims = (dims,)
    return call.run(params=dict(call.params, dims=tuple(_shift(d) for d in dims)))


@rule("select", "slice", "index_unsqueeze", "alias")
def basic_index(call):
    key = call.params["key"]
    key = key if type(key) is tuple else (key,)
    return call.run(params=dict(call.params, key=(slice(None),) + key))


@rule("index")
def index(call):
    key = call.params["key"]
    key = key if type(key) is tuple else (key,)
    advanced = [k for k in key if k is not None and k is not Ellipsis and
                k.__class__ is not slice]
    if len(advanced) > 1:
        # NOTE: NumPy moves non-adjacent advanced indices to the front: a slice for the
        # batch dim in front of them would change where their dims land.
        return loop_fallback(call)
    return call.run(params=dict(call.params, key=(slice(None),) + key))


@rule("copy_slices", "index_put")
def put_into_slices(call):
    """x[key] = v (out of place): the key gets a slice for the batch dim; v is padded to
    the logical rank of the region it fills."""
    p = call.params
    basic = p["basic"] if type(p["basic"]) is tuple else (p["basic"],)
    adv = p["adv"]
    if adv is not None:
        adv = adv if type(adv) is tuple else (adv,)
        if len([k for k in adv if k is not None and k is not Ellipsis and
                k.__class__ is not slice]) > 1:
            return loop_fallback(call)
        adv = (slice(None),) + adv
    region = call.inputs[0]._data[p["basic"]]
    if p["adv"] is not None:
        region = region[p["adv"]]
    values = [_expanded(call, 0)] + _pad_batched(call, region.ndim)[1:]
    return call.run(values, dict(p, basic=(slice(None),) + basic, adv=adv))


@rule("diagonal", "diagonal_copy", "linalg_diagonal")
def diagonal(call):
    p = call.params
    return call.run(params=dict(p, dim1=_shift(p["dim1"]), dim2=_shift(p["dim2"])))


@rule("flip")
def flip(call):
    return call.run(params=dict(call.params, dims=tuple(_shift(d) for d in
                                                        call.params["dims"])))


@rule("roll", "rot90")
def roll(call):
    dims = call.params["dims"]
    if dims is None:   # roll over the flattened tensor: the batch would mix in
        return loop_fallback(call)
    return call.run(params=dict(call.params, dims=tuple(_shift(d) for d in dims)))


@rule("diag_embed", "linalg_diag_embed")
def diag_embed(call):
    p = call.params
    return call.run(params=dict(p, shape=(call.size,) + tuple(p["shape"]),
                                dim1=_shift(p["dim1"]), dim2=_shift(p["dim2"])))


@rule("slice_backward", "index_backward")
def scatter_into_shape(call):
    """Gradients of basic and simple advanced indexing: g put into zeros of `shape`."""
    p = call.params
    key = p["key"] if type(p["key"]) is tuple else (p["key"],)
    if call.op.name == "index_backward" and len(
            [k for k in key if k is not None and k is not Ellipsis and
             k.__class__ is not slice]) > 1:
        return loop_fallback(call)
    return call.run(params=dict(p, shape=(call.size,) + tuple(p["shape"]),
                                key=(slice(None),) + key))


# Ops on the trailing dims whose params name only those dims.
BATCHING_RULES["constant_pad_nd"] = trailing


@rule("fft_c2c", "fft_r2c", "fft_c2r")
def fft(call):
    return call.run(params=dict(call.params, dim=tuple(_shift(d) for d in call.params["dim"])))


@rule("unfold", "narrow_copy", "interp_taps", "interp_taps_backward")
def unfold(call):
    return call.run(params=dict(call.params, dim=_shift(call.params["dim"])))


@rule("repeat")
def repeat(call):
    reps = tuple(call.params["reps"])
    v = call.values[0]
    missing = len(reps) - (v.dim() - 1)
    if missing > 0:
        v = v.reshape((v.shape[0],) + (1,) * missing + tuple(v.shape[1:]))
    return call.run([v], dict(call.params, reps=(1,) + reps))


# ---------------------------------------------------------------------- products
@rule("matmul")
def matmul(call):
    return _batched_matmul(call, call.values[0], call.values[1], call.batched[0],
                           call.batched[1])


def _batched_matmul(call, a, b, a_batched, b_batched, params=None):
    """matmul's rule: 1-d logical operands made matrices (and the extra dim taken off the
    result), then batched operands padded to the larger logical rank."""
    a_rank = a.dim() - a_batched
    b_rank = b.dim() - b_batched
    if a_rank == 1:
        a = a.unsqueeze(-2)
    if b_rank == 1:
        b = b.unsqueeze(-1)
    rank = max(a.dim() - a_batched, b.dim() - b_batched)
    if a_batched and a.dim() - 1 < rank:
        a = a.reshape((a.shape[0],) + (1,) * (rank - a.dim() + 1) + tuple(a.shape[1:]))
    if b_batched and b.dim() - 1 < rank:
        b = b.reshape((b.shape[0],) + (1,) * (rank - b.dim() + 1) + tuple(b.shape[1:]))
    out = _registry.dispatch(_registry.OPS["matmul"], (a, b),
                             params or {"acc": call.params.get("acc")}, call.dtype)
    if a_rank == 1 and b_rank == 1:
        return out.reshape(out.shape[:-2])
    if b_rank == 1:
        return out.squeeze(-1)
    if a_rank == 1:
        return out.squeeze(-2)
    return out


@rule("einsum")
def einsum(call):
    """A fresh subscript letter for the batch, on the batched operands and the result."""
    p = call.params
    used = set("".join(p["subs"]) + p["out"])
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                  if c not in used)
    subs = [letter + sub if b else sub for sub, b in zip(p["subs"], call.batched)]
    return call.run(params=dict(p, subs=subs, out=letter + p["out"]))


@rule("trace")
def trace(call):
    """The diagonal of each element's matrix, summed (sum gives trace's dtypes)."""
    return call.values[0].diagonal(0, 1, 2).sum(-1)


@rule("addmm")
def addmm(call):
    bias, m1, m2 = call.values
    product = _batched_matmul(call, m1, m2, call.batched[1], call.batched[2],
                              {"acc": call.params.get("acc")})
    if call.batched[0] and bias.dim() - 1 < 2:
        bias = bias.reshape((bias.shape[0],) + (1,) * (3 - bias.dim()) + tuple(bias.shape[1:]))
    if not (call.batched[1] or call.batched[2]):
        product = product.unsqueeze(0)
    return add(product, bias)


from ..ops import registry as _registry  # noqa: E402
from . import batching_rules_nn  # noqa: E402,F401  (the nn ops' rules join the table)
