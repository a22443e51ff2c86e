"""Benchmark workloads, each written once against the PyTorch API and run on both libraries
(the module is passed in as `torch`). Each returns (value, unit, higher_is_better)."""
import io
import os
import time

import numpy as np

WORKLOADS = {}
first_call = [None]   # seconds of the last _timeit's warm-up call


def workload(description):
    """Register a workload; `description` says in one line what it measures."""
    def register(fn):
        fn.description = description
        WORKLOADS[fn.__name__] = fn
        return fn
    return register


def _timeit(fn, min_time=0.5, min_runs=3, quick=False):
    """Median seconds per call of fn() over repeated runs (after one warm-up call, whose
    time `first_call` keeps: under --compile, the capture)."""
    t0 = time.perf_counter()
    fn()
    first_call[0] = time.perf_counter() - t0
    times = []
    budget = 0.05 if quick else min_time
    start = time.perf_counter()
    while len(times) < (1 if quick else min_runs) or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _maybe_compiled(torch, fn):
    """`fn` under `torch.compile` when run.py's --compile asks for it on this side
    (EMBER_BENCH_COMPILE: "ember" compiles ember's side only, "both" PyTorch's too)."""
    mode = os.environ.get("EMBER_BENCH_COMPILE", "")
    if mode == "both" or (mode == "ember" and torch.__name__ == "ember"):
        return torch.compile(fn)
    return fn


@workload("ms: `import <library>` in a fresh interpreter (median of 7)")
def import_time(torch, quick):
    import subprocess
    import sys
    code = (f"import time; t = time.perf_counter(); import {torch.__name__}; "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(2 if quick else 7)]
    return float(np.median(runs)) * 1e3, "ms", False


@workload("us per op: 16-element mul/add/relu chain, forward + backward (autograd overhead)")
def op_overhead_autograd(torch, quick):
    x = torch.ones(16, requires_grad=True)
    w = torch.full((16,), 0.5)
    n = 50

    def step():
        y = x
        for _ in range(n):
            y = torch.relu(y * w + 1.0)
        y.sum().backward()
        x.grad = None
    return _timeit(_maybe_compiled(torch, step), quick=quick) / (3 * n + 1) * 1e6, "us/op", False


@workload("us per op: a chain of 4-element adds without grad (dispatch overhead)")
def op_overhead_nograd(torch, quick):
    a, b = torch.ones(4), torch.ones(4)

    def step():   # (a chain, so that a compiled step cannot drop the adds as dead code)
        y = a
        for _ in range(1000):
            y = y + b
        return y
    return _timeit(_maybe_compiled(torch, step), quick=quick) / 1000 * 1e6, "us/op", False


@workload("GFLOP/s: 2048x2048 float32 matmul (BLAS)")
def matmul_2048(torch, quick):
    n = 256 if quick else 2048
    a = torch.tensor(np.random.default_rng(0).standard_normal((n, n)), dtype=torch.float32)
    b = torch.tensor(np.random.default_rng(1).standard_normal((n, n)), dtype=torch.float32)
    t = _timeit(lambda: a @ b, quick=quick)
    return 2 * n ** 3 / t / 1e9, "GFLOP/s", True


def _randn_workload(dtype_name, quick, torch):
    n = 100_000 if quick else 10_000_000
    dtype = getattr(torch, dtype_name)

    def draw():
        torch.manual_seed(0)
        torch.randn(n, dtype=dtype)
    return _timeit(draw, quick=quick) * 1e3, "ms", False


@workload("ms: 10M float32 randn, seeded (bit-identical streams)")
def randn_float32(torch, quick):
    return _randn_workload("float32", quick, torch)


@workload("ms: 10M float64 randn, seeded (bit-identical streams)")
def randn_float64(torch, quick):
    return _randn_workload("float64", quick, torch)


@workload("ms: 4M-element float32 chain (x*2+1, exp, *y, sum) without grad")
def elementwise_4m(torch, quick):
    n = 4096 if quick else 4_000_000
    x = torch.tensor(np.random.default_rng(0).uniform(-1, 1, n), dtype=torch.float32)
    y = torch.tensor(np.random.default_rng(1).uniform(-1, 1, n), dtype=torch.float32)
    return _timeit(lambda: ((x * 2 + 1).exp() * y).sum(), quick=quick) * 1e3, "ms", False


