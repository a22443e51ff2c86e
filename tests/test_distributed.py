"""ember.distributed, DistributedDataParallel, DataParallel and `ember run --nproc-per-node`.

Multi-process checks run the scripts in tests/dist_scripts/ under mpiexec (PyPI's MPICH, the
`distributed` extra); each launch costs a second or two, so each script groups many checks
and prints "rank R ALL OK" when every check of that rank passed. They skip only when mpi4py
is not installed.
"""
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import gather, parallel_apply, replicate, scatter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("EMBER_GUARD", None)
    return env


def _mpiexec():
    pytest.importorskip("mpi4py")
    from ember.distributed.launch import find_mpiexec
    try:
        return find_mpiexec()
    except RuntimeError:
        pytest.skip("mpiexec is not installed (pip install mpich)")


def _launch(n, script, timeout=240, **env):
    cmd = [_mpiexec(), "-n", str(n), sys.executable, os.path.join(SCRIPTS, script)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**_env(), **env},
                          timeout=timeout, cwd=ROOT)
    return proc, time.perf_counter() - start


def _assert_all_ok(proc, n):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    for r in range(n):
        assert f"rank {r} ALL OK" in proc.stdout, out[-4000:]


# ----------------------------------------------------------------------------- multi-process
@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    """Every collective, reduce op and dtype, with 2 and 3 ranks (3 oversubscribes CI)."""
    proc, _ = _launch(n, "collectives.py")
    _assert_all_ok(proc, n)
    for part in ("reductions", "moves", "point to point", "groups and objects", "mismatch"):
        assert f"OK {part}" in proc.stdout


def test_ddp_matches_single_process_training():
    proc, _ = _launch(2, "ddp.py")
    _assert_all_ok(proc, 2)
    for part in ("mlp: 20 steps equal", "mlp bucket view: 20 steps equal",
                 "no_sync accumulation equals the large-batch gradient",
                 "unused on some ranks", "buffers broadcast from rank 0"):
        assert part in proc.stdout


def test_failing_rank_aborts_the_job():
    proc, elapsed = _launch(2, "fail.py", timeout=60)
    assert proc.returncode != 0
    assert "[rank1]: ValueError: rank one exploded" in proc.stderr
    assert "broken_step" in proc.stderr  # the failing rank's traceback
    assert "UNREACHABLE" not in proc.stdout
    assert elapsed < 30


def test_rank_exiting_nonzero_ends_the_job():
    proc, elapsed = _launch(2, "exit_code.py", timeout=60)
    # NOTE: MPICH's mpiexec reports the first exit status it collects: 3 from the rank that
    # left, or, on a loaded machine, the SIGKILL (9) of the rank it then stopped.
    assert proc.returncode in (3, 9), proc.stdout + proc.stderr
    assert "UNREACHABLE" not in proc.stdout
    assert elapsed < 30


def test_launcher_runs_torchrun_program_unchanged(tmp_path):
    _mpiexec()
    cmd = [sys.executable, "-m", "ember", "run", "--nproc-per-node", "2",
           os.path.join(SCRIPTS, "torchrun_style.py")]
    env = _env()
    env["EMBER_TEST_OUT"] = str(tmp_path)  # NOTE: the ranks' stdout can interleave mid-line
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = sorted((tmp_path / f"rank{r}.txt").read_text() for r in (0, 1))
    # grad of sum(Linear(ones(2, 3))) w.r.t. the weight: 2 per element on every rank
    assert lines == [f"rank {r}/2 local {r} sum 3 grad [[2.0, 2.0, 2.0]]" for r in (0, 1)]


