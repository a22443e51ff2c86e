"""ember.func's derivative transforms and ember.autograd.forward_ad against real PyTorch:
jacrev/jacfwd/hessian of op-table entries in float64, grad/vjp/jvp/linearize options and
errors, functional_call and stack_module_state, and the tutorials' patterns (per-sample
gradients, Hessian-vector products, jvp of an MLP, batched Jacobians)."""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwd
from checks import to_torch
from ember import func as ef

torch = pytest.importorskip("torch")
tf = torch.func
tfwd = torch.autograd.forward_ad

FAMILIES = ("unary", "arithmetic", "pointwise", "reduction", "views", "shape", "special", "nn")


def _differentiable_samples():
    import importlib
    cases = []
    for family in FAMILIES:
        for info in importlib.import_module(f"op_db.{family}").OPS:
            if not info.grad or "float64" not in info.dtypes:
                continue
            for k, s in enumerate(info.samples(np.random.default_rng(5), "float64")):
                arrays = [a for a in s.args if isinstance(a, np.ndarray)]
                first = next((i for i, a in enumerate(s.args) if isinstance(a, np.ndarray)
                              and a.dtype == np.float64), None)
                if first is None or not 0 < s.args[first].size <= 12 or \
                        sum(a.size for a in arrays) > 30:
                    continue
                cases.append(pytest.param(info, s, first, id=f"{info.name}-{k}"))
                break
    return cases


CASES = _differentiable_samples()


def _as_function(lib, info, sample, position):
    def f(x):
        args = [to_torch(torch, a) if lib is torch else (ember.tensor(a) if isinstance(
            a, np.ndarray) else a) for a in sample.args]
        args[position] = x
        out = info.torch_call(torch, *args, **sample.kwargs) if lib is torch else \
            info.op(ember, *args, **sample.kwargs)
        return out[0] if isinstance(out, tuple) else out
    return f


def _close(a, b, rtol=1e-9, atol=1e-10):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("info,sample,position", CASES)
def test_jacobians_of_op_table_match_torch(info, sample, position):
    x = sample.args[position]
    fe = _as_function(ember, info, sample, position)
    ft = _as_function(torch, info, sample, position)
    try:
        expected = tf.jacrev(ft)(torch.tensor(x))
    except RuntimeError:
        pytest.skip("torch has no derivative for this sample")   # (not ember's subject)
    _close(ef.jacrev(fe)(ember.tensor(x)), expected)
    _close(ef.jacfwd(fe)(ember.tensor(x)), expected)


HESSIAN_OPS = {"exp", "sin", "tanh", "sigmoid", "log1p", "mul", "div", "pow", "sum", "mean",
               "softmax", "log_softmax", "atan2", "prod", "norm", "logsumexp", "matmul"}


@pytest.mark.parametrize("info,sample,position",
                         [c for c in CASES if c.values[0].name in HESSIAN_OPS])
def test_hessians_of_op_table_match_torch(info, sample, position):
    x = sample.args[position]
    fe = _as_function(ember, info, sample, position)
    ft = _as_function(torch, info, sample, position)
    expected = tf.hessian(lambda v: ft(v).sum())(torch.tensor(x))
    _close(ef.hessian(lambda v: fe(v).sum())(ember.tensor(x)), expected, rtol=1e-8)


# ---------------------------------------------------------------------- grad and friends
def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a), torch.tensor(a)


def test_grad_argnums_has_aux_and_value():
    (xe, xt), (ye, yt) = _pair((3,)), _pair((3,), 1)

    def f(x, y):
        return (x.sin() * y).sum(), {"aux": x.cos()}
    for argnums in (0, 1, (0, 1), -1):
        ge = ef.grad_and_value(f, argnums=argnums, has_aux=True)(xe, ye)
        gt = tf.grad_and_value(f, argnums=argnums, has_aux=True)(xt, yt)
        for a, b in zip(ge[0] if isinstance(argnums, tuple) else (ge[0],),
                        gt[0] if isinstance(argnums, tuple) else (gt[0],)):
            _close(a, b)
        _close(ge[1][0], gt[1][0])
        _close(ge[1][1]["aux"], gt[1][1]["aux"])
    g = ef.grad(lambda x: (x * x).sum())(xe)
    assert not g.requires_grad            # as torch.func at top level
    g = ef.grad(lambda x: (x * x).sum())(xe.clone().requires_grad_())
    assert g.requires_grad == tf.grad(lambda x: (x * x).sum())(
        xt.clone().requires_grad_()).requires_grad


