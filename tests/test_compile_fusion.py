"""ember.compile's fused elementwise chains (_compile/fusion.py, csrc/fused.c).

References: real PyTorch on the same inputs (its + - * / and relu are one IEEE operation per
element, as the fused kernel's are, so float32 results agree bit for bit), and NumPy's
formulas where values are special (nan, infinities, signed zeros). Each test first checks
that the chain was fused and that the fused kernel, not the steps one by one, ran."""
import struct

import numpy as np
import pytest

import ember
from ember._compile import fusion
from ember.backends import cpu_kernels

pytestmark = pytest.mark.skipif(cpu_kernels.compiled is None,
                                reason="fusion needs the compiled kernels (EMBER_KERNELS)")


def _program(fn):
    entries = list(fn._ember_compiled.entries.values())
    assert len(entries) == 1
    return entries[0].program


def _chains(fn):
    return [entry[1] for entry in _program(fn).code
            if entry[0] is None and entry[1].kind == fusion.FUSED]


@pytest.fixture
def one_by_one(monkeypatch):
    """Counts the fused steps that ran their steps one by one instead of fused."""
    calls = []
    original = fusion._run_members

    def counting(chain, values):
        calls.append(chain)
        return original(chain, values)
    monkeypatch.setattr(fusion, "_run_members", counting)
    return calls


def _chain_step(lib, x, w, n):
    y = x
    for _ in range(n):
        y = lib.relu(y * w + 0.25) - y / 3.0
    y.sum().backward()


@pytest.mark.parametrize("size", [7, 1000, 70_000])
def test_training_chain_is_fused_and_gives_torchs_gradient(torch_mod, one_by_one, size):
    rng = np.random.default_rng(size)
    xs, ws = rng.standard_normal(size, dtype=np.float32), rng.standard_normal(size).astype(
        np.float32)
    x = ember.tensor(xs, requires_grad=True)
    w = ember.tensor(ws)

    def step():
        _chain_step(ember, x, w, 6)
        g = x.grad
        x.grad = None
        return g
    compiled = ember.compile(step)
    grads = [compiled() for _ in range(3)]
    tx = torch_mod.tensor(xs, requires_grad=True)
    _chain_step(torch_mod, tx, torch_mod.tensor(ws), 6)
    chains = _chains(compiled)
    assert len(chains) == 2   # the forward's chain and the backward's
    assert all(len(c.members) >= 5 * 6 for c in chains)   # 5 ops a round, each way
    assert not one_by_one
    for g in grads:
        np.testing.assert_array_equal(g.numpy(), tx.grad.numpy())


def test_no_grad_chain_float64_matches_torch(torch_mod, one_by_one):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))

    def f(lib, x, y):
        z = x
        for _ in range(20):
            z = (z * y - 0.5) / 1.5 + x
        return -z, z * z
    compiled = ember.compile(lambda x, y: f(ember, x, y))
    with ember.no_grad():
        for _ in range(3):
            out = compiled(ember.tensor(a), ember.tensor(b))
    expected = f(torch_mod, torch_mod.tensor(a), torch_mod.tensor(b))
    assert len(_chains(compiled)) == 1 and not one_by_one
    assert out[0].dtype is ember.float64
    for o, e in zip(out, expected):
        np.testing.assert_array_equal(o.numpy(), e.numpy())


def test_special_values_follow_numpys_kernels(one_by_one):
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -3.5, 2.0,
                        3.4e38], np.float32)
    x = np.tile(special, 10)
    w = np.repeat(special, 10)

    def f(a, b):
        return ember.relu(a * b - b) / b, ember.relu(-a)
    compiled = ember.compile(f)
    for _ in range(3):
        out = compiled(ember.tensor(x), ember.tensor(w))
    assert len(_chains(compiled)) == 1 and not one_by_one
    with np.errstate(all="ignore"):
        expected = (np.maximum(x * w - w, 0) / w, np.maximum(-x, 0))
    for o, e in zip(out, expected):
        np.testing.assert_array_equal(o.numpy().view(np.int32), e.view(np.int32))


def test_operands_that_need_a_graph_run_step_by_step(torch_mod, one_by_one):
    """A captured chain whose operand requires grad (grad mode on): eager records a graph,
    so the fused step runs its steps and the graph is eager's."""
    rng = np.random.default_rng(1)
    xs = rng.standard_normal(50, dtype=np.float32)
    compiled = ember.compile(lambda x: ember.relu(x * 3.0 - 1.0) * x)
    for _ in range(3):
        x = ember.tensor(xs, requires_grad=True)
        out = compiled(x)
        out.sum().backward()
    assert len(_chains(compiled)) == 1 and len(one_by_one) == 2
    assert out.grad_fn is not None
    tx = torch_mod.tensor(xs, requires_grad=True)
    (torch_mod.relu(tx * 3.0 - 1.0) * tx).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_dynamic_sizes_and_strided_operands_fall_back(one_by_one):
    """Operands equal in size at capture but not at replay (dynamic sizes), and a strided
    operand the guards let through: the steps run one by one, with eager's results."""
    def f(a, b):
        return (a * 2.0 + b) * b
    compiled = ember.compile(f, dynamic=True)
    a, b = np.arange(6, dtype=np.float32), np.linspace(-1, 1, 6, dtype=np.float32)
    for _ in range(2):
        out = compiled(ember.tensor(a), ember.tensor(b))
    np.testing.assert_array_equal(out.numpy(), (a * 2.0 + b) * b)
    assert not one_by_one
    a3, b1 = np.arange(3, dtype=np.float32), np.float32([0.5])
    out = compiled(ember.tensor(a3), ember.tensor(b1))
    np.testing.assert_array_equal(out.numpy(), (a3 * 2.0 + b1) * b1)


def test_profiler_sees_each_op_of_a_fused_chain(one_by_one):
    compiled = ember.compile(lambda x: ember.relu(x * 2 - 1) + x)
    x = ember.ones(4)
    for _ in range(2):
        compiled(x)
    with ember.profiler.profile() as prof:
        out = compiled(x)
    assert len(one_by_one) == 1
    names = [e.key for e in prof.key_averages()]
    assert {"aten::mul", "aten::sub", "aten::relu", "aten::add"} <= set(names)
    np.testing.assert_array_equal(out.numpy(), np.full(4, 2.0, np.float32))


def test_a_bad_program_is_refused_not_run():
    kernel = cpu_kernels.compiled.fused_chain
    a, out = np.ones(4, np.float32), np.empty(4, np.float32)
    with pytest.raises(ValueError, match="bad instruction"):
        kernel(struct.pack("4i", 0, 0, 0, 0), (a,), (), (out,), 0)   # writes an input
    with pytest.raises(ValueError, match="bad instruction"):
        kernel(struct.pack("4i", 0, 1, 0, 9), (a,), (), (out,), 0)   # reads past the end
    with pytest.raises(ValueError, match="one float dtype and one size"):
        kernel(struct.pack("4i", 0, 1, 0, 0), (np.ones(3, np.float32),), (), (out,), 0)
