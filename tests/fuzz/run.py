"""The differential fuzzer's runner: every op-table entry and every public function of ember,
ember.nn.functional and Tensor that torch also has, called on both with the same random
arguments. Agreement: both raise the same exception type, or both return the same
structure, shapes, dtypes and values.

    python -m tests.fuzz [--long] [--calls N] [--seed S] [--only NAME]"""
import argparse
import collections
import contextlib
import hashlib
import os
import signal
import sys
import warnings

import numpy as np

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)   # op_db is imported as a top-level package, as in tests/

import ember  # noqa: E402
import ember.nn.functional  # noqa: E402

from .allowlist import ALLOWED, NOT_FUZZED, classify, classify_result  # noqa: E402
from .generate import build, mutate_sample, signature_call  # noqa: E402

QUICK_CALLS = 3000
LONG_CALLS = 100_000
CALL_TIMEOUT_S = 5


class Target:
    """One fuzzed callable: name, family, ember callable and torch callable (lib -> fn)."""

    def __init__(self, name, family, get, make_call):
        self.name, self.family, self.get, self.make_call = name, family, get, make_call


def _public(ember_ns, torch_ns):
    names = []
    for name in sorted(set(dir(ember_ns)) & set(dir(torch_ns))):
        if name.startswith("_"):
            continue
        e, t = getattr(ember_ns, name, None), getattr(torch_ns, name, None)
        if not callable(e) or not callable(t) or isinstance(e, type) or isinstance(t, type):
            continue
        names.append(name)
    return names


def targets(torch):
    out = []
    from op_db import FAMILIES
    import importlib
    for family in FAMILIES:
        for info in importlib.import_module(f"op_db.{family}").OPS:
            out.append(Target(f"op_db.{info.name}", f"op_db.{family}",
                              _op_db_get(info), _op_db_call(info)))

    def fn_target(prefix, ember_ns, torch_path, name):
        fn = getattr(ember_ns, name)
        module = getattr(fn, "__module__", None) or "?"
        family = f"{prefix}:{module.replace('ember.', '')}"

        def get(lib, name=name):
            ns = lib
            for part in torch_path:
                ns = getattr(ns, part)
            return getattr(ns, name)
        return Target(f"{prefix}.{name}", family, get,
                      lambda rng, fn=fn: signature_call(rng, fn))

    for name in _public(ember, torch):
        out.append(fn_target("torch", ember, (), name))
    for name in _public(ember.nn.functional, torch.nn.functional):
        out.append(fn_target("F", ember.nn.functional, ("nn", "functional"), name))
    for name in _public(ember.Tensor, torch.Tensor):
        method = getattr(ember.Tensor, name)
        module = getattr(method, "__module__", None) or "?"

        def get(lib, name=name):
            return lambda self, *a, **k: getattr(self, name)(*a, **k)

        def call(rng, method=method):
            from .generate import random_tensor
            args, kwargs = signature_call(rng, method)
            if args and _first_param_is_self(method):
                args = args[1:]
            return [random_tensor(rng)] + args, kwargs
        out.append(Target(f"Tensor.{name}", f"Tensor:{module.replace('ember.', '')}", get,
                          call))
    return [t for t in out if t.name not in NOT_FUZZED]


def _first_param_is_self(fn):
    import inspect
    try:
        first = next(iter(inspect.signature(fn).parameters))
    except (TypeError, ValueError, StopIteration):
        return False
    return first in ("self", "input")


def _op_db_get(info):
    return lambda lib: (lambda *a, **k: (info.torch_call(lib, *a, **k) if lib is not ember
                                         else info.op(ember, *a, **k)))


def _op_db_call(info):
    def call(rng):
        dtype = info.dtypes[rng.integers(len(info.dtypes))]
        samples = info.samples(rng, dtype)
        sample = samples[rng.integers(len(samples))]
        return mutate_sample(rng, list(sample.args), sample.kwargs)
    return call


# ------------------------------------------------------------------------- comparison
_TOL = {"float16": 1e-2, "bfloat16": 4e-2, "float32": 1e-4, "complex64": 1e-4,
        "float64": 1e-9, "complex128": 1e-9}


def _dtype_name(d):
    return str(d).split(".")[-1]