def test_grad_of_grad_and_pytree_inputs():
    (xe, xt) = _pair((4,))
    ge = ef.grad(lambda x: ef.grad(lambda y: (y.sin() * y).sum())(x).exp().sum())(xe)
    gt = tf.grad(lambda x: tf.grad(lambda y: (y.sin() * y).sum())(x).exp().sum())(xt)
    _close(ge, gt)
    de = ef.grad(lambda p: (p["w"] * p["b"][0]).sum())({"w": xe, "b": [xe * 2]})
    dt = tf.grad(lambda p: (p["w"] * p["b"][0]).sum())({"w": xt, "b": [xt * 2]})
    _close(de["w"], dt["w"])
    _close(de["b"][0], dt["b"][0])


def test_vjp_jvp_linearize_match_torch():
    (xe, xt), (ve, vt) = _pair((3,)), _pair((3,), 1)

    def f(x):
        return x.exp() * x.sum(), x.tanh()
    oe, fe, ae = ef.vjp(lambda x: (f(x), x.sum()), xe, has_aux=True)
    ot, ft, at = tf.vjp(lambda x: (f(x), x.sum()), xt, has_aux=True)
    _close(fe((ve, ve))[0], ft((vt, vt))[0])
    _close(ae, at)
    pe, te = ef.jvp(f, (xe,), (ve,))
    pt, tt = tf.jvp(f, (xt,), (vt,))
    for a, b in zip(pe + te, pt + tt):
        _close(a, b)
    le, jfe = ef.linearize(lambda x: x.sin() @ x, xe)
    lt, jft = tf.linearize(lambda x: x.sin() @ x, xt)
    _close(le, lt)
    _close(jfe(ve), jft(vt))
    _close(jfe(xe), jft(xt))


def _same_error(ember_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as actual:
        ember_call()
    assert str(actual.value) == str(expected.value).replace("torch.Size", "ember.Size")


@pytest.mark.parametrize("case", [
    lambda m, f, x: f.grad(lambda a: a.sum(), argnums=())(x),
    lambda m, f, x: f.grad(lambda a: a.sum(), argnums=1.0)(x),
    lambda m, f, x: f.grad(lambda a: a.sum(), argnums=1)(x),
    lambda m, f, x: f.grad(lambda a: a.sum(), has_aux=True)(x),
    lambda m, f, x: f.grad(lambda a: 3)(x),
    lambda m, f, x: f.grad(lambda a: a)(x),
    lambda m, f, x: f.grad(lambda a: a.sum())(3),
    lambda m, f, x: f.vjp(lambda a: a, 3),
    lambda m, f, x: f.jvp(lambda a: a, (x,), (m.zeros(4),)),
    lambda m, f, x: f.jvp(lambda a: a, x, (x,)),
    lambda m, f, x: f.vjp(lambda a: a * 2, x)[1](m.ones(4)),
    lambda m, f, x: f.vjp(lambda a: a * 2, x)[1]((m.ones(3),)),
    lambda m, f, x: f.stack_module_state([]),
])
def test_errors_match_torch(case):
    xe, xt = _pair((3,))
    _same_error(lambda: case(ember, ef, xe), lambda: case(torch, tf, xt))


# ---------------------------------------------------------------------- modules
def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.Tanh(), lib.nn.Linear(7, 3)).double()