def _train_steps(torch, model, make_batch, loss_fn, opt, quick, steps=None):
    batch = make_batch()

    def step():
        inputs, target = batch
        opt.zero_grad()
        loss = loss_fn(model(inputs), target)
        loss.backward()
        opt.step()
    return _timeit(_maybe_compiled(torch, step), quick=quick) * 1e3, "ms/step", False


@workload("ms/step: MLP 784-512-256-10 training, batch 128, SGD momentum")
def mlp_sgd(torch, quick):
    nn = torch.nn
    torch.manual_seed(0)
    h = (64, 32) if quick else (512, 256)
    model = nn.Sequential(nn.Linear(784, h[0]), nn.ReLU(), nn.Linear(h[0], h[1]), nn.ReLU(),
                          nn.Linear(h[1], 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _train_steps(torch, model, lambda: (torch.randn(128, 784),
                                               torch.randint(0, 10, (128,))),
                        nn.CrossEntropyLoss(), opt, quick)


@workload("ms/step: small MLP 32-64-64-1 with Adam, batch 32 (overhead-bound)")
def small_mlp_adam(torch, quick):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return _train_steps(torch, model, lambda: (torch.randn(32, 32), torch.randn(32, 1)),
                        nn.MSELoss(), opt, quick)


@workload("ms/step: LeNet-style CNN training on 1x28x28, batch 64, SGD")
def lenet(torch, quick):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    b = 8 if quick else 64
    return _train_steps(torch, model, lambda: (torch.randn(b, 1, 28, 28),
                                               torch.randint(0, 10, (b,))),
                        nn.CrossEntropyLoss(), opt, quick)


@workload("ms/step: two ResNet basic blocks with BatchNorm on 3x32x32, batch 32")
def resnet_blocks(torch, quick):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(x + self.b2(self.c2(y)))

    torch.manual_seed(0)
    c = 16
    model = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), Block(c), Block(c),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    b = 4 if quick else 32
    return _train_steps(torch, model, lambda: (torch.randn(b, 3, 32, 32),
                                               torch.randint(0, 10, (b,))),
                        nn.CrossEntropyLoss(), opt, quick)


def _recurrent_training(torch, quick, layer):
    """Adam steps of `layer` (32 inputs, 128 hidden, batch_first) and a linear head on its
    last output, over 35 steps of a batch of 32."""
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = layer(32, 128, batch_first=True)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    t = 4 if quick else 35
    return _train_steps(torch, model, lambda: (torch.randn(32, t, 32),
                                               torch.randint(0, 10, (32,))),
                        nn.CrossEntropyLoss(), opt, quick)


@workload("ms/step: LSTM (1 layer, 128 hidden) over 35 steps, batch 32, Adam")
def lstm(torch, quick):
    return _recurrent_training(torch, quick, torch.nn.LSTM)


@workload("ms/step: GRU (1 layer, 128 hidden) over 35 steps, batch 32, Adam")
def gru(torch, quick):
    return _recurrent_training(torch, quick, torch.nn.GRU)


def gpt_block(torch, d, heads, T):
    """A pre-LN transformer block (causal self-attention, GELU MLP) on (B, T, d) inputs; also
    benchmarks/gpu_bench.py's GPU workload."""
    nn = torch.nn
    F = nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.register_buffer("mask", torch.tril(torch.ones(T, T)) == 0)

        def forward(self, x):
            B = x.shape[0]
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.view(B, T, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / (d // heads) ** 0.5
            att = F.softmax(att.masked_fill(self.mask, float("-inf")), dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, d))
            return x + self.mlp(self.ln2(x))
    return Block()


@workload("ms/step: 2-layer GPT-style transformer (d=128, 4 heads, T=64, batch 16), AdamW")
def gpt(torch, quick):
    nn = torch.nn
    d, heads, T, V = 128, 4, (16 if quick else 64), 256

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, d), nn.Embedding(T, d)
            self.blocks = nn.Sequential(gpt_block(torch, d, heads, T),
                                        gpt_block(torch, d, heads, T))
            self.head = nn.Linear(d, V)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(T))
            return self.head(self.blocks(x)).view(-1, V)

    torch.manual_seed(0)
    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return _train_steps(torch, model, lambda: (torch.randint(0, V, (16, T)),
                                               torch.randint(0, V, (16 * T,))),
                        nn.CrossEntropyLoss(), opt, quick)


