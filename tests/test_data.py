"""ember.utils.data: datasets, samplers, collate, DataLoader with worker processes."""
import os
import signal
import time
from collections import namedtuple

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              DistributedSampler, IterableDataset, RandomSampler,
                              SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate,
                              get_worker_info, random_split)

START_METHODS = ["fork", "spawn", "forkserver"]


def _shm_segments():
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(f"ember_{os.getpid()}_"))


def _children():
    import multiprocessing
    return [p for p in multiprocessing.active_children()]


class Squares(Dataset):
    def __init__(self, n=50):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.full((2, 3), float(i)), i * i


class Failing(Squares):
    def __getitem__(self, i):
        if i == 7:
            raise ValueError("bad sample 7")
        return super().__getitem__(i)


class Slow(Squares):
    def __getitem__(self, i):
        time.sleep(5)
        return super().__getitem__(i)


class Suicidal(Squares):
    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__getitem__(i)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class RandomAug(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return float(np.random.rand()) + float(ember.rand(1)), get_worker_info().id


def _collect(loader):
    return [(x.numpy().copy(), y.numpy().copy()) for x, y in loader]


# ---------------------------------------------------------------------- datasets
def test_tensor_concat_subset_stack_datasets():
    a = TensorDataset(ember.arange(5), ember.arange(5) * 2)
    assert len(a) == 5 and a[3][1].item() == 6
    c = ConcatDataset([a, a])
    assert len(c) == 10 and c[7][0].item() == 2 and c[-1][0].item() == 4
    assert len(a + a) == 10
    s = Subset(a, [4, 0])
    assert [int(s[i][0]) for i in range(2)] == [4, 0]
    st = StackDataset(a, Squares(5))
    assert st[2][1][1] == 4
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(ember.zeros(2), ember.zeros(3))
    chained = list(ChainDataset([Stream(3), Stream(2)]))
    assert chained == [0, 1, 2, 0, 1]


def test_random_split_lengths_and_fractions():
    parts = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    parts = random_split(range(10), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


def test_random_split_matches_torch(torch_mod):
    ours = random_split(range(20), [5, 15], generator=ember.Generator().manual_seed(3))
    theirs = torch_mod.utils.data.random_split(range(20), [5, 15],
                                               generator=torch_mod.Generator().manual_seed(3))
    assert [list(p) for p in ours] == [list(p) for p in theirs]


# ---------------------------------------------------------------------- samplers
def test_samplers_semantics():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    perm = list(RandomSampler(range(20)))
    assert sorted(perm) == list(range(20))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=100))
    assert len(draws) == 100 and set(draws) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 9, 11])) == [5, 9, 11]
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3


def test_random_sampler_is_lazy_for_huge_num_samples():
    sampler = RandomSampler(range(10), replacement=True, num_samples=10 ** 10)
    it = iter(sampler)
    first = [next(it) for _ in range(5)]
    assert len(sampler) == 10 ** 10 and all(0 <= i < 10 for i in first)


def test_shuffle_order_matches_torch(torch_mod):
    ember.manual_seed(0)
    torch_mod.manual_seed(0)
    ours = list(RandomSampler(range(30)))
    theirs = list(torch_mod.utils.data.RandomSampler(range(30)))
    assert ours == theirs


def test_weighted_sampler_respects_weights():
    ember.manual_seed(0)
    draws = list(WeightedRandomSampler([0.1, 0.0, 0.9], 4000))
    counts = np.bincount(draws, minlength=3)
    assert counts[1] == 0
    assert abs(counts[2] / 4000 - 0.9) < 0.03
    assert sorted(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False)) == [0, 1, 2, 3]


def test_distributed_sampler_shards_are_disjoint_and_cover():
    shards = [list(DistributedSampler(range(10), num_replicas=3, rank=r, seed=1))
              for r in range(3)]
    assert all(len(s) == 4 for s in shards)
    flat = sum(shards, [])
    assert set(flat) == set(range(10))
    dropped = [list(DistributedSampler(range(10), 3, r, drop_last=True)) for r in range(3)]
    flat = sum(dropped, [])
    assert len(flat) == len(set(flat)) == 9
    s = DistributedSampler(range(10), 2, 0, shuffle=True)
    s.set_epoch(1)
    e1 = list(s)
    s.set_epoch(2)
    assert list(s) != e1
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), 2, 2)


# ---------------------------------------------------------------------- collate
def test_default_collate_matches_torch(torch_mod):
    Point = namedtuple("Point", "x y")
    samples = [{"a": np.array([i, i + 1.0]), "b": i, "c": float(i), "s": f"s{i}",
                "p": Point(np.float32(i), [i, True])} for i in range(3)]
    ours = default_collate(samples)
    theirs = torch_mod.utils.data.default_collate(samples)
    assert ours.keys() == theirs.keys()
    for key in ("a", "b", "c"):
        assert str(ours[key].dtype).replace("ember", "torch") == str(theirs[key].dtype)
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
    assert ours["s"] == theirs["s"]
    assert type(ours["p"]).__name__ == "Point"
    np.testing.assert_array_equal(ours["p"].x.numpy(), theirs["p"].x.numpy())
    assert [t.tolist() for t in ours["p"].y] == [t.tolist() for t in theirs["p"].y]