def test_per_sample_gradients_tutorial():
    xn = np.random.default_rng(1).standard_normal((6, 5))
    yn = np.random.default_rng(2).integers(0, 3, 6)
    grads = []
    for lib, fn in ((ember, ef), (torch, tf)):
        model = _mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = fn.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        grads.append(fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(xn), lib.tensor(yn)))
    assert grads[0].keys() == grads[1].keys()
    for k in grads[1]:
        _close(grads[0][k], grads[1][k])


def test_hessian_vector_products_and_batched_jacobians():
    (xe, xt), (ve, vt) = _pair((4,)), _pair((4,), 1)

    def f(x):
        return (x.sin() * x.exp()).sum()
    hvp_fwd = ef.jvp(ef.grad(f), (xe,), (ve,))[1]                 # forward-over-reverse
    hvp_rev = ef.vjp(ef.grad(f), xe)[1](ve)[0]                    # reverse-over-reverse
    expected = tf.jvp(tf.grad(f), (xt,), (vt,))[1]
    _close(hvp_fwd, expected)
    _close(hvp_rev, expected)
    be, bt = _pair((3, 5))
    me, mt = _mlp(ember), _mlp(torch)
    _close(ef.vmap(ef.jacrev(me))(be), tf.vmap(tf.jacrev(mt))(bt))
    _close(ef.vmap(ef.jacfwd(me))(be), tf.vmap(tf.jacfwd(mt))(bt))
    pe = {k: v.detach() for k, v in me.named_parameters()}
    pt = {k: v.detach() for k, v in mt.named_parameters()}
    he = ef.hessian(lambda p: ef.functional_call(me, p, (be,)).pow(2).sum())(pe)
    ht = tf.hessian(lambda p: tf.functional_call(mt, p, (bt,)).pow(2).sum())(pt)
    for a in ht:
        for b in ht[a]:
            _close(he[a][b], ht[a][b], rtol=1e-8)


def test_jvp_of_an_mlp():
    me, mt = _mlp(ember), _mlp(torch)
    (xe, xt), (ve, vt) = _pair((2, 5)), _pair((2, 5), 1)
    oe, te = ef.jvp(me, (xe,), (ve,))
    ot, tt = tf.jvp(mt, (xt,), (vt,))
    _close(oe, ot)
    _close(te, tt)


def test_functional_call_strict_tied_buffers_and_restore():
    def model(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 3))
        m[2].weight = m[0].weight
        return m.double()
    me, mt = model(ember), model(torch)
    (xe, xt), (we, wt) = _pair((4, 3)), _pair((3, 3), 1)
    oe = ef.functional_call(me, {"0.weight": we}, xe)
    ot = tf.functional_call(mt, {"0.weight": wt}, xt)
    _close(oe, ot)
    oe = ef.functional_call(me, {"0.weight": we}, (xe,), tie_weights=False)
    ot = tf.functional_call(mt, {"0.weight": wt}, (xt,), tie_weights=False)
    _close(oe, ot)
    _close(me[1].running_mean, mt[1].running_mean)
    _close(me[0].weight, mt[0].weight)                 # the originals are back
    buffers = ({"1.running_mean": ember.zeros(3, dtype=ember.float64)},
               {"1.running_mean": torch.zeros(3, dtype=torch.float64)})
    _same_error(lambda: ef.functional_call(me, {"foo": we, **buffers[0]}, (xe,), strict=True),
                lambda: tf.functional_call(mt, {"foo": wt, **buffers[1]}, (xt,), strict=True))
    with pytest.raises(RuntimeError):
        ef.functional_call(me, {"0.weight": ember.zeros(2, 2, dtype=ember.float64)}, (xe,))
    assert me[0].weight.shape == (3, 3)


def test_stack_module_state_values():
    def models(lib):
        lib.manual_seed(0)
        return [lib.nn.Linear(2, 3) for _ in range(3)]
    pe, be = ef.stack_module_state(models(ember))
    pt, bt = tf.stack_module_state(models(torch))
    assert pe.keys() == pt.keys() and be.keys() == bt.keys()
    for k in pt:
        _close(pe[k], pt[k])
        assert pe[k].requires_grad and pe[k].is_leaf


