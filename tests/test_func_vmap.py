"""ember.func.vmap against real PyTorch: the op table vmapped (in_dims 0 and 1, vmap of vmap)
against a Python loop over torch on the same inputs, the batching rules running each op once,
the loop fallback, in_dims/out_dims trees, randomness, chunk_size and PyTorch's errors."""
import warnings

import numpy as np
import pytest

import ember
from checks import to_torch
from ember.func import vmap
from ember.func.batching_rules import BATCHING_RULES
from op_db import all_ops

torch = pytest.importorskip("torch")
tf = torch.func

# Ops ember cannot batch: they compute their result from the values outside the op dispatch
# (or need data-dependent shapes); vmap raises a RuntimeError saying so.
RAISES = {"argmax", "argmin", "argsort", "nonzero", "bincount", "histc", "nanquantile",
          "linalg.qr", "linalg.svd", "svd", "linalg.eigh", "all", "any",
          "count_nonzero"}
# Not compared: results of data-dependent shape (unique: PyTorch's vmap refuses it too) and
# searchsorted over batched rows of sequences, which ember computes outside dispatch.
NOT_COMPARED = {"unique", "searchsorted", "unique_consecutive"}

OPS = [i for i in all_ops() if i.name not in NOT_COMPARED]


def _dtype(info):
    return "float64" if "float64" in info.dtypes else info.dtypes[0]


def _aligned_samples(info, count):
    """`count` sample lists (different seeds) of which the same positions have the same
    structure: their float arrays are what vmap batches."""
    per = [info.samples(np.random.default_rng(100 + b), _dtype(info)) for b in range(count)]
    out = []
    for k in range(len(per[0])):
        group = [p[k] for p in per]
        ref = group[0]
        if not all(len(s.args) == len(ref.args) and _same_layout(s, ref) for s in group):
            continue
        out.append(group)
    return out


def _same_layout(s, ref):
    for x, y in zip(s.args, ref.args):
        if isinstance(x, np.ndarray) != isinstance(y, np.ndarray):
            return False
        if isinstance(x, np.ndarray) and (x.shape != y.shape or x.dtype != y.dtype):
            return False
    return s.kwargs.keys() == ref.kwargs.keys()


def _batched_positions(sample):
    """The float arrays (integer ones are often indices); else the first array."""
    arrays = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray)]
    floats = [i for i in arrays if sample.args[i].dtype.kind in "fc"]
    return floats or arrays[:1]


def _torch_loop(info, group, positions):
    """Each batch element through real torch (non-batched arrays from element 0), stacked."""
    rows = []
    for s in group:
        args = [to_torch(torch, s.args[i] if i in positions else a)
                for i, a in enumerate(group[0].args)]
        rows.append(info.torch_call(torch, *args, **group[0].kwargs))
    if isinstance(rows[0], torch.Tensor):
        return [torch.stack(rows)]
    return [torch.stack([r[j] for r in rows]) for j in range(len(rows[0]))]


def _ember_fn(info, sample, positions):
    def f(*batched):
        args = [ember.tensor(a) if isinstance(a, np.ndarray) else a for a in sample.args]
        for i, t in zip(positions, batched):
            args[i] = t
        return info.op(ember, *args, **sample.kwargs)
    return f


