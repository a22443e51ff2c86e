"""DDP checks, run under mpiexec -n 2 by tests/test_distributed.py: training equals
single-process training on the full batch; no_sync; bucket views; unused parameters."""
import copy
import sys

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.data.distributed import DistributedSampler

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
TOL = 1e-6


def max_diff(a, b):
    return max(float((p - q).detach().abs().max())
               for p, q in zip(a.parameters(), b.parameters()))


def check(name, ok, detail=""):
    if not ok:
        raise AssertionError(f"rank {rank}: {name} failed {detail}")
    if rank == 0:
        print("OK", name, flush=True)


def mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 3))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 3))


def train_equal(name, make, x_shape, batch, steps=20, **ddp_kwargs):
    """20 steps of SGD on `world` ranks (DistributedSampler) vs one process on the batch."""
    ember.manual_seed(1234 + rank)  # different init per rank: DDP must broadcast rank 0's
    model = make()
    ember.manual_seed(1234)
    reference = make()  # rank 0's initial weights, everywhere
    g = ember.Generator().manual_seed(7)
    n = batch * steps
    x = ember.randn(n, *x_shape, generator=g)
    y = ember.randint(0, 3, (n,), generator=g)
    data = TensorDataset(x, y)
    ddp = DDP(model, **ddp_kwargs)
    check(f"{name}: broadcast at construction", max_diff(model, reference) == 0)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(data, shuffle=True, seed=3)
    loader = DataLoader(data, batch_size=batch // world, sampler=sampler)
    order = _global_order(sampler, world, batch // world)
    full = DataLoader(data, batch_size=batch, sampler=order)
    loss_fn = nn.CrossEntropyLoss()
    for (xb, yb), (xf, yf) in zip(loader, full):
        opt.zero_grad()
        loss_fn(ddp(xb), yb).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(reference(xf), yf).backward()
        ref_opt.step()
    d = max_diff(model, reference)
    check(f"{name}: 20 steps equal single-process full batch", d < TOL, f"(max diff {d})")


def _global_order(sampler, world, b):
    """The full-batch order matching the shards: step k of rank r takes items
    [k*b:(k+1)*b] of rank r's shard; full batch k is their concatenation."""
    shards = []
    for r in range(world):
        s = copy.copy(sampler)
        s.rank = r
        shards.append(list(s))
    return [i for k in range(0, len(shards[0]), b) for s in shards for i in s[k:k + b]]


def main():
    batch = 8
    train_equal("mlp", mlp, (8,), batch, bucket_cap_mb=0.0005)
    train_equal("mlp bucket view", mlp, (8,), batch, gradient_as_bucket_view=True)
    if hasattr(nn, "Conv2d") and hasattr(nn, "MaxPool2d"):
        try:
            train_equal("cnn", cnn, (1, 8, 8), batch)
        except NotImplementedError as exc:  # layers still being written
            print("SKIP cnn:", exc, flush=True)
    overlap()
    no_sync_equals_large_batch()
    unused_parameters()
    state_dict_and_buffers()
    print(f"rank {rank} ALL OK", flush=True)


def overlap():
    """A full bucket's all-reduce starts while backward is still running."""
    model = mlp()
    ddp = DDP(model, bucket_cap_mb=0.0005)  # 512 bytes: several buckets
    ddp(ember.randn(4, 8)).sum().backward()  # the buckets follow the arrival order after it
    last = ddp.reducer.arrival[-1]
    launched = []
    # the hook of the parameter whose gradient arrives last runs at the end of backward
    list(model.parameters())[last].register_hook(
        lambda g: launched.append([b.work is not None for b in ddp.reducer.buckets]))
    ddp(ember.randn(4, 8)).sum().backward()
    state = launched[0]
    check("communication starts before backward ends",
          len(state) > 2 and state[0] and not all(state), f"{state}")
    check("every bucket reduced at the end",
          all(b.work is not None and b.work.is_completed() for b in ddp.reducer.buckets))


def no_sync_equals_large_batch():
    ember.manual_seed(0)
    model = mlp()
    reference = copy.deepcopy(model)
    ddp = DDP(model)
    g = ember.Generator().manual_seed(11)
    x = ember.randn(world, 2, 4, 8, generator=g)  # rank r, micro-batch k, items
    y = ember.randint(0, 3, (world, 2, 4), generator=g)
    loss_fn = nn.CrossEntropyLoss()
    with ddp.no_sync():
        loss_fn(ddp(x[rank, 0]), y[rank, 0]).backward()
    grads_local = [p.grad.clone() for p in model.parameters()]
    loss_fn(ddp(x[rank, 1]), y[rank, 1]).backward()
    # large batch: mean over the world's micro-batch 0 and 1, summed over micro-batches
    for k in range(2):
        loss_fn(reference(x[:, k].reshape(-1, 8)), y[:, k].reshape(-1)).backward()
    d = max(float((p.grad - q.grad).abs().max())
            for p, q in zip(model.parameters(), reference.parameters()))
    check("no_sync accumulation equals the large-batch gradient", d < TOL, f"({d})")
    # the no_sync backward did not communicate
    x0 = x[rank, 0]
    ember.manual_seed(0)
    alone = mlp()
    loss_fn(alone(x0), y[rank, 0]).backward()
    d = max(float((a - p.grad).abs().max()) for a, p in zip(grads_local, alone.parameters()))
    check("no_sync keeps gradients local", d < TOL, f"({d})")


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)

    def forward(self, x, use_b):
        return self.b(x) if use_b else self.a(x)


def unused_parameters():
    ember.manual_seed(5)
    model = TwoHeads()
    ddp = DDP(model, find_unused_parameters=True)
    x = ember.full((3, 4), float(rank + 1))
    ddp(x, use_b=False).sum().backward()
    check("unused everywhere: grad stays None", model.b.weight.grad is None)
    expected = ember.full((2, 4), 3.0 * sum(range(1, world + 1)) / world)
    check("used parameter averaged", ember.allclose(model.a.weight.grad, expected))
    model.zero_grad()
    ddp(x, use_b=(rank == 0)).sum().backward()
    # rank 0 used b, the others a: each grad is its users' sum / world
    eb = ember.full((2, 4), 3.0 * 1 / world)
    check("unused on some ranks: average over all ranks",
          ember.allclose(model.b.weight.grad, eb), f"{model.b.weight.grad}")
    plain = DDP(TwoHeads())
    plain(x, use_b=False).sum().backward()
    try:
        plain(x, use_b=False)
    except RuntimeError as exc:
        check("unused without find_unused_parameters raises",
              "Expected to have finished reduction" in str(exc))
    else:
        check("unused without find_unused_parameters raises", False)


def state_dict_and_buffers():
    ember.manual_seed(9)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    ddp = DDP(model)
    keys = list(ddp.state_dict())
    check("state_dict keys have the module. prefix",
          keys[0] == "module.0.weight" and all(k.startswith("module.") for k in keys))
    check("module attribute", ddp.module is model)
    ddp(ember.randn(5, 4) + rank)  # running stats differ per rank now
    mean = model[1].running_mean.clone()
    ddp.eval()
    with ember.no_grad():
        ddp(ember.randn(5, 4))  # forward broadcasts rank 0's buffers first
    stats = [None] * world
    dist.all_gather_object(stats, (mean, model[1].running_mean.clone()))
    check("buffers differed before the forward", not ember.equal(stats[0][0], stats[1][0]))
    check("buffers broadcast from rank 0 before forward",
          all(ember.equal(s[1], stats[0][0]) for s in stats))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