# ---------------------------------------------------------------------- forward_ad
@pytest.mark.parametrize("fn", [
    lambda m, d: (d.sin() * d).sum(),
    lambda m, d: d.exp() / (d.cos() + 2),
    lambda m, d: m.tanh(d) @ m.sigmoid(d),
    lambda m, d: m.relu(d).sqrt().log1p(),
    lambda m, d: m.softmax(d, 0).cumprod(0),
    lambda m, d: m.nn.functional.gelu(d.view(2, 2)).t().reshape(4),
    lambda m, d: m.cat([d, d * 3]).max(0)[0],
    lambda m, d: m.nn.functional.layer_norm(d, (4,)),
])
def test_forward_ad_tangents_match_torch(fn):
    (xe, xt), (te, tt) = _pair((4,)), _pair((4,), 1)
    xe, xt = xe.abs() + 0.5, xt.abs() + 0.5
    with fwd.dual_level():
        oe = fwd.unpack_dual(fn(ember, fwd.make_dual(xe, te)))
    with tfwd.dual_level():
        ot = tfwd.unpack_dual(fn(torch, tfwd.make_dual(xt, tt)))
    _close(oe.primal, ot.primal)
    _close(oe.tangent, ot.tangent)


def test_forward_ad_api_and_errors():
    (xe, xt), (te, tt) = _pair((3,)), _pair((3,), 1)
    _same_error(lambda: fwd.make_dual(xe, te), lambda: tfwd.make_dual(xt, tt))
    _same_error(lambda: fwd.exit_dual_level(), lambda: tfwd.exit_dual_level())
    with fwd.dual_level() as level, tfwd.dual_level() as tlevel:
        assert level == tlevel == 0
        _same_error(lambda: fwd.make_dual(xe, ember.zeros(4)),
                    lambda: tfwd.make_dual(xt, torch.zeros(4)))
        _same_error(fwd.enter_dual_level, tfwd.enter_dual_level)
        d = fwd.make_dual(xe, te)
        unpacked = fwd.unpack_dual(d)
        assert type(unpacked).__name__ == "UnpackedDualTensor"
        assert unpacked._fields == tfwd.unpack_dual(tfwd.make_dual(xt, tt))._fields
        assert fwd.unpack_dual(xe).tangent is None
        d.mul_(2)                                        # in place: the tangent follows
        _close(fwd.unpack_dual(d).tangent, tt * 2)
    assert fwd.unpack_dual(d).tangent is None             # the level is closed


def test_replace_all_batch_norm_modules_and_debug_unwrap():
    states = []
    for lib, fn in ((ember, ef), (torch, tf)):
        m = lib.nn.Sequential(lib.nn.BatchNorm2d(3), lib.nn.Linear(2, 2),
                              lib.nn.BatchNorm1d(2, track_running_stats=False))
        assert fn.replace_all_batch_norm_modules_(m) is m
        states.append([(b.running_mean, b.running_var, b.num_batches_tracked,
                        b.track_running_stats, sorted(dict(b.named_buffers())))
                       for b in (m[0], m[2])])
        x = lib.ones(2, 3)
        assert tuple(fn.vmap(lambda v: fn.debug_unwrap(v))(x).shape) == (2, 2, 3)
        assert fn.debug_unwrap(x) is x
    assert states[0] == states[1]


def test_captured_parameters_keep_their_graph():
    """Derivatives of a function that captured tensors requiring grad stay differentiable
    with respect to them (torch.func's levels), and only then."""
    (xe, xt), (we, wt) = _pair((3,)), _pair((3,), 1)
    we.requires_grad_()
    wt.requires_grad_()
    ge = ef.grad(lambda v: (v * we).sin().sum())(xe)
    gt = tf.grad(lambda v: (v * wt).sin().sum())(xt)
    assert ge.requires_grad and gt.requires_grad
    ge.sum().backward()
    gt.sum().backward()
    _close(we.grad, wt.grad)
    me, mt = _mlp(ember), _mlp(torch)
    je, jt = ef.jacrev(me)(xe.new_ones(5)), tf.jacrev(mt)(xt.new_ones(5))
    assert je.requires_grad == jt.requires_grad
    assert not ef.jacrev(lambda v: v.sin())(xe).requires_grad