def _compare(actual, expected, info=None):
    """Values, shapes and dtypes; the op table's tolerances where they are wider (ember's
    own special functions differ from PyTorch's in the last digits)."""
    actual = list(actual) if isinstance(actual, (tuple, list)) else [actual]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert tuple(a.shape) == tuple(e.shape)
        assert str(a.dtype).replace("ember", "torch") == str(e.dtype)
        wide = a.dtype in (ember.float64, ember.complex128)
        rtol, atol = (1e-7, 1e-9) if wide else (2e-5, 1e-6)
        if info is not None:
            rtol = max(rtol, info.f64_rtol if wide else info.rtol)
            atol = max(atol, info.f64_atol if wide else info.atol)
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("info", [pytest.param(i, id=i.name) for i in OPS])
def test_op_table_vmap_matches_torch_loop(info):
    warnings.simplefilter("ignore", UserWarning)   # (the loop fallback's performance note)
    groups = _aligned_samples(info, 4)[:2]
    tested = 0
    for group in groups:
        ref = group[0]
        positions = _batched_positions(ref)
        if not positions:
            continue
        try:
            expected = _torch_loop(info, group[:3], positions)
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue   # torch refuses these inputs or gives ragged results: nothing to batch
        f = _ember_fn(info, ref, positions)
        stacked = [ember.tensor(np.stack([s.args[i] for s in group[:3]])) for i in positions]
        if info.name in RAISES:
            with pytest.raises(RuntimeError):
                vmap(f)(*stacked)
            tested += 1
            continue
        _compare(vmap(f)(*stacked), expected, info)
        # in_dims=1: the batch along dim 1 of every batched input that has one
        in_dims = tuple(1 if s.dim() > 1 else 0 for s in stacked)
        moved = [s.movedim(0, 1) if d == 1 else s for s, d in zip(stacked, in_dims)]
        _compare(vmap(f, in_dims=in_dims)(*moved), expected, info)
        # vmap of vmap: a 2 x 2 batch against the loop over all four elements
        expected4 = _torch_loop(info, group, positions)
        grid = [ember.tensor(np.stack([s.args[i] for s in group]).reshape(
            (2, 2) + group[0].args[i].shape)) for i in positions]
        out = vmap(vmap(f))(*grid)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        _compare([o.reshape((4,) + tuple(o.shape[2:])) for o in out], expected4, info)
        tested += 1
    if info.name in RAISES:
        assert tested, "the unsupported op was not exercised"


# ---------------------------------------------------------------------- batching rules
def _count_forward(name, monkeypatch):
    op = ember.ops.registry.OPS[name]
    calls = []
    original = op.forward

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(op, "forward", counting)
    return calls


@pytest.mark.parametrize("name,fn", [
    ("exp", lambda x: x.exp()),
    ("sum", lambda x: x.sum()),
    ("matmul", lambda x: x @ ember.ones(4, 2, dtype=ember.float64)),
    ("softmax", lambda x: ember.softmax(x, -1)),
    ("transpose", lambda x: x.transpose(0, 1)),
])
def test_rule_runs_op_once_for_the_whole_batch(name, fn, monkeypatch):
    x = ember.randn(7, 3, 4, dtype=ember.float64)
    calls = _count_forward(name, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no loop fallback
        out = vmap(fn)(x)
    assert len(calls) == 1
    expected = torch.stack([_torch_fn(name)(torch.tensor(r)) for r in x.numpy()])
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)


def _torch_fn(name):
    return {"exp": lambda x: x.exp(), "sum": lambda x: x.sum(),
            "matmul": lambda x: x @ torch.ones(4, 2, dtype=torch.float64),
            "softmax": lambda x: torch.softmax(x, -1),
            "transpose": lambda x: x.transpose(0, 1)}[name]


def test_rule_table_covers_the_required_families():
    required = ["add", "mul", "exp", "relu", "gelu", "where", "sum", "mean", "amax", "matmul",
                "addmm", "view", "transpose", "permute", "unsqueeze", "squeeze_dims", "expand",
                "select", "slice", "index", "softmax", "log_softmax", "cat", "stack",
                "convolution", "nll_loss", "native_layer_norm", "max_pool", "embedding"]
    assert [n for n in required if n not in BATCHING_RULES] == []


def test_loop_fallback_warns_once_and_matches_torch(monkeypatch):
    from ember.func import batched_tensor
    monkeypatch.setattr(batched_tensor, "_warned", set())
    monkeypatch.delitem(BATCHING_RULES, "cumsum")
    x = np.random.default_rng(0).standard_normal((3, 5))
    with pytest.warns(UserWarning, match="performance drop .* batching rule for cumsum"):
        out = vmap(lambda v: v.cumsum(0))(ember.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # once per op
        vmap(lambda v: v.cumsum(0))(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1), rtol=1e-12)


