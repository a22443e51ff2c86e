"""The compiled door (backends/csrc/dispatch.c, autograd.c) against its definition, the Python
`registry.dispatch` / `_record` / `_tensor._wrap` / `graph._topological_order`: the same call
through both must give the same result tensor and the same graph node, field by field, for
each kind of op the registry has (saved inputs, saved output, views, scalars, complex results,
fresh leaves, stale views, anomaly mode, instruments). The values themselves are checked
against PyTorch by the op table (tests/test_ops.py), which runs through the compiled door."""
import os

import numpy as np
import pytest

import ember
from ember import _tensor
from ember.autograd import graph
from ember.backends import cpu_kernels
from ember.ops import registry

if cpu_kernels.compiled is None and os.environ.get(cpu_kernels.ENV, "").lower() != "numpy":
    raise RuntimeError("ember's compiled kernels are not built: pip install -e . with a C "
                       "compiler present builds them")
pytestmark = pytest.mark.skipif(cpu_kernels.compiled is None,
                                reason="EMBER_KERNELS=numpy: the compiled door is off")

OPS = registry.OPS


def _leaf(shape, dtype=ember.float32, grad=True, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    if dtype.category == 3:
        data = data + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    return ember.tensor(data, dtype=dtype, requires_grad=grad)


def _tensor_fields(t):
    return (t._data.shape, t._data.dtype, t.dtype, t._device, t._requires_grad, t._grad,
            t._output_nr, t._vc.v, t._retains_grad, t._accumulator)


def _same(a, b):
    """Two node fields equal: tensors by identity, arrays by value, containers elementwise."""
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (ember.Tensor, graph.Node, graph.AccumulateGrad, registry.Op,
                        _tensor._Version)):
        assert a is b, (a, b)
    else:
        assert a == b, (a, b)


def _compare_nodes(n1, n2):
    assert type(n1) is type(n2)
    for field in ("op", "inputs", "params", "edges", "in_meta", "saved_versions", "out_meta"):
        _same(getattr(n1, field), getattr(n2, field))
    assert n1.conj_around == n2.conj_around
    assert getattr(n1, "view_version", None) == getattr(n2, "view_version", None)
    if n1._out is None:
        assert n2._out is None
    else:
        (a1, d1, v1, c1), (a2, d2, v2, c2) = n1._out, n2._out
        _same(list(a1), list(a2))
        assert d1 == d2 and c1 == c2


def _both(op, inputs, params=None, dtype=None, **kwargs):
    args = (OPS[op], tuple(inputs), {} if params is None else params, dtype)
    compiled = registry.dispatch(*args, **kwargs)
    python = registry.python_dispatch(*args, **kwargs)
    return compiled, python


