"""Measure ember against PyTorch side by side.

    python benchmarks/run.py [--only NAME,...] [--threads N] [--repeat K] [--quick] [--json F]
                             [--torch-python PATH] [--compile ember|both]

`--torch-python` runs the PyTorch side with another interpreter: one whose environment has
torchvision (which pins its own torch), for the resnet18 workloads.

Each workload runs in a fresh process per library, alternating ember and PyTorch (A B A B)
for K rounds, with the same thread count forced on both. The table gives medians, the ratio
(>1 means ember is faster) and the min-max spread, plus peak resident memory.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from workloads import WORKLOADS  # noqa: E402


def run_one(lib, name, threads, quick, python=sys.executable):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [python, os.path.join(HERE, "worker.py"), "--lib", lib, "--workload", name,
           "--threads", str(threads)] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarize(results):
    values = [r["value"] for r in results if "value" in r]
    if not values:
        return None
    firsts = [r["first_call_ms"] for r in results if "first_call_ms" in r]
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "unit": results[0].get("unit"), "higher": results[0].get("higher_is_better"),
            "rss": max(r["peak_rss_mb"] for r in results),
            "first": statistics.median(firsts) if firsts else None}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--only", default="")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    p.add_argument("--json")
    p.add_argument("--compile", choices=["ember", "both"], default=None,
                   help="run the training steps and op chains under torch.compile: ember's "
                        "side only (against PyTorch eager), or both (against inductor)")
    p.add_argument("--torch-python", default=None,
                   help="interpreter for the PyTorch side (e.g. a venv with torchvision)")
    args = p.parse_args()
    if args.compile:
        os.environ["EMBER_BENCH_COMPILE"] = args.compile   # (read by the workers)
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        p.error(f"unknown workloads: {', '.join(unknown)}")
    libs = ["ember"] + (["torch"] if args.torch_python or importlib.util.find_spec("torch")
                        else [])
    python = {"ember": sys.executable, "torch": args.torch_python or sys.executable}
    rounds = 1 if args.quick else args.repeat
    rows, failures = [], []
    for name in names:
        results = {lib: [] for lib in libs}
        for _ in range(rounds):
            for lib in libs:
                results[lib].append(run_one(lib, name, args.threads, args.quick,
                                            python[lib]))
        for lib in libs:
            for r in results[lib]:
                if "error" in r:
                    failures.append(f"{name} [{lib}]: {r['error']}")
        rows.append((name, {lib: summarize(results[lib]) for lib in libs},
                     {lib: next((r.get("missing") for r in results[lib] if "missing" in r),
                                None) for lib in libs}))
    print_table(rows, args.threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"workload": n, **{lib: s for lib, s in summ.items()},
                        "missing": miss} for n, summ, miss in rows], f, indent=2)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)


def print_table(rows, threads):
    print(f"threads={threads}; ratio > 1 means ember is faster\n")
    head = f"{'workload':22} {'unit':10} {'ember':>10} {'torch':>10} {'ratio':>6}  " \
           f"{'ember min-max':>17} {'rss MB e/t':>12} {'1st call ms e/t':>16}"
    print(head)
    print("-" * len(head))
    for name, summ, missing in rows:
        e, t = summ.get("ember"), summ.get("torch")
        if e is None:
            print(f"{name:22} {'':10} {'n/a':>10}  ({missing.get('ember')})")
            continue
        tv = f"{t['median']:10.3g}" if t else f"{'-':>10}"
        ratio = "-"
        if t and e["median"] and t["median"]:
            faster = e["median"] / t["median"] if e["higher"] else t["median"] / e["median"]
            ratio = f"{faster:.2f}"
        rss = f"{e['rss']:.0f}/{t['rss']:.0f}" if t else f"{e['rss']:.0f}/-"
        first = "/".join("-" if s is None or s["first"] is None else f"{s['first']:.3g}"
                         for s in (e, t))
        print(f"{name:22} {e['unit']:10} {e['median']:10.3g} {tv} {ratio:>6}  "
              f"{e['min']:8.3g}-{e['max']:<8.3g} {rss:>12} {first:>16}")


if __name__ == "__main__":
    main()