def test_jacobians_of_a_cnn_batch_the_convolution_backward():
    import warnings

    def cnn(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(
            lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
            lib.nn.Conv2d(3, 2, 3), lib.nn.AvgPool2d(2), lib.nn.Flatten(),
            lib.nn.Linear(2, 2)).double()
    me, mt = cnn(ember), cnn(torch)
    xe, xt = _pair((2, 2, 8, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # every op on the way has a batching rule
        je = ef.jacrev(me)(xe)
        pe = {k: v.detach() for k, v in me.named_parameters()}
        jpe = ef.jacrev(lambda p: ef.functional_call(me, p, (xe,)))(pe)
    _close(je, tf.jacrev(mt)(xt))
    pt = {k: v.detach() for k, v in mt.named_parameters()}
    jpt = tf.jacrev(lambda p: tf.functional_call(mt, p, (xt,)))(pt)
    for k in jpt:
        _close(jpe[k], jpt[k])


def test_transforms_ignore_an_enclosing_no_grad():
    (xe, xt), (te, tt) = _pair((3,)), _pair((3,), 1)
    with ember.no_grad(), torch.no_grad():
        _close(ef.grad(lambda v: v.sin().sum())(xe), tf.grad(lambda v: v.sin().sum())(xt))
        _close(ef.jvp(lambda v: v.exp(), (xe,), (te,))[1],
               tf.jvp(lambda v: v.exp(), (xt,), (tt,))[1])
        with fwd.dual_level(), tfwd.dual_level():
            oe = fwd.unpack_dual(ember.nn.functional.layer_norm(fwd.make_dual(xe, te), (3,)))
            ot = tfwd.unpack_dual(torch.nn.functional.layer_norm(tfwd.make_dual(xt, tt), (3,)))
    _close(oe.tangent, ot.tangent)
    # a no_grad inside the function holds
    _close(ef.grad(lambda v: v.sum() + ember.no_grad()(lambda: (v * v).sum())())(xe),
           tf.grad(lambda v: v.sum() + torch.no_grad()(lambda: (v * v).sum())())(xt))


@pytest.mark.parametrize("module,name", [
    (m, n) for m in ("func",) for n in (
        "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
        "linearize", "functional_call", "stack_module_state",
        "replace_all_batch_norm_modules_", "debug_unwrap")] + [
    ("forward_ad", n) for n in ("make_dual", "unpack_dual", "enter_dual_level",
                                "exit_dual_level")])
def test_signatures_match_torch(module, name):
    import inspect
    ours = ef if module == "func" else fwd
    theirs = tf if module == "func" else tfwd

    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    assert params(getattr(ours, name)) == params(getattr(theirs, name))
    assert ember.vmap is ef.vmap


def test_grad_of_vmap_and_vmap_of_vjp():
    (xe, xt), (we, wt) = _pair((4, 3)), _pair((3,), 1)

    def f(lib, fn):
        return lambda x, w: fn.vmap(lambda r: (r.sin() * w).sum() ** 2)(x).sum()
    for argnums in (0, 1, (0, 1)):
        ge = ef.grad(f(ember, ef), argnums=argnums)(xe, we)
        gt = tf.grad(f(torch, tf), argnums=argnums)(xt, wt)
        for a, b in zip(ge if isinstance(argnums, tuple) else (ge,),
                        gt if isinstance(argnums, tuple) else (gt,)):
            _close(a, b)
    ve = ef.vmap(lambda r, c: ef.vjp(lambda v: v.exp() * we, r)[1](c)[0])(xe, xe * 2)
    vt = tf.vmap(lambda r, c: tf.vjp(lambda v: v.exp() * wt, r)[1](c)[0])(xt, xt * 2)
    _close(ve, vt)
    je = ef.jacrev(lambda x: ef.vmap(lambda r: r.tanh() * r.sum())(x))(xe)
    jt = tf.jacrev(lambda x: tf.vmap(lambda r: r.tanh() * r.sum())(x))(xt)
    _close(je, jt)


def test_reverse_mode_through_dual_tensors():
    (xe, xt), (te, tt) = _pair((3,)), _pair((3,), 1)
    xe.requires_grad_()
    xt.requires_grad_()
    with fwd.dual_level(), tfwd.dual_level():
        ye = (fwd.make_dual(xe, te).sin() * 3).sum()
        yt = (tfwd.make_dual(xt, tt).sin() * 3).sum()
        _close(fwd.unpack_dual(ye).tangent, tfwd.unpack_dual(yt).tangent)
        ye.backward()
        yt.backward()
    _close(xe.grad, xt.grad)


def test_jacrev_chunk_size_and_functional_call_duplicate_keys():
    xe, xt = _pair((5,))
    _close(ef.jacrev(lambda v: v.sin() * v.sum(), chunk_size=2)(xe),
           tf.jacrev(lambda v: v.sin() * v.sum(), chunk_size=2)(xt))
    me, mt = _mlp(ember), _mlp(torch)
    we, wt = me[0].weight.detach(), mt[0].weight.detach()
    _same_error(lambda: ef.functional_call(me, ({"0.weight": we}, {"0.weight": we}), (xe,)),
                lambda: tf.functional_call(mt, ({"0.weight": wt}, {"0.weight": wt}), (xt,)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_jacobian_and_hessian_without_loops(reduction, weighted):
    import warnings
    x = np.random.default_rng(4).standard_normal((4, 5))
    t, w = np.array([0, 4, 2, 2]), np.random.default_rng(5).random(5)

    def loss(lib):
        kw = dict(weight=lib.tensor(w) if weighted else None, reduction=reduction,
                  ignore_index=2)
        return lambda v: lib.nn.functional.cross_entropy(v, lib.tensor(t), **kw)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        je = ef.jacrev(loss(ember))(ember.tensor(x))
        he = ef.hessian(lambda v: loss(ember)(v).sum())(ember.tensor(x))
    _close(je, tf.jacrev(loss(torch))(torch.tensor(x)))
    _close(he, tf.jacrev(tf.jacrev(lambda v: loss(torch)(v).sum()))(torch.tensor(x)))


def test_fft_under_vmap():
    e, t = _pair((3, 8))
    got = ef.vmap(lambda v: ember.fft.rfft(v).abs() + ember.fft.fft(v).real[:5])(e)
    want = tf.vmap(lambda v: torch.fft.rfft(v).abs() + torch.fft.fft(v).real[:5])(t)
    _close(got, want)
    _close(ef.vmap(lambda v: ember.fft.irfft(ember.fft.rfft(v)))(e), t)


def test_dual_tensor_repr_matches_torch():
    texts = []
    for lib, f in ((ember, fwd), (torch, tfwd)):
        with f.dual_level():
            texts.append([repr(f.make_dual(p, t)).replace("torch.", "ember.") for p, t in (
                (lib.arange(3.), lib.ones(3)),
                (lib.arange(3.).double(), lib.ones(3).double()),
                (lib.arange(12.).reshape(3, 4), lib.ones(3, 4)))])
    assert texts[0] == texts[1]


@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="bilinear"),
                                dict(size=(7, 3), mode="nearest"),
                                dict(scale_factor=2, mode="bicubic", align_corners=True)])
def test_interpolate_under_vmap_and_jacrev(kw):
    import warnings
    xe, xt = _pair((3, 2, 2, 5, 5))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        got = ef.vmap(lambda v: ember.nn.functional.interpolate(v, **kw))(xe)
        jac = ef.jacrev(lambda v: ember.nn.functional.interpolate(v, **kw).sum(0).sin())(xe[0])
    _close(got, tf.vmap(lambda v: torch.nn.functional.interpolate(v, **kw))(xt))
    _close(jac, tf.jacrev(lambda v: torch.nn.functional.interpolate(v, **kw).sum(0).sin())(
        xt[0]))
