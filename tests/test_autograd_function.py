"""autograd.Function, autograd.functional, gradcheck/gradgradcheck and anomaly mode, each
checked against real torch running the same code (or finite differences)."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close
from test_autograd import both_raise, pair


def functions(lib):
    """The same custom Functions written for ember and for torch."""
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x * x * ctx.k, None

    class TwoOut(F):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, ga, gb):
            a, b = ctx.saved_tensors
            return ga * b + gb, ga * a + gb

    class Materialize(F):
        @staticmethod
        def forward(ctx, a, materialize):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0), None

    class Dirty(F):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NonDiff(F):
        @staticmethod
        def forward(ctx, a):
            b = a * 2
            ctx.mark_non_differentiable(b)
            return b, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g2 * 3

    class Setup(F):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class WrongCount(F):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    class WrongShape(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(5, dtype=g.dtype)

    return dict(Cube=Cube, TwoOut=TwoOut, Materialize=Materialize, Dirty=Dirty,
                NonDiff=NonDiff, Setup=Setup, Once=Once, WrongCount=WrongCount,
                WrongShape=WrongShape)


@pytest.fixture
def fns(torch_mod):
    return functions(ember), functions(torch_mod)


@pytest.fixture
def x64(rng):
    return rng.standard_normal(4), rng.standard_normal(4)


def test_function_values_grads_and_node(torch_mod, fns, x64):
    (ea, eb), (ta, tb) = pair(torch_mod, *x64)
    ey = fns[0]["Cube"].apply(ea, 2.0)
    ty = fns[1]["Cube"].apply(ta, 2.0)
    assert_close(ey, ty.detach().numpy())
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__ == "CubeBackward"
    assert ey.grad_fn.name() == ty.grad_fn.name()
    assert ey.grad_fn.next_functions[0][0].variable is ea
    assert ey.grad_fn.needs_input_grad == ty.grad_fn.needs_input_grad == (True, False)
    assert ey.grad_fn.k == 2.0  # ctx and grad_fn are the same object
    ey.sum().backward()
    ty.sum().backward()
    assert_close(ea.grad, ta.grad.numpy())
    both_raise(lambda: ty.grad_fn.saved_tensors, lambda: ey.grad_fn.saved_tensors)


def test_function_multiple_outputs_and_double_backward(torch_mod, fns, x64):
    (ea, eb), (ta, tb) = pair(torch_mod, *x64)
    res = []
    for lib, f, a, b in ((ember, fns[0], ea, eb), (torch_mod, fns[1], ta, tb)):
        p, s = f["TwoOut"].apply(a, b)
        loss = (p * s).sum()
        ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
        h, = lib.autograd.grad((ga * gb).sum(), a)
        res.append((ga, gb, h))
    for e, t in zip(*res):
        assert_close(e, t.detach().numpy())


def test_function_unused_output_and_materialize(torch_mod, fns, x64):
    for materialize in (True, False):
        seen = []
        for f, lib in ((fns[0], ember), (fns[1], torch_mod)):
            a = lib.tensor(x64[0], requires_grad=True)
            o1, o2 = f["Materialize"].apply(a, materialize)
            o1.sum().backward()
            seen.append((o1.grad_fn.seen, a.grad))
        assert seen[0][0] == seen[1][0]
        assert_close(seen[0][1], seen[1][1].numpy())


def test_function_mark_dirty_and_non_differentiable(torch_mod, fns, x64):
    res = []
    for f, lib in ((fns[0], ember), (fns[1], torch_mod)):
        a = lib.tensor(x64[0], requires_grad=True)
        y = a * 1
        z = f["Dirty"].apply(y)
        assert z is y and type(z.grad_fn).__name__ == "DirtyBackward"
        z.sum().backward()
        b, c = f["NonDiff"].apply(a)
        assert not b.requires_grad and c.requires_grad
        c.sum().backward()
        res.append(a.grad)
    assert_close(res[0], res[1].numpy())
    both_raise(lambda: fns[1]["Dirty"].apply(torch_mod.ones(2, requires_grad=True)),
               lambda: fns[0]["Dirty"].apply(ember.ones(2, requires_grad=True)))


def test_function_setup_context_style(torch_mod, fns, x64):
    (ea, eb), (ta, tb) = pair(torch_mod, *x64)
    fns[0]["Setup"].apply(ea, eb).sum().backward()
    fns[1]["Setup"].apply(ta, tb).sum().backward()
    assert_close(ea.grad, ta.grad.numpy())
    assert_close(eb.grad, tb.grad.numpy())


def test_function_forward_runs_without_grad(fns):
    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mode = ember.is_grad_enabled()
            ctx.needs = ctx.needs_input_grad
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g

    y = Probe.apply(ember.ones(2, requires_grad=True))
    assert y.grad_fn.mode is False and y.grad_fn.needs == (True,)
    with ember.no_grad():
        assert not Probe.apply(ember.ones(2, requires_grad=True)).requires_grad
    assert not Probe.apply(ember.ones(2)).requires_grad


def test_once_differentiable(torch_mod, fns, x64):
    msgs = []
    for f, lib in ((fns[0], ember), (fns[1], torch_mod)):
        a = lib.tensor(x64[0], requires_grad=True)
        g, = lib.autograd.grad(f["Once"].apply(a).sum(), a)
        assert_close(g, 2 * x64[0])
        cot = lib.ones(4, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(f["Once"].apply(a), a, cot, create_graph=True)
        with pytest.raises(RuntimeError) as err:
            g.sum().backward()
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_function_backward_errors(torch_mod, fns):
    e, t = fns
    both_raise(lambda: t["WrongCount"].apply(torch_mod.ones(2, requires_grad=True),
                                             torch_mod.ones(2)).sum().backward(),
               lambda: e["WrongCount"].apply(ember.ones(2, requires_grad=True),
                                             ember.ones(2)).sum().backward())
    both_raise(lambda: t["WrongShape"].apply(torch_mod.ones(2, requires_grad=True))
               .sum().backward(),
               lambda: e["WrongShape"].apply(ember.ones(2, requires_grad=True))
               .sum().backward())


def test_function_saved_tensor_modified_in_place(torch_mod, fns):
    def run(lib, f):
        a = lib.ones(3, requires_grad=True)
        y = a * 1
        z = f["Cube"].apply(y, 1.0)
        y.add_(1)
        return z
    ez, tz = run(ember, fns[0]), run(torch_mod, fns[1])
    both_raise(lambda: tz.sum().backward(), lambda: ez.sum().backward())


def test_function_instantiation_is_deprecated(torch_mod, fns):
    with pytest.warns(DeprecationWarning):
        obj = fns[0]["Cube"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tobj = fns[1]["Cube"]()
    both_raise(lambda: tobj(torch_mod.ones(1)), lambda: obj(ember.ones(1)))


# ---------------------------------------------------------------------- functional
def _fn_pair(torch_mod):
    def f(lib):
        def single(a):
            return a * a * a - a
        def multi(a, b):
            return (a * b, (a * a).sum() + b.sum() * 2)
        def scalar(a, b):
            return (a * a * b + b * b * b).sum()
        return single, multi, scalar
    return f(ember), f(torch_mod)


def _compare(e, t):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            _compare(a, b)
    else:
        assert tuple(e.shape) == tuple(t.shape)
        assert e.requires_grad == t.requires_grad
        assert_close(e, t.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("create_graph", [False, True])
def test_functional_matches_torch(torch_mod, x64, create_graph):
    (es, em, ec), (ts, tm, tc) = _fn_pair(torch_mod)
    (ea, eb), (ta, tb) = pair(torch_mod, *x64)
    (ev,), (tv,) = pair(torch_mod, np.linspace(-1, 1, 4), requires_grad=False)
    E, T = ember.autograd.functional, torch_mod.autograd.functional
    kw = dict(create_graph=create_graph)
    _compare(E.jacobian(es, ea, **kw), T.jacobian(ts, ta, **kw))
    _compare(E.jacobian(em, (ea, eb), **kw), T.jacobian(tm, (ta, tb), **kw))
    _compare(E.jacobian(em, (ea, eb), vectorize=True), T.jacobian(tm, (ta, tb), vectorize=True))
    _compare(E.hessian(ec, (ea, eb), **kw), T.hessian(tc, (ta, tb), **kw))
    _compare(E.hessian(lambda a: es(a).sum(), ea), T.hessian(lambda a: ts(a).sum(), ta))
    _compare(E.vjp(es, ea, ev, **kw), T.vjp(ts, ta, tv, **kw))
    _compare(E.jvp(es, ea, ev, **kw), T.jvp(ts, ta, tv, **kw))
    _compare(E.jvp(em, (ea, eb), (ev, ev), **kw), T.jvp(tm, (ta, tb), (tv, tv), **kw))
    _compare(E.hvp(ec, (ea, eb), (ev, ev), **kw), T.hvp(tc, (ta, tb), (tv, tv), **kw))
    _compare(E.vhp(ec, (ea, eb), (ev, ev), **kw), T.vhp(tc, (ta, tb), (tv, tv), **kw))


def test_functional_unused_input_and_strict(torch_mod, x64):
    (ea, eb), (ta, tb) = pair(torch_mod, *x64)
    E, T = ember.autograd.functional, torch_mod.autograd.functional
    _compare(E.jacobian(lambda a, b: a * 2, (ea, eb)), T.jacobian(lambda a, b: a * 2, (ta, tb)))
    both_raise(lambda: T.jacobian(lambda a, b: a * 2, (ta, tb), strict=True),
               lambda: E.jacobian(lambda a, b: a * 2, (ea, eb), strict=True))
    both_raise(lambda: T.vjp(lambda a: a * 2, ta), lambda: E.vjp(lambda a: a * 2, ea))
    both_raise(lambda: T.vjp(lambda a: a * 2, [ta]), lambda: E.vjp(lambda a: a * 2, [ea]),
               TypeError)


# ---------------------------------------------------------------------- gradcheck
def test_gradcheck_passes_and_fails(fns, x64):
    a = ember.tensor(x64[0], requires_grad=True)
    b = ember.tensor(x64[1], requires_grad=True)
    assert ember.autograd.gradcheck(fns[0]["TwoOut"].apply, (a, b)) is True
    assert ember.autograd.gradcheck(lambda u: fns[0]["Cube"].apply(u, 1.5), (a,),
                                    fast_mode=True) is True
    assert ember.autograd.gradgradcheck(fns[0]["TwoOut"].apply, (a, b)) is True

    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 2.01

    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                           "input 0"):
        ember.autograd.gradcheck(Wrong.apply, (a,))
    assert ember.autograd.gradcheck(Wrong.apply, (a,), raise_exception=False) is False
    assert ember.autograd.gradcheck(Wrong.apply, (a,), fast_mode=True,
                                    raise_exception=False) is False
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        ember.autograd.gradcheck(Wrong.apply, (ember.ones(2, dtype=ember.float64),))
    with pytest.warns(UserWarning, match="not a double precision"):
        ember.autograd.gradcheck(lambda u: u * 2, (ember.ones(2, requires_grad=True),),
                                 atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradgradcheck_catches_wrong_double_backward(x64):
    class DetachedBackward(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * (x * x).detach()  # first derivative right, second wrong

    a = ember.tensor(x64[0], requires_grad=True)
    assert ember.autograd.gradcheck(DetachedBackward.apply, (a,))
    assert ember.autograd.gradgradcheck(DetachedBackward.apply, (a,),
                                        raise_exception=False) is False


# ---------------------------------------------------------------------- anomaly mode
def test_detect_anomaly_names_op_and_forward_line(torch_mod):
    msgs, warned = [], []
    for lib in (ember, torch_mod):
        x = lib.zeros(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = x / x  # the forward line anomaly mode must point at
                with pytest.raises(RuntimeError) as err:
                    y.sum().backward()
        msgs.append(str(err.value))
        warned.append([str(m.message) for m in w])
    assert msgs[0] == msgs[1] == "Function 'DivBackward0' returned nan values in its 1th output."
    for texts in warned:
        assert any(t.startswith("Anomaly Detection has been enabled.") for t in texts)
        trace = [t for t in texts if t.startswith("Error detected in DivBackward0. Traceback "
                                                  "of forward call that caused the error:")]
        assert trace and "y = x / x  # the forward line" in trace[0]
        assert "test_autograd_function.py" in trace[0]
    assert not ember.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_restores_and_check_nan(torch_mod):
    with ember.autograd.set_detect_anomaly(True, check_nan=False):
        assert ember.autograd.is_anomaly_enabled()
        x = ember.zeros(3, requires_grad=True)
        (x / x).sum().backward()  # check_nan=False: NaN passes silently, as in torch
    assert not ember.autograd.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(True)
    try:
        assert ember.autograd.is_anomaly_enabled()
    finally:
        ember.autograd.set_detect_anomaly(False)


def test_anomaly_reports_forward_of_failing_function():
    class Boom(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = Boom.apply(x)  # the line to report
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    text = "\n".join(str(m.message) for m in w)
    assert "Error detected in BoomBackward" in text and "y = Boom.apply(x)" in text
