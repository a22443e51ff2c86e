"""A torchrun-style GPU program (backend 'nccl', one device per rank, DDP with device_ids)
run under mpiexec -n 2 on the test suite's NumPy stand-in for CUDA (EMBER_CUDA_STANDIN=2):
device placement through collectives and DDP, against single-process training on the CPU.
On the stand-in, 'nccl' groups carry CUDA tensors over MPI (there is no NCCL to run)."""
import os

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

assert os.environ.get("EMBER_CUDA_STANDIN") == "2" and ember.cuda.device_count() == 2
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
device = ember.device("cuda", rank)
ember.cuda.set_device(rank)


def check(name, ok, detail=""):
    if not ok:
        raise AssertionError(f"rank {rank}: {name} failed {detail}")
    if rank == 0:
        print("OK", name, flush=True)


check("backend", dist.get_backend() == "nccl")
t = ember.full((3,), float(rank + 1), device=device)
dist.all_reduce(t)
check("all_reduce on the rank's device", t.device == device and t.cpu().tolist() == [3.0] * 3)
b = ember.arange(4.0, device=device) * (rank + 1)
dist.broadcast(b, src=1)
check("broadcast", b.device == device and b.cpu().tolist() == [0.0, 2.0, 4.0, 6.0])
parts = [ember.empty(2, device=device) for _ in range(world)]
dist.all_gather(parts, ember.full((2,), float(rank), device=device))
check("all_gather", all(p.device == device and p.cpu().tolist() == [float(r)] * 2
                        for r, p in enumerate(parts)))

ember.manual_seed(100)          # rank 0's weights, which DDP gives every rank
reference = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
ember.manual_seed(100 + rank)   # different weights per rank: DDP broadcasts rank 0's
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
ddp = DDP(model, device_ids=[rank])
check("broadcast at construction", all(
    float((p.cpu() - q).abs().max()) == 0 for p, q in zip(model.parameters(),
                                                        reference.parameters())))
opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
g = ember.Generator().manual_seed(5)
x, y = ember.randn(10 * 8, 6, generator=g), ember.randint(0, 3, (10 * 8,), generator=g)
loss_fn = nn.CrossEntropyLoss()
for step in range(10):
    xb, yb = x[step * 8:(step + 1) * 8], y[step * 8:(step + 1) * 8]
    mine = slice(rank * 4, (rank + 1) * 4)
    opt.zero_grad()
    out = ddp(xb[mine].to(device))
    loss_fn(out, yb[mine].to(device)).backward()
    opt.step()
    ref_opt.zero_grad()
    loss_fn(reference(xb), yb).backward()
    ref_opt.step()
check("output on the rank's device", out.device == device)
check("gradients on the rank's device", all(p.grad.device == device
                                            for p in model.parameters()))
diff = max(float((p.detach().cpu() - q.detach()).abs().max())
           for p, q in zip(model.parameters(), reference.parameters()))
check("10 steps equal single-process CPU training", diff < 1e-6, f"(max diff {diff})")
dist.destroy_process_group()
print(f"rank {rank} ALL OK", flush=True)