def compare(t_out, e_out, torch, path="result"):
    """None when the outputs agree, else a short reason."""
    if isinstance(t_out, torch.Tensor):
        if not isinstance(e_out, ember.Tensor):
            return f"{path}: torch gave a Tensor, ember {type(e_out).__name__}"
        if tuple(t_out.shape) != tuple(e_out.shape):
            return f"{path}: shape {tuple(e_out.shape)} != torch {tuple(t_out.shape)}"
        td, ed = _dtype_name(t_out.dtype), _dtype_name(e_out.dtype)
        if td != ed:
            return f"{path}: dtype {ed} != torch {td}"
        if t_out.is_sparse or t_out.layout != torch.strided:
            return None
        a = t_out.detach().resolve_conj().resolve_neg()
        a = (a.float() if td == "bfloat16" else a).numpy()
        b = e_out.detach().resolve_conj()._data
        b = b.astype(np.float32) if ed == "bfloat16" else np.asarray(b)
        if td in _TOL:
            tol = _TOL[td]
            ok = np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
        else:
            ok = np.array_equal(a, b)
        return None if ok else f"{path}: values differ ({td})"
    if isinstance(t_out, (tuple, list)) and not isinstance(t_out, torch.Size):
        if not isinstance(e_out, (tuple, list)) or len(e_out) != len(t_out):
            return f"{path}: torch gave a {type(t_out).__name__} of {len(t_out)}, ember " \
                f"{type(e_out).__name__}"
        for i, (t, e) in enumerate(zip(t_out, e_out)):
            why = compare(t, e, torch, f"{path}[{i}]")
            if why:
                return why
        return None
    if isinstance(t_out, torch.dtype):
        return None if _dtype_name(t_out) == _dtype_name(e_out) else f"{path}: dtype differs"
    if isinstance(t_out, (bool, int, float, complex, np.number, np.bool_)):
        if isinstance(e_out, ember.Tensor) or not isinstance(
                e_out, (bool, int, float, complex, np.number, np.bool_)):
            return f"{path}: torch gave {type(t_out).__name__}, ember {type(e_out).__name__}"
        if type(t_out) is bool and type(e_out) is not bool:
            return f"{path}: torch gave a bool, ember {type(e_out).__name__}"
        ok = np.allclose(complex(t_out), complex(e_out), rtol=1e-6, atol=1e-6, equal_nan=True)
        return None if ok else f"{path}: {e_out!r} != torch {t_out!r}"
    if isinstance(t_out, torch.Size) or t_out is None or isinstance(t_out, str):
        same = (tuple(t_out) == tuple(e_out)) if isinstance(t_out, torch.Size) \
            else t_out == e_out
        return None if same else f"{path}: {e_out!r} != torch {t_out!r}"
    # Other objects (generators, storages, named tuples handled above...): kinds must match.
    if type(t_out).__name__ != type(e_out).__name__:
        return f"{path}: torch gave {type(t_out).__name__}, ember {type(e_out).__name__}"
    return None