# ---------------------------------------------------------------------- nn and tutorials
def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("fn", [
    lambda F, x: F.relu(x), lambda F, x: F.gelu(x), lambda F, x: F.gelu(x, approximate="tanh"),
    lambda F, x: F.mse_loss(x, x.flip(-1)), lambda F, x: F.layer_norm(x, (4,)),
    lambda F, x: F.log_softmax(x, 0), lambda F, x: F.linear(x, x[:2] * 2, x[0, :2]),
    lambda F, x: F.cross_entropy(x, (x[:, 0] > 0).long()),
])
def test_functional_ops_under_vmap(fn):
    e, t = _pair((5, 3, 4))
    out = vmap(lambda v: fn(ember.nn.functional, v))(e)
    np.testing.assert_allclose(out.numpy(), tf.vmap(lambda v: fn(torch.nn.functional, v))(t),
                               rtol=1e-10, atol=1e-12)


def test_conv2d_and_pooling_batched_inputs_and_weights():
    x_e, x_t = _pair((4, 2, 3, 6, 6))
    w_e, w_t = _pair((4, 5, 3, 3, 3), 1)
    b_e, b_t = _pair((4, 5), 2)
    F, G = ember.nn.functional, torch.nn.functional
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = vmap(lambda x: F.max_pool2d(F.conv2d(x, w_e[0], padding=1), 2))(x_e)
        ens = vmap(lambda x, w, b: F.conv2d(x, w, b, stride=2))(x_e, w_e, b_e)
        shared = vmap(lambda w: F.conv2d(x_e[0], w, groups=1), in_dims=0)(w_e)
    np.testing.assert_allclose(
        out.numpy(), tf.vmap(lambda x: G.max_pool2d(G.conv2d(x, w_t[0], padding=1), 2))(x_t),
        rtol=1e-10)
    np.testing.assert_allclose(
        ens.numpy(), tf.vmap(lambda x, w, b: G.conv2d(x, w, b, stride=2))(x_t, w_t, b_t),
        rtol=1e-10)
    np.testing.assert_allclose(shared.numpy(), tf.vmap(lambda w: G.conv2d(x_t[0], w))(w_t),
                               rtol=1e-10)


def test_model_ensembling_with_stack_module_state():
    def models(lib):
        lib.manual_seed(0)
        return [lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
                for _ in range(3)]
    xe, xt = _pair((5, 4))
    outs = []
    for lib, fn, x in ((ember, ember.func, xe.float()), (torch, tf, xt.float())):
        ms = models(lib)
        params, buffers = fn.stack_module_state(ms)
        base = ms[0]
        outs.append(fn.vmap(lambda p, b, x: fn.functional_call(base, (p, b), (x,)),
                            in_dims=(0, 0, None))(params, buffers, x))
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-5,
                               atol=1e-6)


# ---------------------------------------------------------------------- in_dims / out_dims
def test_in_dims_trees_none_and_out_dims():
    a_e, a_t = _pair((3, 4))
    b_e, b_t = _pair((4, 3), 1)
    c_e, c_t = _pair((4,), 2)

    def f(x, pair, d, scale):
        return {"s": x * pair[0] + pair[1]["k"] * scale, "t": (x.sum(), d)}
    kw = dict(in_dims=(0, (1, {"k": None}), None, None), out_dims={"s": 1, "t": (0, None)})
    got = vmap(f, **kw)(a_e, (b_e, {"k": c_e}), c_e, 2.0)
    want = tf.vmap(f, **kw)(a_t, (b_t, {"k": c_t}), c_t, 2.0)
    np.testing.assert_allclose(got["s"].numpy(), want["s"].numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["t"][0].numpy(), want["t"][0].numpy(), rtol=1e-12)
    assert got["t"][1] is c_e
    neg = vmap(lambda x: x * 2, in_dims=-1)(b_e)
    np.testing.assert_allclose(neg.numpy(), tf.vmap(lambda x: x * 2, in_dims=-1)(b_t))
    unbatched = vmap(lambda x: c_e, in_dims=0)(a_e)   # an unbatched output is expanded
    assert tuple(unbatched.shape) == (3, 4)
    np.testing.assert_allclose(unbatched.numpy(), np.broadcast_to(c_e.numpy(), (3, 4)))


