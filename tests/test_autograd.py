"""The autograd engine: backward/grad, accumulation, graph structure, hooks, grad modes,
version counters and PyTorch's errors, each checked against real torch on the same graph."""
import gc
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close


def pair(torch, *arrays, requires_grad=True):
    """The same float arrays as ember and torch leaves."""
    e = [ember.tensor(a).requires_grad_(requires_grad) for a in arrays]
    t = [torch.tensor(a).requires_grad_(requires_grad) for a in arrays]
    return e, t


def both_raise(torch_fn, ember_fn, exc=RuntimeError):
    with pytest.raises(exc) as t_err:
        torch_fn()
    with pytest.raises(exc) as e_err:
        ember_fn()
    assert str(e_err.value) == str(t_err.value)
    return str(e_err.value)


def graph_names(fn, depth=0):
    """grad_fn structure as nested (name, children) tuples."""
    if fn is None:
        return None
    return (type(fn).__name__ if fn.name().startswith("torch::") else fn.name(),
            tuple(graph_names(n) for n, _ in fn.next_functions))


def f_poly(a, b):
    return ((a * b + a) / (b * b + 1.5) - b).sum()


@pytest.fixture
def data(rng):
    return rng.standard_normal((2, 3)), rng.standard_normal((2, 3))


# ---------------------------------------------------------------------- requires_grad
def test_requires_grad_flags(torch_mod):
    e = ember.zeros(3, requires_grad=True)
    assert e.requires_grad and e.is_leaf and e.grad_fn is None
    e.requires_grad = False
    assert not e.requires_grad
    assert e.requires_grad_() is e and e.requires_grad
    assert ember.ones(2).requires_grad is False
    both_raise(lambda: torch_mod.zeros(3, dtype=torch_mod.int64).requires_grad_(),
               lambda: ember.zeros(3, dtype=ember.int64).requires_grad_())
    with pytest.raises(RuntimeError, match="floating point and complex dtype"):
        ember.zeros(3, dtype=ember.int64, requires_grad=True)
    t = torch_mod.ones(3, requires_grad=True) * 2
    y = ember.ones(3, requires_grad=True) * 2
    both_raise(lambda: t.requires_grad_(False), lambda: y.requires_grad_(False))


def test_integer_results_do_not_require_grad():
    x = ember.ones(3, requires_grad=True)
    assert not (x > 0).requires_grad
    assert not x.to(ember.int64).requires_grad


# ---------------------------------------------------------------------- backward / grad
def test_backward_matches_torch(torch_mod, data):
    (ea, eb), (ta, tb) = pair(torch_mod, *data)
    f_poly(ea, eb).backward()
    f_poly(ta, tb).backward()
    assert_close(ea.grad, ta.grad.numpy(), atol=1e-12)
    assert_close(eb.grad, tb.grad.numpy(), atol=1e-12)


