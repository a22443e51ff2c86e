"""A program written for torchrun, unchanged: `ember run --nproc-per-node 2` must run it."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ["RANK"])
world_size = int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ["LOCAL_RANK"])
assert os.environ["MASTER_ADDR"] and int(os.environ["MASTER_PORT"]) > 0
assert int(os.environ["LOCAL_WORLD_SIZE"]) == world_size
dist.init_process_group("gloo", rank=rank, world_size=world_size)
assert dist.get_rank() == rank and dist.get_world_size() == world_size

t = torch.tensor([float(rank + 1)])
dist.all_reduce(t, op=dist.ReduceOp.SUM)
model = DDP(nn.Linear(3, 1))
model(torch.ones(2, 3)).sum().backward()
line = (f"rank {rank}/{world_size} local {local_rank} sum {t.item():g} "
        f"grad {model.module.weight.grad.tolist()}")
print(line, flush=True)
if os.environ.get("EMBER_TEST_OUT"):  # ranks' stdout may interleave inside mpiexec
    with open(os.path.join(os.environ["EMBER_TEST_OUT"], f"rank{rank}.txt"), "w") as f:
        f.write(line)
dist.destroy_process_group()