def test_collate_ragged_tensors_names_sizes():
    with pytest.raises(RuntimeError, match=r"\[3\].*\[4\]"):
        default_collate([ember.zeros(3), ember.zeros(4)])


# ---------------------------------------------------------------------- DataLoader
def test_single_process_batches_and_len():
    loader = DataLoader(Squares(10), batch_size=4)
    batches = _collect(loader)
    assert len(loader) == 3 and len(batches) == 3
    np.testing.assert_array_equal(batches[2][1], [64, 81])
    assert batches[0][0].shape == (4, 2, 3)
    loader = DataLoader(Squares(10), batch_size=None)
    first = next(iter(loader))
    assert first[0].shape == (2, 3) and first[1] == 0
    assert len(DataLoader(Squares(10), batch_size=4, drop_last=True)) == 2


@pytest.mark.parametrize("method", START_METHODS)
def test_workers_equal_single_process(method):
    expected = _collect(DataLoader(Squares(30), batch_size=4))
    got = _collect(DataLoader(Squares(30), batch_size=4, num_workers=2,
                              multiprocessing_context=method))
    assert len(got) == len(expected)
    for (x1, y1), (x2, y2) in zip(got, expected):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
    assert _shm_segments() == []


def test_shuffled_workers_visit_every_sample_once_and_persist():
    loader = DataLoader(Squares(40), batch_size=5, shuffle=True, num_workers=2,
                        persistent_workers=True)
    for _ in range(2):
        ys = np.concatenate([y for _, y in _collect(loader)])
        assert sorted(ys.tolist()) == [i * i for i in range(40)]
    loader._iterator._shutdown()
    assert _shm_segments() == []


def test_iterable_dataset_sharded_by_worker_info():
    loader = DataLoader(Stream(10), batch_size=3, num_workers=2)
    values = sorted(sum((b.tolist() for b in loader), []))
    assert values == list(range(10))


def test_worker_seeds_differ_and_repeat_under_manual_seed():
    def run():
        ember.manual_seed(123)
        return [tuple(v.tolist()) for v, _ in DataLoader(RandomAug(), batch_size=2,
                                                          num_workers=2)]
    first, second = run(), run()
    assert first == second
    values = [v for pair in first for v in pair]
    assert len(set(values)) == len(values)


def test_worker_exception_reraised_with_traceback():
    loader = DataLoader(Failing(20), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        _collect(loader)
    assert "Caught ValueError in DataLoader worker process" in str(info.value)
    assert "bad sample 7" in str(info.value)
    assert "Traceback" in str(info.value)
    assert _shm_segments() == []


def test_killed_worker_raises_promptly_and_cleans_up():
    loader = DataLoader(Suicidal(20), batch_size=1, num_workers=2)
    start = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) .*\) exited "
                                           "unexpectedly"):
        _collect(loader)
    assert time.time() - start < 20
    assert _shm_segments() == []
    time.sleep(0.2)
    assert _children() == []


def test_timeout_raises_instead_of_hanging():
    loader = DataLoader(Slow(4), batch_size=1, num_workers=1, timeout=1)
    start = time.time()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        next(iter(loader))
    assert time.time() - start < 10
    time.sleep(0.2)
    assert _children() == []


def test_breaking_early_leaves_no_children_or_segments():
    it = iter(DataLoader(Squares(200), batch_size=2, num_workers=2))
    next(it)
    next(it)
    del it
    time.sleep(0.2)
    assert _children() == []
    assert _shm_segments() == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(Squares(), num_workers=-1)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(Squares(), sampler=SequentialSampler(range(3)), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(3), shuffle=True)


def _init_marks_worker(worker_id):
    import numpy as _np
    _np.random.seed(1000 + worker_id)


class WorkerSeeded(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return get_worker_info().id, float(np.random.rand())


def test_worker_init_fn_runs_in_each_worker():
    loader = DataLoader(WorkerSeeded(), batch_size=None, num_workers=2,
                        worker_init_fn=_init_marks_worker)
    got = {}
    for wid, value in loader:
        got.setdefault(int(wid), []).append(float(value))
    for wid, values in got.items():
        expected = np.random.RandomState(1000 + wid).rand(len(values))
        np.testing.assert_allclose(values, expected)


def test_interpreter_exit_mid_epoch_leaves_nothing_behind(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "leave.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "import ember\n"
        "from test_data import Squares\n"
        "from ember.utils.data import DataLoader\n"
        "it = iter(DataLoader(Squares(200), batch_size=2, num_workers=2))\n"
        "next(it)\n"
        "print(os.getpid(), ' '.join(str(w.pid) for w in it._workers), flush=True)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + \
        os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    pid, *workers = (int(p) for p in out.stdout.split())
    time.sleep(0.5)
    assert [n for n in os.listdir("/dev/shm") if n.startswith(f"ember_{pid}_")] == []
    for w in workers:
        assert not os.path.exists(f"/proc/{w}") or \
            open(f"/proc/{w}/status").read().find("State:\tZ") >= 0