def test_backward_with_gradient_and_errors(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    g = data[1]
    (ea * 3).backward(gradient=ember.tensor(g))
    (ta * 3).backward(gradient=torch_mod.tensor(g))
    assert_close(ea.grad, ta.grad.numpy())
    both_raise(lambda: (ta * 2).backward(), lambda: (ea * 2).backward())
    both_raise(lambda: (ta * 2).backward(torch_mod.ones(3)),
               lambda: (ea * 2).backward(ember.ones(3)))
    both_raise(lambda: torch_mod.ones(2).sum().backward(),
               lambda: ember.ones(2).sum().backward())


def test_gradient_of_other_dtype_is_cast(torch_mod):
    e = ember.ones(3, requires_grad=True)
    t = torch_mod.ones(3, requires_grad=True)
    e.backward(ember.ones(3, dtype=ember.float64))
    t.backward(torch_mod.ones(3, dtype=torch_mod.float64))
    assert str(e.grad.dtype) == str(t.grad.dtype).replace("torch", "ember")


def test_accumulation_across_calls_is_in_place(torch_mod, data):
    for lib in (ember, torch_mod):
        x = lib.tensor(data[0], requires_grad=True)
        (x * 2).sum().backward()
        held = x.grad
        (x * 3).sum().backward()
        assert held is x.grad
        assert_close(held.detach().numpy() if lib is torch_mod else held, 5 * np.ones((2, 3)))


def test_grads_never_alias_each_other_or_user_gradient(torch_mod):
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    (a + b).sum().backward()
    (a * 2).sum().backward()
    assert_close(a.grad, [3.0, 3.0, 3.0])
    assert_close(b.grad, [1.0, 1.0, 1.0])
    g = ember.ones(3)
    x = ember.zeros(3, requires_grad=True)
    x.backward(g)
    x.backward(g)
    assert_close(g, [1.0, 1.0, 1.0])
    assert_close(x.grad, [2.0, 2.0, 2.0])
    y = ember.zeros(3, requires_grad=True)
    (y + 0).backward(g)
    (y + 0).backward(g)
    assert_close(g, [1.0, 1.0, 1.0])
    held = ember.ones(3)
    z = ember.zeros(3, requires_grad=True)
    z.register_hook(lambda grad: held)  # a hook's result the user still holds
    z.sum().backward()
    z.sum().backward()
    assert_close(held, [1.0, 1.0, 1.0])
    assert_close(z.grad, [2.0, 2.0, 2.0])


def test_op_used_twice_accumulates(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    for a in (ea, ta):
        y = a * a
        (y + y * a + y.sum()).sum().backward()
    assert_close(ea.grad, ta.grad.numpy())


def test_retain_graph_and_freed_graph_message(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    ey, ty = (ea * ea).sum(), (ta * ta).sum()
    ey.backward(retain_graph=True)
    ty.backward(retain_graph=True)
    ey.backward()
    ty.backward()
    assert_close(ea.grad, ta.grad.numpy())
    both_raise(ty.backward, ey.backward)
    # Nodes that saved nothing can run again, as in PyTorch.
    ez, tz = (ea + 2).sum(), (ta + 2).sum()
    ez.backward()
    tz.backward()
    ez.backward()
    tz.backward()
    assert_close(ea.grad, ta.grad.numpy())


def test_autograd_grad_options(torch_mod, data):
    (ea, eb), (ta, tb) = pair(torch_mod, *data)
    ge = ember.autograd.grad(f_poly(ea, eb), (ea, eb))
    gt = torch_mod.autograd.grad(f_poly(ta, tb), (ta, tb))
    for a, b in zip(ge, gt):
        assert_close(a, b.numpy())
    assert ea.grad is None  # grad() returns, never accumulates
    (ec,), (tc,) = pair(torch_mod, data[0])
    both_raise(lambda: torch_mod.autograd.grad((ta * 2).sum(), [ta, tc]),
               lambda: ember.autograd.grad((ea * 2).sum(), [ea, ec]))
    e1 = ember.autograd.grad((ea * 2).sum(), [ea, ec], allow_unused=True)
    assert e1[1] is None
    e2 = ember.autograd.grad((ea * 2).sum(), [ea, ec], materialize_grads=True)
    t2 = torch_mod.autograd.grad((ta * 2).sum(), [ta, tc], materialize_grads=True)
    assert_close(e2[1], t2[1].numpy())
    both_raise(lambda: torch_mod.autograd.grad((ta * 2).sum(), [ta], materialize_grads=True,
                                               allow_unused=False),
               lambda: ember.autograd.grad((ea * 2).sum(), [ea], materialize_grads=True,
                                           allow_unused=False), ValueError)
    both_raise(lambda: torch_mod.autograd.grad((ta * 2).sum(), [torch_mod.ones(2)]),
               lambda: ember.autograd.grad((ea * 2).sum(), [ember.ones(2)]))
    both_raise(lambda: torch_mod.autograd.grad((ta * 2).sum(), []),
               lambda: ember.autograd.grad((ea * 2).sum(), []))
    # is_grads_batched: one VJP per row of the cotangents (a Jacobian here)
    eye = np.eye(6).reshape(6, 2, 3)
    e3, = ember.autograd.grad(ea * eb, ea, ember.tensor(eye), is_grads_batched=True)
    t3, = torch_mod.autograd.grad(ta * tb, ta, torch_mod.tensor(eye), is_grads_batched=True)
    assert_close(e3, t3.numpy())


def test_autograd_backward_function_and_grad_tensors(torch_mod, data):
    (ea, eb), (ta, tb) = pair(torch_mod, *data)
    g = np.full((2, 3), 0.5)
    ember.autograd.backward([ea * eb, ea.sum()], [ember.tensor(g), None])
    torch_mod.autograd.backward([ta * tb, ta.sum()], [torch_mod.tensor(g), None])
    assert_close(ea.grad, ta.grad.numpy())
    assert_close(eb.grad, tb.grad.numpy())


def test_create_graph_double_and_triple_backward(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    res = []
    for lib, a in ((ember, ea), (torch_mod, ta)):
        y = (a * a * a).sum()
        g1, = lib.autograd.grad(y, a, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), a, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), a)
        res.append((g1, g2, g3))
    for e, t in zip(*res):
        assert_close(e, t.detach().numpy())
    assert_close(res[0][1], 6 * data[0])


def test_backward_create_graph_grad_is_differentiable(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (ea * ea).sum().backward(create_graph=True)
        (ta * ta).sum().backward(create_graph=True)
    assert ea.grad.requires_grad and ta.grad.requires_grad
    ge, = ember.autograd.grad(ea.grad.sum(), ea)
    gt, = torch_mod.autograd.grad(ta.grad.sum(), ta)
    assert_close(ge, gt.numpy())


def test_backward_inputs_restricts_accumulation(torch_mod, data):
    (ea, eb), (ta, tb) = pair(torch_mod, *data)
    ey, ty = ea * eb, ta * tb
    f_poly(ey, ea).backward(inputs=[eb, ey])
    f_poly(ty, ta).backward(inputs=[tb, ty])
    assert ea.grad is None and ta.grad is None
    assert_close(eb.grad, tb.grad.numpy())
    assert_close(ey.grad, ty.grad.numpy())  # a non-leaf input gets its .grad
    both_raise(lambda: (ta * 2).sum().backward(inputs=[]),
               lambda: (ea * 2).sum().backward(inputs=[]))


# ---------------------------------------------------------------------- graph structure
def test_grad_fn_names_and_next_functions(torch_mod, data):
    (ea, eb), (ta, tb) = pair(torch_mod, *data)
    def build(a, b):
        return ((a * b).sum() / 2 - a.mean() + b.transpose(0, 1)[:, 0]
                .unsqueeze(0).expand(2, 3).sum(), b.permute(1, 0).contiguous().view(6).neg(),
                (a @ b.transpose(0, 1)).unsqueeze(0).squeeze(0).reshape(4).to(ember.float32
                                                                              if a.__class__
                                                                              is ember.Tensor
                                                                              else torch_mod
                                                                              .float32))
    for e, t in zip(build(ea, eb), build(ta, tb)):
        assert graph_names(e.grad_fn) == graph_names(t.grad_fn)
    y = ea * 2
    acc = y.grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.variable is ea
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")
    assert not y.is_leaf and ea.is_leaf and ember.ones(2).is_leaf


@pytest.mark.parametrize("build", [
    pytest.param(lambda a: a.sum(0), id="sum_dim-SumBackward1"),
    pytest.param(lambda a: a.mean(1), id="mean_dim-MeanBackward1"),
    pytest.param(lambda a: a.t(), id="t-TBackward0"),
    pytest.param(lambda a: a.t().reshape(6), id="copying_reshape-UnsafeViewBackward0"),
])
def test_overload_node_names(torch_mod, data, build):
    (ea,), (ta,) = pair(torch_mod, data[0])
    assert graph_names(build(ea).grad_fn) == graph_names(build(ta).grad_fn)


def test_detach_and_data(torch_mod, data):
    x = ember.tensor(data[0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)  # shares storage and version counter with y
    assert_close(y, data[0] * 2 + 1)
    assert y._version == d._version == 1
    z = x.data
    assert not z.requires_grad
    z.mul_(0)
    assert x._version == 0 and z._version == 1  # .data: a separate counter
    assert_close(x, np.zeros((2, 3)))
    w = x * 3
    assert w.detach_() is w and not w.requires_grad and w.is_leaf


def test_data_setter():
    x = ember.ones(2, requires_grad=True)
    x.data = ember.zeros(3)
    assert x.shape == (3,) and x.requires_grad


# ---------------------------------------------------------------------- retain_grad / hooks
def test_non_leaf_grad_warning_and_retain_grad(torch_mod, data):
    msgs = []
    for lib in (ember, torch_mod):
        x = lib.tensor(data[0], requires_grad=True)
        y = x * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert y.grad is None
        msgs.append(str(w[0].message))
    assert msgs[1].startswith(msgs[0])
    res = []
    for lib in (ember, torch_mod):
        x = lib.tensor(data[0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)  # runs before retain_grad's store, as in torch
        (y * y).sum().backward(retain_graph=True)
        (y * y).sum().backward()
        assert y.retains_grad
        res.append((y.grad, x.grad))
    for e, t in zip(*res):
        assert_close(e, t.numpy())
    both_raise(lambda: torch_mod.ones(2).retain_grad(), lambda: ember.ones(2).retain_grad())


def test_tensor_hooks_leaf_and_non_leaf(torch_mod, data):
    res = []
    for lib in (ember, torch_mod):
        calls = []
        x = lib.tensor(data[0], requires_grad=True)
        y = x * 3
        h1 = x.register_hook(lambda g: calls.append("leaf") or g * 2)
        y.register_hook(lambda g: calls.append("y1") or g + 1)
        y.register_hook(lambda g: calls.append("y2"))
        (y * y).sum().backward(retain_graph=True)
        first = x.grad.clone()
        h1.remove()
        x.grad = None
        (y * y).sum().backward()
        res.append((first, x.grad, calls))
    assert res[0][2] == res[1][2] == ["y1", "y2", "leaf", "y1", "y2"]
    for e, t in zip(res[0][:2], res[1][:2]):
        assert_close(e, t.numpy())
    both_raise(lambda: torch_mod.ones(2).register_hook(print),
               lambda: ember.ones(2).register_hook(print))


def test_node_hooks_and_prehooks(torch_mod, data):
    res = []
    for lib in (ember, torch_mod):
        x = lib.tensor(data[0], requires_grad=True)
        y = x * 2
        seen = []
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.grad_fn.register_hook(lambda gi, go: seen.append(len(gi)) or (gi[0] + 1, None))
        (y * 1.0).sum().backward()
        res.append((x.grad, seen))
    assert res[0][1] == res[1][1]
    assert_close(res[0][0], res[1][0].numpy())


def test_post_accumulate_grad_hook(torch_mod, data):
    res = []
    for lib in (ember, torch_mod):
        x = lib.tensor(data[0], requires_grad=True)
        seen = []
        h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        h.remove()
        (x * 2).sum().backward()
        res.append(seen)
    assert len(res[0]) == len(res[1]) == 2
    for e, t in zip(*res):
        assert_close(e, t.numpy())
    both_raise(lambda: (torch_mod.ones(2, requires_grad=True) * 2)
               .register_post_accumulate_grad_hook(print),
               lambda: (ember.ones(2, requires_grad=True) * 2)
               .register_post_accumulate_grad_hook(print))


# ---------------------------------------------------------------------- grad modes
@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_grad_modes_as_context_and_decorator(mode):
    x = ember.ones(2, requires_grad=True)

    def ctx():
        return ember.set_grad_enabled(False) if mode == "set_grad_enabled" else \
            getattr(ember, mode)()

    with ctx():
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    assert ember.is_grad_enabled()

    def dec():
        return ember.set_grad_enabled(False) if mode == "set_grad_enabled" else \
            getattr(ember, mode)()

    @dec()
    def f():
        return (x * 2).requires_grad

    assert ember.is_grad_enabled()  # decorating leaves the mode alone
    assert f() is False and ember.is_grad_enabled()

    @dec()
    def gen():
        yield ember.is_grad_enabled()
        yield (x * 2).requires_grad

    g = gen()
    assert next(g) is False
    assert ember.is_grad_enabled()  # restored between steps
    assert next(g) is False


def test_bare_decorators_and_set_grad_enabled_function():
    @ember.no_grad()
    def f():
        return ember.is_grad_enabled()

    @ember.inference_mode
    def h():
        return ember.is_inference_mode_enabled()

    assert f() is False and h() is True
    ember.set_grad_enabled(False)
    try:
        assert not ember.is_grad_enabled()
    finally:
        ember.set_grad_enabled(True)

    @ember.enable_grad()
    def g():
        return ember.is_grad_enabled()

    with ember.no_grad():
        assert g() is True
    with ember.inference_mode(False):
        assert ember.is_grad_enabled()


# ---------------------------------------------------------------------- in-place / versions
def test_inplace_on_leaf_error(torch_mod):
    both_raise(lambda: torch_mod.ones(2, requires_grad=True).add_(1),
               lambda: ember.ones(2, requires_grad=True).add_(1))
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        x.mul_(2)  # allowed outside grad mode
    assert x._version == 1


def _modified_saved(lib, case, x):
    if case == "saved_input_rewired":
        y = x * 1
        z = y * y
        y.add_(1)
    elif case == "saved_input_no_grad":
        y = x * 2
        z = y * y
        with lib.no_grad():
            y.add_(1)
    elif case == "saved_constant":
        a = lib.ones(3)
        z = x * a
        a.add_(1)
    elif case == "saved_output":
        y = (x * 1).exp()
        z = y
        y.mul_(2)
    elif case == "saved_double":
        y = x.to(lib.float64)
        z = y * y
        with lib.no_grad():
            y.sub_(1)
    return z


@pytest.mark.parametrize("case", ["saved_input_rewired", "saved_input_no_grad",
                                  "saved_constant", "saved_output", "saved_double"])
def test_modified_by_inplace_message(torch_mod, case):
    te = _modified_saved(torch_mod, case, torch_mod.ones(3, requires_grad=True))
    ee = _modified_saved(ember, case, ember.ones(3, requires_grad=True))
    msg = both_raise(lambda: te.sum().backward(), lambda: ee.sum().backward())
    assert "modified by an inplace operation" in msg


def test_version_counter_shared_by_views():
    x = ember.zeros(2, 3)
    v = x.view(6)
    t = x.transpose(0, 1)
    v.add_(1)
    assert x._version == v._version == t._version == 1


def test_inplace_on_non_leaf_rewires_graph(torch_mod, data):
    (ea,), (ta,) = pair(torch_mod, data[0])
    for a in (ea, ta):
        y = a * 2
        y.mul_(a)
        y.add_(1)
        y.sum().backward()
    assert_close(ea.grad, ta.grad.numpy())


# ---------------------------------------------------------------------- deep graphs
def test_deep_graph_no_recursion_and_clean_free():
    x = ember.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0  # mul saves its inputs: Node -> Tensor -> Node ... 100,000 deep
    y.backward(retain_graph=True)
    assert_close(x.grad, 1.0)
    # Freeing the chain (saved tensors and edges both) must not overflow the C stack.
    del y
    gc.collect()
    assert x.grad_fn is None


def test_deep_graph_grad_and_create_graph():
    x = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    y = x
    for _ in range(5_000):
        y = y * 1.0
    g, = ember.autograd.grad(y * y, x, create_graph=True)
    assert_close(g, 4.0)
    g2, = ember.autograd.grad(g, x)
    assert_close(g2, 2.0)


# ---------------------------------------------------------------------- Variable
def test_variable_is_a_tensor(torch_mod):
    x = ember.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = ember.autograd.Variable(x, requires_grad=True)
        tv = torch_mod.autograd.Variable(torch_mod.ones(3), requires_grad=True)
    assert isinstance(v, ember.Tensor) and v.requires_grad == tv.requires_grad
    assert v.is_leaf and v.data.shape == (3,)
    (v * 2).sum().backward()
    assert_close(v.grad, [2.0, 2.0, 2.0])
    both_raise(lambda: torch_mod.autograd.Variable([1.0]),
               lambda: ember.autograd.Variable([1.0]), TypeError)
