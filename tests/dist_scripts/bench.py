"""Speed report (not a test): `mpiexec -n 2 python tests/dist_scripts/bench.py`.

1. all_reduce of 100 MB float32: ember vs mpi4py's own Allreduce on a NumPy array.
2. DDP step time on an MLP vs the same step without DDP (one process's share of the batch).
"""
import time

import numpy as np
from mpi4py import MPI

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank = dist.get_rank()
comm = MPI.COMM_WORLD


def best(fn, reps):
    times = []
    for _ in range(reps):
        comm.Barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


a = np.ones(25 * 1024 * 1024, np.float32)  # 100 MiB
t = ember.ones(25 * 1024 * 1024)
for _ in range(2):
    ref = best(lambda: comm.Allreduce(MPI.IN_PLACE, a), 5)
    ours = best(lambda: dist.all_reduce(t), 5)
if rank == 0:
    print(f"all_reduce 100 MiB float32: mpi4py min {ref[0] * 1e3:.1f} ms (median "
          f"{ref[1] * 1e3:.1f}), ember min {ours[0] * 1e3:.1f} ms (median "
          f"{ours[1] * 1e3:.1f}): ratio {ours[0] / ref[0]:.3f} (min), "
          f"{ours[1] / ref[1]:.3f} (median)")

ember.manual_seed(0)
width = 512


def make():
    return nn.Sequential(nn.Linear(256, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, 10))



x, y = ember.randn(64, 256), ember.randint(0, 10, (64,))
loss_fn = nn.CrossEntropyLoss()


def stepper(model):
    opt = ember.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return step


plain, ddp = stepper(make()), stepper(DDP(make()))
for _ in range(3):
    p = best(plain, 20)
    d = best(ddp, 20)
if rank == 0:
    n_params = sum(q.numel() for q in make().parameters())
    print(f"MLP step ({n_params} params, batch 64 per rank): plain {p[0] * 1e3:.2f} ms, "
          f"DDP {d[0] * 1e3:.2f} ms (min; medians {p[1] * 1e3:.2f} / {d[1] * 1e3:.2f}): "
          f"overhead {(d[0] - p[0]) * 1e3:.2f} ms")
