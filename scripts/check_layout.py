"""Fail on a file over 500 lines, a function over 60 lines, or an import against the layers.

    python scripts/check_layout.py          # exit 1 on any new violation
    python scripts/check_layout.py --all    # list every violation, known ones too

The layers are those of docs/ARCHITECTURE.md, lowest first. A module may import from its own
layer and the layers below; an import of a higher layer (at module level or inside a
function) closes a cycle between layers. KNOWN lists the violations that stood when this
check was written, to be shrunk, never grown: a listed one that is gone is reported so that
its line is removed too.
"""
import ast
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60

# Lowest first: (layer, module prefixes). A module belongs to its longest matching prefix;
# modules under no prefix are not checked.
LAYERS = [
    ("backends", ["ember.backends"]),
    ("tensor", ["ember._dtype", "ember._device", "ember._size", "ember._constants",
                "ember._tensor", "ember._tensor_conversions", "ember._inplace",
                "ember._creation", "ember._data", "ember._printing", "ember._random",
                "ember._random_dist", "ember._ranges",
                # (a thread-local flag with no imports: writing `out=` reads it, as PyTorch
                # keeps GradMode in its core library below the ops)
                "ember.autograd.grad_mode"]),
    # what recording a graph node needs (the registry records one per op call)
    ("graph records", ["ember.autograd.node", "ember.autograd.hooks",
                       "ember.autograd.anomaly", "ember.autograd.saved_hooks"]),
    ("ops", ["ember.ops"]),
    ("autograd", ["ember.autograd"]),
    ("nn/optim/data", ["ember.nn", "ember.optim", "ember.utils.data"]),
    ("vision/utils", ["ember.vision", "ember.utils"]),
    ("public/cli", ["ember", "ember.__main__", "ember._demo", "ember._alias"]),
]
_PUBLIC = {"ember"}   # the package itself: only its __init__ belongs to the top layer

# Violations standing when the check was written (files, functions and imports owned by other
# work in progress); each line goes when its cause is fixed.
KNOWN = {line for line in """
# files over 500 lines
file ember/_signatures/table_tensor.py
file ember/_signatures/table_torch.py
# the LSTM layer's double backward runs the engine
import ember.ops.rnn_ops -> ember.autograd (ops -> autograd)
# utils.benchmark's Timer gives its statements the public package itself as `torch`
import ember.utils.benchmark.timer -> ember (vision/utils -> public/cli)
""".split("\n") if line and not line.startswith("#")}


def modules():
    """(dotted name, path) of every module of the package."""
    for folder, dirs, files in os.walk(os.path.join(ROOT, "ember")):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_shim"))
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield rel[:-len(".__init__")] if rel.endswith(".__init__") else rel, path


def layer_of(name):
    best, rank = "", None
    for k, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p in _PUBLIC and name != p:
                continue
            if (name == p or name.startswith(p + ".")) and len(p) > len(best):
                best, rank = p, k
    return rank


def imported(name, path, tree, known_modules):
    """The ember modules `name` imports anywhere in its body."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "ember":
                    yield a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base.split(".")[0] != "ember":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                yield sub if sub in known_modules else base


def function_violations(rel, tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                yield f"function {rel}:{node.name} {n} lines", node.lineno


def violations():
    mods = dict(modules())
    for name, path in mods.items():
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n") + (not text.endswith("\n"))
        if lines > MAX_FILE_LINES:
            yield f"file {rel} {lines} lines", rel, 1
        tree = ast.parse(text, path)
        for v, line in function_violations(rel, tree):
            yield v, rel, line
        mine = layer_of(name)
        if mine is None:
            continue
        for target in sorted(set(imported(name, path, tree, mods))):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                yield (f"import {name} -> {target} ({LAYERS[mine][0]} -> "
                       f"{LAYERS[theirs][0]})"), rel, 1


def _key(v):
    """A known entry ignores line counts (a known long file may change length)."""
    kind, what, *rest = v.split(" ")
    return v if kind == "import" else f"{kind} {what}"


def main(argv):
    show_all = "--all" in argv
    known = {_key(k) for k in KNOWN}
    seen, new = set(), []
    for v, rel, line in violations():
        k = _key(v)
        seen.add(k)
        if k not in known:
            new.append(f"{rel}:{line}: {v}")
        elif show_all:
            print(f"(known) {v}")
    for v in new:
        print(v)
    gone = sorted(known - seen)
    for k in gone:
        print(f"fixed, remove from KNOWN: {k}")
    if new or gone:
        print(f"{len(new)} new violation(s), {len(gone)} stale KNOWN line(s): files over "
              f"{MAX_FILE_LINES} lines, functions over {MAX_FUNCTION_LINES}, imports of a "
              "higher layer (docs/ARCHITECTURE.md, Layers)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
