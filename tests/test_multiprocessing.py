"""ember.multiprocessing: tensors through queues by shared memory, spawn, Hogwild."""
import os

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp


def _fill(t, value):
    t.fill_(value)


def _add_from_queue(q, out_q):
    t = q.get()
    t.add_(1)
    out_q.put(t.is_shared())


def _raises(i, msg):
    if i == 1:
        raise ValueError(msg)


def _train_shared(rank, model, steps):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    x = ember.randn(16, 4)
    y = x.sum(1, keepdim=True)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


def test_share_memory_and_process_arguments():
    t = ember.zeros(5)
    t.share_memory_()
    assert t.is_shared()
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=_fill, args=(t, 7.0))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    np.testing.assert_array_equal(t.numpy(), np.full(5, 7.0, dtype=np.float32))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_carries_shared_tensors(method):
    ctx = mp.get_context(method)
    q, out_q = ctx.Queue(), ctx.Queue()
    t = ember.arange(4.0)
    p = ctx.Process(target=_add_from_queue, args=(q, out_q))
    p.start()
    q.put(t)
    assert out_q.get(timeout=60) is True
    p.join(60)
    np.testing.assert_array_equal(t.numpy(), [1, 2, 3, 4])  # the child wrote our memory


def test_spawn_reraises_child_error():
    with pytest.raises(mp.ProcessRaisedException, match="boom from child") as info:
        mp.spawn(_raises, args=("boom from child",), nprocs=2)
    assert "Process 1 terminated with the following error" in str(info.value)


def test_non_leaf_tensor_refuses_to_cross():
    x = ember.ones(2, requires_grad=True) * 2
    q = mp.get_context("fork").Queue()
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        from multiprocessing.reduction import ForkingPickler
        ForkingPickler.dumps(x)
    q.close()


def test_hogwild_two_processes_train_one_shared_model():
    ember.manual_seed(0)
    model = ember.nn.Linear(4, 1)
    model.share_memory()
    before = model.weight.detach().numpy().copy()
    procs = []
    ctx = mp.get_context("fork")
    for rank in range(2):
        p = ctx.Process(target=_train_shared, args=(rank, model, 20))
        p.start()
        procs.append(p)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    after = model.weight.detach().numpy()
    assert not np.allclose(before, after)  # updates made in the children are seen here
    assert all(p.is_shared() for p in model.parameters())
    assert os.getpid()