def _optimizer_step(torch, make_opt, quick):
    torch.manual_seed(0)
    sizes = [(100, 100)] * 50 + [(100,)] * 50  # about 1M values in 100 tensors
    if quick:
        sizes = [(10, 10)] * 5 + [(10,)] * 5
    params = [torch.nn.Parameter(torch.randn(*s)) for s in sizes]
    for p in params:
        p.grad = torch.randn(*p.shape)
    opt = make_opt(params)
    return _timeit(opt.step, quick=quick) * 1e3, "ms/step", False


@workload("ms/step: Adam step over 100 parameter tensors (~1M values)")
def adam_step(torch, quick):
    return _optimizer_step(torch, lambda p: torch.optim.Adam(p, lr=1e-3), quick)


@workload("ms/step: SGD momentum step over 100 parameter tensors (~1M values)")
def sgd_step(torch, quick):
    return _optimizer_step(torch, lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9), quick)


@workload("samples/s: DataLoader, 1x28x28 float32 per-sample transform, batch 64, 2 workers")
def dataloader(torch, quick):
    from_data = torch.utils.data
    n = 2048 if quick else 60000

    class Digits(from_data.Dataset):
        def __init__(self):
            self.x = np.random.default_rng(0).random((n, 1, 28, 28), dtype=np.float32)

        def __len__(self):
            return n

        def __getitem__(self, i):
            return (torch.from_numpy(self.x[i]) - 0.5) / 0.25, i % 10

    loader = from_data.DataLoader(Digits(), batch_size=64, num_workers=2)
    t0 = time.perf_counter()
    count = 0
    for x, y in loader:
        count += x.shape[0]
    return count / (time.perf_counter() - t0), "samples/s", True


@workload("ms: save + load of a 50M-value state_dict through an in-memory buffer")
def save_load(torch, quick):
    n = 100 if quick else 5000
    state = {f"layer{i}.weight": torch.randn(n, 1000) for i in range(10)}

    def roundtrip():
        buf = io.BytesIO()
        torch.save(state, buf)
        buf.seek(0)
        torch.load(buf)
    return _timeit(roundtrip, quick=quick, min_runs=2) * 1e3, "ms", False


def _vision_models(torch):
    if torch.__name__ == "ember":
        return torch.vision.models
    import torchvision  # the PyTorch side needs torchvision beside torch (--torch-python)
    return torchvision.models


@workload("ms/batch: resnet18 inference, batch 8 at 3x224x224")
def resnet18_inference(torch, quick):
    models = _vision_models(torch)
    torch.manual_seed(0)
    model = models.resnet18().eval()
    size = 64 if quick else 224
    x = torch.randn(2 if quick else 8, 3, size, size)
    with torch.no_grad():
        return _timeit(lambda: model(x), quick=quick, min_runs=2) * 1e3, "ms/batch", False


@workload("ms/step: resnet18 training, batch 32 at 3x32x32, SGD momentum")
def resnet18_train(torch, quick):
    models = _vision_models(torch)
    torch.manual_seed(0)
    model = models.resnet18(num_classes=10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    b = 4 if quick else 32
    return _train_steps(torch, model, lambda: (torch.randn(b, 3, 32, 32),
                                               torch.randint(0, 10, (b,))),
                        torch.nn.CrossEntropyLoss(), opt, quick)


def _rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@workload("MB: growth of each worker's resident memory over an epoch of a list-of-objects "
          "dataset (copy-on-read of refcounts), 2 workers")
def dataloader_worker_rss(torch, quick):
    n = 2000 if quick else 60000
    data = torch.utils.data

    class ListDataset(data.Dataset):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.items = [(rng.random(64).tolist(), i % 10) for i in range(n)]

        def __len__(self):
            return n

        def __getitem__(self, i):
            values, label = self.items[i]
            return torch.tensor(values), label

    loader = data.DataLoader(ListDataset(), batch_size=64, num_workers=2)
    it = iter(loader)
    next(it)
    pids = [w.pid for w in it._workers]
    start = {pid: _rss_mb(pid) for pid in pids}
    peak = dict(start)
    for step, _ in enumerate(it):
        if step % 50 == 0:
            for pid in pids:
                peak[pid] = max(peak[pid], _rss_mb(pid))
    return max(peak[p] - start[p] for p in pids), "MB", False