def test_chunk_size_matches_unchunked():
    e, t = _pair((7, 3))
    got = vmap(lambda x: (x.sin(), x.sum()), chunk_size=3)(e)
    want = tf.vmap(lambda x: (x.sin(), x.sum()), chunk_size=3)(t)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_nested_vmap_with_inner_in_dims():
    e, t = _pair((2, 3, 4))
    f, g = _pair((4, 2), 1)
    got = vmap(vmap(lambda x, y: x * y.sum(), in_dims=(0, None)), in_dims=(0, 1))(e, f)
    want = tf.vmap(tf.vmap(lambda x, y: x * y.sum(), in_dims=(0, None)), in_dims=(0, 1))(t, g)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------- randomness
def test_randomness_modes():
    x = ember.ones(4, 50)
    same = vmap(lambda v: ember.nn.functional.dropout(v, 0.5), randomness="same")(x)
    assert all(np.array_equal(same[0].numpy(), r.numpy()) for r in same)
    different = vmap(lambda v: ember.nn.functional.dropout(v, 0.5),
                     randomness="different")(x)
    assert not all(np.array_equal(different[0].numpy(), r.numpy()) for r in different)
    assert set(np.unique(different.numpy())) <= {0.0, 2.0}


# ---------------------------------------------------------------------- errors
def _same_error(ember_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as actual:
        ember_call()
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("case", [
    lambda m, f, x: f.vmap(lambda v: v.item())(x),
    lambda m, f, x: f.vmap(lambda v: bool(v.sum() > 0))(x),
    lambda m, f, x: f.vmap(lambda a, b: a + b)(x, m.zeros(5, 4)),
    lambda m, f, x: f.vmap(lambda a: a, in_dims=(0, 0))(x),
    lambda m, f, x: f.vmap(lambda a: a, in_dims=[0])(x),
    lambda m, f, x: f.vmap(lambda a: a, in_dims=2)(x),
    lambda m, f, x: f.vmap(lambda a: a)(3),
    lambda m, f, x: f.vmap(lambda a: a, in_dims=(None,))(x),
    lambda m, f, x: f.vmap(lambda a: a, out_dims=None)(x),
    lambda m, f, x: f.vmap(lambda a: 3)(x),
    lambda m, f, x: f.vmap(lambda a: m.rand(2) + a)(x),
    lambda m, f, x: f.vmap(lambda a: a, randomness="bad"),
    lambda m, f, x: f.vmap(lambda a: a, chunk_size=0),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).mul_(v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).copy_(v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).__setitem__(slice(None), v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).add_(v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).sub_(v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).pow_(v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).addcmul_(v, v))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4, dtype=x.dtype).lerp_(v, 0.5))(x),
    lambda m, f, x: f.vmap(lambda v: m.zeros(4).clamp_(min=v))(x),
])
def test_errors_match_torch(case):
    x_e, x_t = _pair((3, 4))
    _same_error(lambda: case(ember, ember.func, x_e), lambda: case(torch, tf, x_t))


def test_inplace_on_batched_tensor_writes_the_batch():
    e, t = _pair((3, 4))

    def f(lib):
        def g(v):
            w = v.clone()
            w.mul_(2).add_(1)
            w.copy_(w * v)
            return w
        return g
    np.testing.assert_allclose(vmap(f(ember))(e).numpy(), tf.vmap(f(torch))(t).numpy(),
                               rtol=1e-12)


def test_no_transform_leaves_the_door_closed():
    from ember.func import _state
    vmap(lambda v: v * 2)(ember.ones(2, 2))
    assert _state.depth == 0
    with pytest.raises(RuntimeError):
        vmap(lambda v: v.item())(ember.ones(2, 2))
    assert _state.depth == 0