def test_launcher_option_forms(tmp_path):
    from ember.__main__ import main
    assert main(["run", "--nproc-per-node", "x", "s.py"]) == 2
    assert main(["run", "--nproc_per_node=", "s.py"]) == 2
    _mpiexec()
    script = tmp_path / "env.py"
    script.write_text(
        "import os\n"
        "line = 'W ' + os.environ['RANK'] + ' ' + os.environ['WORLD_SIZE']\n"
        f"open(os.path.join({str(tmp_path)!r}, 'w' + os.environ['RANK']), 'w').write(line)\n")
    proc = subprocess.run([sys.executable, "-m", "ember", "run", "--nproc_per_node=3",
                           str(script)], capture_output=True, text=True, env=_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = sorted((tmp_path / f"w{r}").read_text() for r in range(3))
    assert got == ["W 0 3", "W 1 3", "W 2 3"]


# ----------------------------------------------------------------------------- one process
def test_api_before_init_matches_torch(torch_mod):
    tdist = torch_mod.distributed
    for name in ("get_rank", "get_world_size", "get_backend"):
        with pytest.raises(ValueError) as ours:
            getattr(dist, name)()
        with pytest.raises(ValueError) as theirs:
            getattr(tdist, name)()
        assert str(ours.value) == str(theirs.value)
    assert dist.is_initialized() is False
    assert dist.is_available() is True or pytest.importorskip("mpi4py") is None


def test_reduce_op_and_backend_match_torch(torch_mod):
    tdist = torch_mod.distributed
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(tdist.ReduceOp, name)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert int(ours) == int(theirs)
    assert list(dist.ReduceOp.RedOpType.__members__) == \
        list(tdist.ReduceOp.RedOpType.__members__)
    for name in ("gloo", "GLOO", "nccl", "mpi"):
        assert dist.Backend(name) == tdist.Backend(name)
    with pytest.raises(ValueError):
        dist.Backend("smoke-signals")


def test_distributed_sampler_module_path():
    import ember.utils.data.distributed as mod
    s = mod.DistributedSampler(list(range(10)), num_replicas=2, rank=1, shuffle=False)
    assert list(s) == [1, 3, 5, 7, 9]


def test_ddp_on_cuda_devices_with_nccl_backend():
    """A torchrun-style GPU program (backend 'nccl', a device per rank, device_ids) on the
    NumPy stand-in for CUDA: collectives keep tensors on their devices, DDP equals CPU
    training."""
    from ember.backends import STANDIN_VARIABLE
    proc, _ = _launch(2, "ddp_cuda.py", **{STANDIN_VARIABLE: "2"})
    _assert_all_ok(proc, 2)   # (each check raises on failure before "ALL OK" prints)


def test_gpu_checks_nccl_script_on_the_standin():
    """scripts/gpu_check.sh's NCCL script (every collective on CUDA tensors, DDP) runs here on
    the stand-in, where 'nccl' groups carry CUDA tensors over MPI: the script itself is right."""
    from ember.backends import STANDIN_VARIABLE
    proc, _ = _launch(2, "nccl_check.py", **{STANDIN_VARIABLE: "2"})
    _assert_all_ok(proc, 2)   # (each check raises on failure before "ALL OK" prints)


def test_ddp_requires_init():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


# ----------------------------------------------------------------------------- DataParallel
def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_data_parallel_on_cpu_runs_module_directly(torch_mod):
    model = _model()
    dp = nn.DataParallel(model)
    x = ember.randn(5, 4)
    assert ember.equal(dp(x), model(x))
    assert dp.module is model
    tdp = torch_mod.nn.DataParallel(torch_mod.nn.Sequential(
        torch_mod.nn.Linear(4, 8), torch_mod.nn.ReLU(), torch_mod.nn.Linear(8, 2)))
    assert list(dp.state_dict()) == list(tdp.state_dict())
    assert dp.device_ids == tdp.device_ids == []


def test_scatter_replicate_apply_gather_equal_the_module():
    """DataParallel's pipeline, on two (CPU) devices: same output and gradients as one call."""
    model = _model()
    x = ember.randn(7, 4, requires_grad=True)
    devices = ["cpu", "cpu"]
    inputs = scatter((x,), devices)
    assert [tuple(i[0].shape) for i in inputs] == [(4, 4), (3, 4)]
    replicas = replicate(model, devices)
    assert replicas[0] is not model and len(list(replicas[1].parameters())) == 4
    out = gather(parallel_apply(replicas, inputs), "cpu")
    out.pow(2).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    ref = model(x)
    ref.pow(2).sum().backward()
    assert np.allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-6)
    for g, p in zip(grads, list(model.parameters()) + [x]):
        assert np.allclose(g.numpy(), p.grad.numpy(), atol=1e-6)


def test_parallel_apply_reraises_with_replica():
    class Boom(nn.Module):
        def forward(self, x):
            raise KeyError("bad input")
    with pytest.raises(KeyError, match="replica 1"):
        parallel_apply([nn.Identity(), Boom()], [(ember.ones(1),), (ember.ones(1),)])


@pytest.mark.skipif(shutil.which("true") is None, reason="no POSIX tools")
def test_importing_distributed_does_not_start_mpi():
    code = ("import sys, ember, ember.distributed, ember.nn.parallel; "
            "print('mpi4py.MPI' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), timeout=60)
    assert out.stdout.strip() == "False", out.stderr
