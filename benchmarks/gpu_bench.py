"""ember (CuPy) against PyTorch (CUDA) on one GPU, side by side in one process.

    PYTHONPATH=. python benchmarks/gpu_bench.py

Each workload is written once against the PyTorch API (the library is passed in as `torch`),
like benchmarks/workloads.py, whose CPU workloads build their tensors on the CPU and so are
not reused here. Every number is the median of 5 timed runs after warm-up runs (which also
absorb CuPy's kernel compilation), with the device synchronized before and after each run.
The ratio column is torch_time / ember_time: > 1 means ember is faster. Without PyTorch (or
without its CUDA build) only ember's numbers are printed; a workload that fails prints its
error and the others still run.
"""
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import gpt_block  # noqa: E402

RUNS, WARMUP = 5, 3


def median_seconds(torch, fn):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(RUNS):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---------------------------------------------------------------------- workloads
# Each returns (seconds per call, value in its unit, unit, work) where work turns seconds into
# the unit: a rate for TFLOP/s, a time otherwise.
def _matmul(dtype_name, n=4096):
    def run(torch):
        dtype = getattr(torch, dtype_name)
        torch.manual_seed(0)
        a = torch.randn(n, n, device="cuda").to(dtype)
        b = torch.randn(n, n, device="cuda").to(dtype)
        t = median_seconds(torch, lambda: a @ b)
        return t, 2 * n ** 3 / t / 1e12
    run.unit = "TFLOP/s"
    return run


def mlp_step(torch):
    """One SGD step of an MLP 784-1024-1024-10, batch 256."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(256, 784, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    t = median_seconds(torch, step)
    return t, t * 1e3


mlp_step.unit = "ms/step"


def gpt_block_step(torch):
    """One AdamW step of a GPT block (pre-LN, causal self-attention, GELU MLP), the block of
    benchmarks/workloads.py's `gpt` at d=256, 4 heads, sequence 128, batch 16."""
    d, heads, T, B = 256, 4, 128, 16
    torch.manual_seed(0)
    block = gpt_block(torch, d, heads, T).to("cuda")
    opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
    x = torch.randn(B, T, d, device="cuda")

    def step():
        opt.zero_grad()
        block(x).square().mean().backward()
        opt.step()
    t = median_seconds(torch, step)
    return t, t * 1e3


gpt_block_step.unit = "ms/step"


def launch_overhead(torch):
    """A chain of 100 adds on a 16-element cuda tensor, no grad: time per op."""
    x = torch.ones(16, device="cuda")
    n = 100

    def chain():
        y = x
        for _ in range(n):
            y = y + 1.0
        return y
    t = median_seconds(torch, chain)
    return t, t / n * 1e6


launch_overhead.unit = "us/op"

WORKLOADS = [("matmul 4096 float32", _matmul("float32")),
             ("matmul 4096 bfloat16", _matmul("bfloat16")),
             ("MLP 784-1024-1024-10 step, batch 256, SGD", mlp_step),
             ("GPT block step (d=256, 4 heads, T=128, B=16), AdamW", gpt_block_step),
             ("launch overhead (100 adds, 16 elements)", launch_overhead)]


# ---------------------------------------------------------------------- driver
def _libraries():
    libs = {}
    import ember
    if ember.cuda.is_available():
        libs["ember"] = ember
    else:
        print("ember: no CUDA GPU visible (ember.cuda.is_available() is False)")
    try:
        import torch
    except ImportError:
        print("torch: not installed; ember-only numbers")
    else:
        if torch.cuda.is_available():
            libs["torch"] = torch
        else:
            print(f"torch {torch.__version__}: no CUDA; ember-only numbers")
    return libs


def _measure(lib, fn):
    try:
        return fn(lib)
    except Exception as exc:  # noqa: BLE001 - one workload's failure must not stop the rest
        print(f"  {lib.__name__} failed: {type(exc).__name__}: {exc}")
        traceback.print_exc(limit=3, file=sys.stdout)
        return None


def _fmt(v):
    if v is None:
        return "-"
    return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def main():
    libs = _libraries()
    if "ember" not in libs:
        return 1
    rows = []
    for name, fn in WORKLOADS:
        print(f"{name} ...", flush=True)
        res = {lib_name: _measure(lib, fn) for lib_name, lib in libs.items()}
        e, t = res.get("ember"), res.get("torch")
        ratio = t[0] / e[0] if e and t and e[0] > 0 else None
        rows.append((name, fn.unit, e and e[1], t and t[1], ratio))
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'workload':<{width}}  {'unit':<8} {'ember':>10} {'torch':>10} "
          f"{'torch_time/ember_time':>22}")
    for name, unit, e, t, ratio in rows:
        print(f"{name:<{width}}  {unit:<8} {_fmt(e):>10} {_fmt(t):>10} "
              f"{'-' if ratio is None else f'{ratio:.2f}':>22}")
    return 0 if all(r[2] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