def test_shape_rules_roll_rot90_pad_diag_embed():
    e, t = _pair((3, 4, 4))

    def f(lib):
        return lambda v: (lib.roll(v, 1, 0) + lib.rot90(v, 1, (0, 1)).t()
                          + lib.nn.functional.pad(v, (1, 1))[:, 1:-1]
                          + lib.diag_embed(v).sum(0) + lib.roll(v, 2).flip(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # roll without dims loops (flattened order)
        got = vmap(f(ember))(e)
    np.testing.assert_allclose(got.numpy(), tf.vmap(f(torch))(t).numpy(), rtol=1e-12)


@pytest.mark.parametrize("case", [
    lambda m, a, b, i, j: a.scatter(0, i, b),
    lambda m, a, b, i, j: a.scatter_add(0, i, b),
    lambda m, a, b, i, j: a.scatter(0, i, 2.0),
    lambda m, a, b, i, j: a.scatter_reduce(0, i, b, "amax"),
    lambda m, a, b, i, j: a.index_add(0, j, b),
    lambda m, a, b, i, j: a.index_copy(0, j, b),
    lambda m, a, b, i, j: a.index_fill(1, j, -1.0),
    lambda m, a, b, i, j: m.zeros(4, 5, dtype=b.dtype).index_add(0, j, b),   # unbatched self
])
def test_scatter_and_index_rules(case):
    a_e, a_t = _pair((3, 4, 5))
    b_e, b_t = _pair((3, 2, 5), 1)
    index = np.array([[0, 1, 2, 3, 0], [3, 2, 1, 0, 1]])
    i_e, i_t, j_e, j_t = (ember.tensor(index), torch.tensor(index), ember.tensor([2, 0]),
                          torch.tensor([2, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vmap(lambda a, b: case(ember, a, b, i_e, j_e))(a_e, b_e)
    want = tf.vmap(lambda a, b: case(torch, a, b, i_t, j_t))(a_t, b_t)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_einsum_rule():
    a_e, a_t = _pair((3, 4, 5))
    b_e, b_t = _pair((5, 2), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vmap(lambda a, b: ember.einsum("ij,jk->ki", a, b), in_dims=(0, None))(a_e, b_e)
        both = vmap(lambda a: ember.einsum("ij,ij->", a, a))(a_e)
    np.testing.assert_allclose(got.numpy(), tf.vmap(lambda a, b: torch.einsum("ij,jk->ki", a, b),
                                                    in_dims=(0, None))(a_t, b_t).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(both.numpy(), (a_t * a_t).sum((1, 2)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda m, a, b, v: m.mm(a, b), lambda m, a, b, v: m.bmm(a[None], b[None]),
    lambda m, a, b, v: m.mv(a, v), lambda m, a, b, v: m.dot(v, v),
    lambda m, a, b, v: m.outer(v, v), lambda m, a, b, v: m.baddbmm(a[None] @ b, a[None], b[None]),
    lambda m, a, b, v: m.addmv(a[:, 0], a, v), lambda m, a, b, v: m.tensordot(a, b, 1),
    lambda m, a, b, v: a[None] + a[:, None, 1:3].sum() + a[..., None].sum(-1),
])
def test_products_and_basic_indexing_run_batched(fn):
    a_e, a_t = _pair((3, 4, 5))
    b_e, b_t = _pair((3, 5, 2), 1)
    v_e, v_t = _pair((3, 5), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vmap(lambda a, b, v: fn(ember, a, b, v))(a_e, b_e, v_e)
    want = tf.vmap(lambda a, b, v: fn(torch, a, b, v))(a_t, b_t, v_t)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", [
    lambda F, a, v: F.layer_norm(a, (5,), v, v), lambda F, a, v: F.layer_norm(a, (5,), v),
    lambda F, a, v: F.layer_norm(a, (5,), None, v),
])
def test_layer_norm_with_batched_weights(fn):
    a_e, a_t = _pair((3, 4, 5))
    v_e, v_t = _pair((3, 5), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vmap(lambda a, v: fn(ember.nn.functional, a, v))(a_e, v_e)
        grads = vmap(ember.func.grad(lambda a, v: fn(ember.nn.functional, a, v).pow(2).sum(),
                                     argnums=1))(a_e, v_e)
    want = tf.vmap(lambda a, v: fn(torch.nn.functional, a, v))(a_t, v_t)
    want_grads = tf.vmap(tf.grad(lambda a, v: fn(torch.nn.functional, a, v).pow(2).sum(),
                                 argnums=1))(a_t, v_t)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads.numpy(), want_grads.numpy(), rtol=1e-10, atol=1e-12)


def test_randomness_same_draws_torchs_numbers_and_list_in_dims():
    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    torch.manual_seed(0)
    ember.manual_seed(0)
    want = tf.vmap(lambda v: v + torch.rand(3) + torch.nn.functional.dropout(v, 0.5),
                   randomness="same")(torch.tensor(x))
    got = vmap(lambda v: v + ember.rand(3) + ember.nn.functional.dropout(v, 0.5),
               randomness="same")(ember.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    kw = dict(in_dims=(0, [0, {"k": None}]))
    got = vmap(lambda a, b: a[0] + b[1]["k"] * b[0], **kw)(
        ember.tensor(x), [ember.tensor(x), {"k": ember.tensor(x[0])}])
    want = tf.vmap(lambda a, b: a[0] + b[1]["k"] * b[0], **kw)(
        torch.tensor(x), [torch.tensor(x), {"k": torch.tensor(x[0])}])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_batched_tensor_repr_matches_torch(capsys):
    vmap(vmap(lambda v: print(repr(v)) or v))(ember.arange(6.).reshape(2, 3))
    ours = capsys.readouterr().out
    tf.vmap(tf.vmap(lambda v: print(repr(v)) or v))(torch.arange(6.).reshape(2, 3))
    assert ours == capsys.readouterr().out


def _setitems(m):
    def row(x, v):
        y = x.clone()
        y[0] = v
        return y

    def block(x, v):
        y = x.clone()
        y[1:3, 2] = 7.0
        return y

    def columns(x, v):
        y = x.clone()
        y[:, m.tensor([0, 3])] = v[:2]
        return y

    def rows(x, v):
        y = x.clone()
        y[m.tensor([2, 0])] = v
        return y

    def last(x, v):
        y = x.clone()
        y[..., 1] = v[:4]
        return y
    return [row, block, columns, rows, last]


@pytest.mark.parametrize("k", range(5))
def test_setitem_under_vmap(k):
    a_e, a_t = _pair((3, 4, 5))
    v_e, v_t = _pair((3, 5), 1)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        got = vmap(_setitems(ember)[k])(a_e, v_e)
    want = tf.vmap(_setitems(torch)[k])(a_t, v_t)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    # per-sample gradients through the assignment
    ge = vmap(ember.func.grad(lambda x, v: _setitems(ember)[k](x, v).sin().sum(),
                             argnums=(0, 1)))(a_e, v_e)
    gt = tf.vmap(tf.grad(lambda x, v: _setitems(torch)[k](x, v).sin().sum(),
                         argnums=(0, 1)))(a_t, v_t)
    for g, w in zip(ge, gt):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)


def test_backward_through_vmap_outputs():
    e, t = _pair((3, 4))
    w_e, w_t = _pair((4, 2), 1)
    for x in (e, t, w_e, w_t):
        x.requires_grad_()
    vmap(lambda r: (r.sin() @ w_e).tanh(), in_dims=0)(e).pow(2).sum().backward()
    tf.vmap(lambda r: (r.sin() @ w_t).tanh(), in_dims=0)(t).pow(2).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(w_e.grad.numpy(), w_t.grad.numpy(), rtol=1e-10)


def test_trace_rule_keeps_dtypes():
    x = np.random.default_rng(6).standard_normal((3, 4, 5))
    for a in (x, (x * 10).astype(np.int32)):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="There is a performance drop")
            got = vmap(ember.trace)(ember.tensor(a))
        want = tf.vmap(torch.trace)(torch.tensor(a))
        assert str(got.dtype).replace("ember", "torch") == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
