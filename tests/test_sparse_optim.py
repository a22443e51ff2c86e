"""Optimizers given sparse gradients (nn.Embedding(sparse=True)), against real PyTorch: the
parameters after several steps, and PyTorch's refusals where it has them."""
import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _train(lib, name, kwargs, steps=4, dense_too=False):
    """Seeded embedding (with a padding row) and a few steps; returns the final weights."""
    lib.manual_seed(0)
    emb = lib.nn.Embedding(6, 3, sparse=True, padding_idx=5)
    params = list(emb.parameters())
    opt = getattr(lib.optim, name)(params, lr=0.1, **kwargs)
    for k in range(steps):
        opt.zero_grad()
        x = lib.tensor([[1, 2, 1], [k % 6, 5, 0]])
        loss = (emb(x) ** 2).sum() + emb(lib.tensor([k % 4])).sum()
        loss.backward()
        assert emb.weight.grad.is_sparse
        opt.step()
    return emb.weight.detach().numpy().copy()


CASES = [
    ("SGD", {}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("SGD", {"momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.1, "initial_accumulator_value": 0.2, "eps": 1e-6}),
    ("Adagrad", {"maximize": True}),
    ("SparseAdam", {}),
    ("SparseAdam", {"betas": (0.8, 0.9), "eps": 1e-6}),
    ("SparseAdam", {"maximize": True}),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{sorted(k)}" for n, k in CASES])
def test_sparse_gradient_steps_match_torch(name, kwargs, torch_mod):
    ours, theirs = _train(ember, name, kwargs), _train(torch_mod, name, kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


REFUSALS = [
    ("Adam", {}), ("AdamW", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}),
    ("RMSprop", {}), ("Rprop", {}), ("ASGD", {}), ("Adadelta", {}),
    ("SGD", {"weight_decay": 0.1}), ("Adagrad", {"weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,kwargs", REFUSALS, ids=[f"{n}-{sorted(k)}" for n, k in REFUSALS])
def test_sparse_gradient_refusals_match_torch(name, kwargs, torch_mod):
    with pytest.raises(RuntimeError) as theirs:
        _train(torch_mod, name, kwargs, steps=1)
    with pytest.raises(RuntimeError) as ours:
        _train(ember, name, kwargs, steps=1)
    assert str(ours.value) == str(theirs.value)


def test_sparse_adam_refuses_dense_gradients_as_torch(torch_mod):
    messages = []
    for lib in (ember, torch_mod):
        lin = lib.nn.Linear(2, 2)
        opt = lib.optim.SparseAdam(lin.parameters())
        lin(lib.ones(2)).sum().backward()
        with pytest.raises(RuntimeError) as err:
            opt.step()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_sparse_adam_state_matches_torch(torch_mod):
    states = []
    for lib in (ember, torch_mod):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            emb(lib.tensor([0, 2, 2])).pow(3).sum().backward()
            opt.step()
        st = opt.state[emb.weight]
        states.append((st["step"], st["exp_avg"].numpy().copy(), st["exp_avg_sq"].numpy().copy()))
    assert states[0][0] == states[1][0]
    np.testing.assert_allclose(states[0][1], states[1][1], rtol=1e-6)
    np.testing.assert_allclose(states[0][2], states[1][2], rtol=1e-6)


def test_dense_and_sparse_gradients_mix_as_torch(torch_mod):
    """A weight used by a sparse embedding and densely: PyTorch's dense + sparse sum."""
    grads = []
    for lib in (ember, torch_mod):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(4, 2, sparse=True)
        (emb(lib.tensor([1, 1, 3])).sum() + (emb.weight ** 2).sum()).backward()
        grads.append(emb.weight.grad)
    assert grads[0].is_sparse == grads[1].is_sparse
    np.testing.assert_allclose(grads[0].to_dense().numpy(), grads[1].to_dense().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("owner", ["optimizer", "module"])
def test_zero_grad_keeps_a_sparse_gradient_with_no_entries_as_torch(owner, torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        emb(lib.tensor([1, 2, 1])).sum().backward()
        (opt if owner == "optimizer" else emb).zero_grad(set_to_none=False)
        grads.append(emb.weight.grad)
    assert grads[0].is_sparse and grads[1].is_sparse
    assert grads[0]._nnz() == grads[1]._nnz() == 0
    np.testing.assert_array_equal(grads[0].to_dense().numpy(), grads[1].to_dense().numpy())


def test_sparse_gradient_accumulates_into_a_dense_one_as_torch(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(4, 2, sparse=True)
        (emb.weight ** 2).sum().backward()              # a dense .grad first
        (emb(lib.tensor([1, 1, 3])) * 3).sum().backward()   # then sparse, added in place
        grads.append(emb.weight.grad)
    assert not grads[0].is_sparse and not grads[1].is_sparse
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-6)