def _error_kind(exc):
    """The exception's first class in the builtins (torch's LinAlgError is a RuntimeError)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(exc).__name__


class _Timeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


@contextlib.contextmanager
def _deadline(seconds):
    """SIGALRM where it exists (the main thread on POSIX): a call that loops forever is
    reported as a timeout instead of hanging the suite."""
    usable = hasattr(signal, "SIGALRM") and \
        __import__("threading").current_thread() is __import__("threading").main_thread()
    if usable:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(seconds)
    try:
        yield
    finally:
        if usable:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def _run_one(lib, fn, args, kwargs, seed):
    lib.manual_seed(seed)   # random ops: ember reproduces torch's CPU stream
    built_args, built_kwargs = build(lib, args), build(lib, kwargs)
    try:
        with _deadline(CALL_TIMEOUT_S):
            out = fn(*built_args, **built_kwargs)
        return "ok", out, built_args
    except _Timeout:
        return "timeout", None, built_args
    except RecursionError as exc:
        return "raise", exc, built_args
    except Exception as exc:
        return "raise", exc, built_args


def _describe(kind, out):
    what = {"ok": "returned", "raise": "raised", "timeout": "timed out"}[kind]
    return what + (f" {type(out).__name__}: {str(out)[:120]}" if kind == "raise" else "")


def run_call(torch, target, rng, seed):
    """One call on both; (agree, reason, call repr, class of the disagreement or None)."""
    args, kwargs = target.make_call(rng)
    call = f"{target.name}(*{args!r}, **{kwargs!r})"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            t_fn, e_fn = target.get(torch), target.get(ember)
        except AttributeError as exc:
            return False, f"missing: {exc}", call, None
        t_kind, t_out, t_args = _run_one(torch, t_fn, args, kwargs, seed)
        e_kind, e_out, e_args = _run_one(ember, e_fn, args, kwargs, seed)
        if t_kind == "raise" and e_kind == "raise" and _error_kind(t_out) == _error_kind(e_out):
            return True, None, call, None
        if t_kind == e_kind == "timeout":
            return True, None, call, None
        if t_kind != e_kind or t_kind == "raise":
            why = f"torch {_describe(t_kind, t_out)}; ember {_describe(e_kind, e_out)}"
            return False, why, call, classify((t_kind, t_out), (e_kind, e_out))
        try:
            why = compare(t_out, e_out, torch)
            if why is None:   # in-place effects on the arguments must agree as well
                why = compare(list(t_args), list(e_args), torch, "args after the call")
        except Exception as exc:   # comparing raised: an output ember cannot convert
            why = f"comparison raised {type(exc).__name__}: {exc}"
        return why is None, why, call, None if why is None else classify_result(why)


def _stable_hash(text):
    """64 bits of BLAKE2b: the same in every process (Python's hash() is salted per run)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def _mix(x):
    """splitmix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def draw(all_targets, keys, seed, i):
    """Call i's target and argument generator.

    NOTE: the target is chosen by rendezvous hashing (the highest score of (seed, i, name)
    wins), not by index into the list: a name added to or removed from ember then changes
    only the calls it wins or won, and every other call keeps its target and, since the
    generator is seeded by (seed, i, name) alone, its arguments. Indexing reshuffled the
    whole seeded CI round whenever the namespace grew."""
    call_key = np.uint64(_stable_hash(f"{seed}:{i}"))
    with np.errstate(over="ignore"):
        target = all_targets[int(np.argmax(_mix(keys ^ call_key)))]
    name_key = _stable_hash(target.name)
    rng = np.random.default_rng([seed, i, name_key >> 32, name_key & 0xFFFFFFFF])
    return target, rng


def fuzz(calls, seed=0, only=None, progress=False):
    """Run `calls` calls; returns (per-family [agree, total], disagreements)."""
    import torch
    torch.set_num_threads(1)
    all_targets = targets(torch)
    if only:
        all_targets = [t for t in all_targets if only in t.name]
    keys = np.array([_stable_hash(t.name) for t in all_targets], dtype=np.uint64)
    per_family = collections.defaultdict(lambda: [0, 0])
    disagreements = []
    for i in range(calls):
        target, rng = draw(all_targets, keys, seed, i)
        ok, why, call, cls = run_call(torch, target, rng, seed * 1_000_003 + i)
        stats = per_family[target.family]
        stats[1] += 1
        stats[0] += ok
        if not ok:
            disagreements.append((i, target.name, why, call, cls))
        if progress and i and i % 10_000 == 0:
            print(f"... {i} calls", file=sys.stderr, flush=True)
    return dict(per_family), disagreements


def explained(disagreement):
    """The class or allow-list entry that explains a disagreement, or None (a new one)."""
    _, name, _, _, cls = disagreement
    return cls or ("target" if name in ALLOWED else None)


def new_disagreements(disagreements):
    return [d for d in disagreements if explained(d) is None]


def report(per_family, disagreements, file=sys.stdout):
    total = sum(n for _, n in per_family.values())
    agreed = sum(a for a, _ in per_family.values())
    print(f"{'family':44} {'agree':>7} {'calls':>7} {'%':>7}", file=file)
    for family in sorted(per_family):
        a, n = per_family[family]
        print(f"{family:44} {a:7d} {n:7d} {100 * a / n:7.2f}", file=file)
    print(f"{'TOTAL':44} {agreed:7d} {total:7d} {100 * agreed / max(total, 1):7.3f}",
          file=file)
    classes = collections.Counter(explained(d) for d in disagreements)
    unexplained = classes.pop(None, 0)
    print(f"\n{len(disagreements)} disagreements: {unexplained} new, the rest explained by",
          file=file)
    for name, n in classes.most_common():
        print(f"    {name:20} {n:6d}", file=file)
    explained_ok = agreed + sum(classes.values())
    print(f"agreement counting explained disagreements as agreement: "
          f"{100 * explained_ok / max(total, 1):.3f}%\n", file=file)
    for d in sorted(disagreements, key=lambda d: (explained(d) or "", d[1])):
        i, name, why, call, _ = d
        print(f"[{explained(d) or 'NEW'}] #{i} {name}: {why}\n    {call[:300]}", file=file)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help=f"{LONG_CALLS} calls")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="targets whose name contains this")
    ns = parser.parse_args(argv)
    calls = ns.calls or (LONG_CALLS if ns.long else QUICK_CALLS)
    per_family, disagreements = fuzz(calls, ns.seed, ns.only, progress=True)
    report(per_family, disagreements)
    return 1 if new_disagreements(disagreements) else 0


if __name__ == "__main__":
    if __package__ in (None, ""):   # python tests/fuzz/run.py
        sys.path.insert(0, os.path.dirname(_TESTS))
        from tests.fuzz.run import main as _main
        sys.exit(_main())
    sys.exit(main())
