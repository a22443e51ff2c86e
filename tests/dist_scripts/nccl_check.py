"""NCCL on a real GPU (scripts/gpu_check.sh runs it under mpiexec, one rank per GPU): every
collective on CUDA tensors against the same values computed on the host, and DDP steps.
Prints 'rank R ALL OK'; exits 0 with a note where mpi4py or a GPU is missing."""
import sys

import numpy as np

import ember

try:
    import mpi4py  # noqa: F401
except ImportError:
    print("nccl_check: mpi4py is not installed (pip install 'ember[distributed]'): skipped")
    sys.exit(0)
if not ember.cuda.is_available():
    print("nccl_check: no CUDA GPU: skipped")
    sys.exit(0)

import ember.distributed as dist  # noqa: E402
from ember import nn  # noqa: E402

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
device = ember.device("cuda", rank % ember.cuda.device_count())
ember.cuda.set_device(device)


def check(name, ok):
    if not ok:
        raise AssertionError(f"rank {rank}: {name} failed")
    if rank == 0:
        print("OK", name, flush=True)


base = np.arange(6, dtype=np.float32)
every_rank = np.stack([base * (r + 1) for r in range(world)])
for op, ref in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max),
                (dist.ReduceOp.MIN, np.min)):
    t = ember.tensor(base * (rank + 1), device=device)
    dist.all_reduce(t, op=op)
    check(f"all_reduce {op}", np.allclose(t.cpu().numpy(), ref(every_rank, axis=0)))
t = ember.tensor(base * (rank + 1), device=device)
dist.broadcast(t, src=0)
check("broadcast", np.array_equal(t.cpu().numpy(), base))
parts = [ember.empty(6, device=device) for _ in range(world)]
dist.all_gather(parts, ember.tensor(base + rank, device=device))
check("all_gather", all(np.array_equal(p.cpu().numpy(), base + r) for r, p in enumerate(parts)))
out = ember.empty(2, device=device)
dist.reduce_scatter_tensor(out, ember.ones(2 * world, device=device))
check("reduce_scatter_tensor", np.array_equal(out.cpu().numpy(), np.full(2, world)))
work = dist.all_reduce(ember.ones(3, device=device), async_op=True)
work.wait()
check("async all_reduce", True)

ember.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    ddp(ember.randn(4, 8, device=device)).square().mean().backward()
    opt.step()
weights = ember.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [ember.empty_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
check("DDP keeps replicas equal", all(bool((g == weights).all()) for g in gathered))
dist.destroy_process_group()
print(f"rank {rank} ALL OK", flush=True)