CASES = {
    "mul (every input saved)": lambda: ("mul", [_leaf(3), _leaf(3, seed=1)], None,
                                        ember.float32),
    "add with a scalar (nothing saved)": lambda: ("add", [_leaf((2, 3)), 2.5], None,
                                                  ember.float32),
    "sub with alpha": lambda: ("sub", [_leaf(4), _leaf(4, seed=2)], {"alpha": 3},
                               ember.float32),
    "exp (output saved)": lambda: ("exp", [_leaf(5, ember.float64)], None, ember.float64),
    "complex mul": lambda: ("mul", [_leaf(3, ember.complex64), _leaf(3, ember.complex64, seed=3)],
                            None, ember.complex64),
    "one input without grad": lambda: ("mul", [_leaf(3), _leaf(3, grad=False)], None,
                                       ember.float32),
    "no dtype given": lambda: ("exp", [_leaf(2)], None, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_and_python_doors_build_the_same_node(case):
    op, inputs, params, dtype = CASES[case]()
    c, p = _both(op, inputs, params, dtype)
    assert type(c) is type(p) is ember.Tensor
    np.testing.assert_array_equal(c._data, p._data)
    assert _tensor_fields(c)[:-1] == _tensor_fields(p)[:-1]
    assert c._base is None and p._base is None
    _compare_nodes(c.grad_fn, p.grad_fn)


def test_keyword_arguments_and_given_arrays():
    x = _leaf(4)
    c, p = _both("mul", [x, 2.0], None, ember.float32, arrays=[x._data, np.float32(2.0)])
    _compare_nodes(c.grad_fn, p.grad_fn)
    c = registry.dispatch(OPS["exp"], (x,), dtype=ember.float32)
    p = registry.python_dispatch(OPS["exp"], (x,), dtype=ember.float32)
    _compare_nodes(c.grad_fn, p.grad_fn)


def test_view_op_shares_version_and_base():
    x = _leaf((2, 3))
    base = x.view(6)   # a view already: its views' base is the root
    for inputs in ((x,), (base,)):
        params = {"dims": (1, 0)} if inputs[0].dim() == 2 else {"dims": (0,)}
        c, p = _both("permute", inputs, params, ember.float32)
        for r in (c, p):
            assert r._vc is inputs[0]._vc
            assert r._base is (x if inputs[0]._base is None else inputs[0]._base)
        _compare_nodes(c.grad_fn, p.grad_fn)


def test_first_use_of_a_leaf_makes_one_accumulator():
    a = _leaf(3)
    assert a._accumulator is None
    c = registry.dispatch(OPS["mul"], (a, a), {}, ember.float32)
    acc = a._accumulator
    assert isinstance(acc, graph.AccumulateGrad)
    assert c.grad_fn.edges == [(acc, 0), (acc, 0)]


def test_a_view_changed_in_place_gets_a_fresh_node():
    grads = []
    for door in (registry.dispatch, registry.python_dispatch):
        leaf = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        x = leaf.clone()
        v = x[1:]
        x.mul_(2.0)    # v's recorded node is stale now: the door must regenerate it
        door(OPS["mul"], (v, 3.0), {}, ember.float32).sum().backward()
        grads.append(leaf.grad.numpy())
    for g in grads:   # d/dleaf of sum(3 * (2 * leaf)[1:])
        np.testing.assert_array_equal(g, [0.0, 6.0, 6.0, 6.0])


def test_no_grad_and_grad_mode_off_record_nothing():
    a = _leaf(3)
    with ember.no_grad():
        c = registry.dispatch(OPS["mul"], (a, 2.0), {}, ember.float32)
    assert c.grad_fn is None and not c.requires_grad


def test_anomaly_mode_and_instruments_take_the_python_door():
    a = _leaf(3)
    with ember.autograd.detect_anomaly():
        c = registry.dispatch(OPS["mul"], (a, 2.0), {}, ember.float32)
    assert c.grad_fn.anomaly_trace is not None
    seen = []
    registry.instruments.append(lambda op, inputs, params, result: seen.append(op.name))
    try:
        registry.dispatch(OPS["exp"], (a,), {}, ember.float32)
    finally:
        registry.instruments.pop()
    assert seen == ["exp"]


def test_mixed_devices_raise_as_the_python_door_does():
    from ember._device import _make
    a = _leaf(3)
    b = _tensor._wrap(np.ones(3, np.float32), ember.float32, _make("meta", None))
    with pytest.raises(RuntimeError) as c_err:
        registry.dispatch(OPS["mul"], (a, b), {}, ember.float32)
    with pytest.raises(RuntimeError) as p_err:
        registry.python_dispatch(OPS["mul"], (a, b), {}, ember.float32)
    assert str(c_err.value) == str(p_err.value)


def test_wrap_sets_the_fields_the_python_wrap_sets():
    arr = np.arange(6.0).reshape(2, 3)
    assert _tensor._wrap is cpu_kernels.compiled.wrap
    c = _tensor._wrap(arr, ember.float64)
    python = _python_wrap(arr, ember.float64)
    assert c._data is arr and python._data is arr
    assert _tensor_fields(c) == _tensor_fields(python)
    assert c._base is None and c.grad_fn is None and c._vc is not python._vc


def _python_wrap(array, dtype):
    t = object.__new__(ember.Tensor)
    for name, value in (("_data", array), ("dtype", dtype), ("_device", ember.device("cpu")),
                        ("_requires_grad", False), ("_grad", None), ("grad_fn", None),
                        ("_output_nr", 0), ("_base", None), ("_accumulator", None),
                        ("_retains_grad", False)):
        setattr(t, name, value)
    t._vc = _tensor._Version()
    return t


def test_topological_order_is_the_python_walk():
    x = _leaf(5)
    w = _leaf(5, seed=4)
    y = x
    for _ in range(6):
        y = ember.relu(y * w + 1.0) + y.exp() * 0.5
    z = (y.sum() + x.sum(), (y * 2).mean())
    roots = [z[0].grad_fn, z[1].grad_fn]
    assert cpu_kernels.compiled.topological_order(roots) == graph._topological_order(roots)
    assert graph.topological_order is cpu_kernels.compiled.topological_order


def _python_operator(name):
    """The operator as written in Python (ops/arithmetic.py), the compiled one's definition."""
    from ember.ops import arithmetic
    return arithmetic._OPERATORS[name]


@pytest.mark.parametrize("name", ["__add__", "__radd__", "__sub__", "__mul__", "__rmul__",
                                  "__truediv__"])
@pytest.mark.parametrize("other", ["tensor", "float", "int", "parameter", "int tensor"])
def test_compiled_operators_match_the_python_operators(name, other):
    compiled = getattr(ember.Tensor, name)
    assert type(compiled).__name__ == "binary_operator"
    python = _python_operator(name)
    results = []
    for op in (compiled, python):
        a = _leaf((2, 3))
        b = {"tensor": lambda: _leaf(3, seed=5), "float": lambda: 0.75, "int": lambda: 3,
             "parameter": lambda: ember.nn.Parameter(_leaf(3, seed=5).detach()),
             "int tensor": lambda: ember.tensor([1, 2, 3])}[other]()
        r = op(a, b)
        r.sum().backward()
        results.append((r, a.grad, getattr(b, "grad", None)))
    (rc, gac, gbc), (rp, gap, gbp) = results
    np.testing.assert_array_equal(rc._data, rp._data)
    assert rc.dtype is rp.dtype and type(rc.grad_fn) is type(rp.grad_fn)
    np.testing.assert_array_equal(gac._data, gap._data)
    assert (gbc is None) == (gbp is None)
    if gbc is not None:
        np.testing.assert_array_equal(gbc._data, gbp._data)


def test_compiled_operator_errors_are_the_python_operators():
    a, b = ember.ones(2), ember.ones(3)
    with pytest.raises(RuntimeError) as compiled:
        a + b
    with pytest.raises(RuntimeError) as python:
        _python_operator("__add__")(a, b)
    assert str(compiled.value) == str(python.value)
    with pytest.raises(TypeError):
        a * "x"


def _graph_program(kind):
    """A leaf, a few ops of one kind of graph, and the leaf's gradient after backward()."""
    x = ember.tensor(np.linspace(-1.5, 2.0, 6).reshape(2, 3), requires_grad=True)
    if kind == "fan-out and broadcast":
        b = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = (x * b + x.exp() * 2.0).relu() + b
        loss = (y * y).sum() + x.sum()
        leaves = (x, b)
    elif kind == "several outputs, one unused":
        a, c = x.unbind(0)
        loss = (a * 3.0).sum()
        leaves = (x,)
    elif kind == "hooks and retain_grad":
        y = x * 2.0
        y.retain_grad()
        y.register_hook(lambda g: g * 3.0)
        z = y.tanh()
        z.grad_fn.register_hook(lambda gi, go: (gi[0] * 0.5,))
        loss = z.sum()
        leaves = (x, y)
    elif kind == "complex":
        z = ember.complex(x, x * 0.5)
        loss = (z * z.conj() + z).abs().sum()
        leaves = (x,)
    elif kind == "dtype cast and custom Function":
        class Square(ember.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * t

            @staticmethod
            def backward(ctx, g):
                (t,) = ctx.saved_tensors
                return 2 * t * g
        y = Square.apply(x).double() * ember.tensor(1.5, dtype=ember.float64)
        loss = y.sum()
        leaves = (x,)
    loss.backward()
    x2 = x.grad.clone()
    loss2 = (x * 2.0).sum()
    loss2.backward()           # accumulates into the existing .grad
    return [t.grad.numpy().copy() for t in leaves] + [x2.numpy()]


@pytest.mark.parametrize("kind", ["fan-out and broadcast", "several outputs, one unused",
                                  "hooks and retain_grad", "complex",
                                  "dtype cast and custom Function"])
def test_compiled_walk_gives_the_python_walks_gradients(kind, monkeypatch):
    assert graph.walk is cpu_kernels.compiled.walk
    compiled = _graph_program(kind)
    monkeypatch.setattr(graph, "walk", graph._walk)
    python = _graph_program(kind)
    assert len(compiled) == len(python)
    for c, p in zip(compiled, python):
        np.testing.assert_array_equal(c, p)


def test_compiled_walk_frees_saved_values_unless_retained():
    x = ember.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_compiled_argument_check_calls_through_and_keeps_torchs_errors(torch_mod):
    relu = ember.relu
    assert type(relu).__name__ == "checked_call"
    parser = relu.__ember_parser__
    parser._fits.clear()
    x = ember.tensor([-1.0, 2.0])
    first = relu(x)          # checked in Python, then cached
    assert (ember.Tensor,) in parser._fits
    second = relu(x)         # the cache hit: straight to the function
    np.testing.assert_array_equal(first.numpy(), torch_mod.relu(torch_mod.tensor([-1.0, 2.0])))
    np.testing.assert_array_equal(second.numpy(), first.numpy())
    for bad in ("a", 3):
        with pytest.raises(TypeError) as ours:
            relu(bad)
        with pytest.raises(TypeError) as theirs:
            torch_mod.relu(bad)
        assert str(ours.value) == str(theirs.value)
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.sum(dim=0).tolist() == torch_mod.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(dim=0).tolist()
    assert ember.Tensor.sum(t, 1).tolist() == [3.0, 7.0]


def test_checked_functions_pickle_and_copy_by_reference_as_torchs(torch_mod):
    import copy
    import pickle
    for lib in (torch_mod, ember):
        for f in (lib.tanh, lib.Tensor.sum, lib.nn.functional.relu, lib.linalg.norm):
            assert pickle.loads(pickle.dumps(f)) is f
            assert copy.deepcopy(f) is f and copy.copy(f) is f
        layer = lib.nn.TransformerEncoderLayer(8, 2, batch_first=True, activation=lib.tanh)
        assert pickle.loads(pickle.dumps(layer)).activation is lib.tanh
        assert copy.deepcopy(layer).activation is lib.tanh
