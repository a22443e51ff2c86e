"""make_dot: the autograd graph behind a tensor, as Graphviz DOT text (torchviz's picture).

Blue boxes are parameters (named from `params`, with their shapes) and other leaves, grey
boxes the backward nodes PyTorch would show (`MulBackward0`, `AccumulateGrad`...), green
boxes the tensors drawn from, orange ones (show_saved=True) what the nodes saved.
Rendering to SVG/PNG needs Graphviz's `dot` program; the DOT text never does.
"""
import os
import shutil
import subprocess

from .._tensor import Tensor

__all__ = ["Digraph", "ExecutableNotFound", "make_dot"]

_NODE_STYLE = ('node [style=filled shape=box align=left fontsize=10 ranksep=0.1 height=0.2 '
               'fontname=monospace]')


class ExecutableNotFound(RuntimeError):
    """Graphviz's `dot` program is not on PATH."""


def _dot_program():
    exe = shutil.which("dot")
    if exe is None:
        raise ExecutableNotFound(
            "rendering the graph needs Graphviz's `dot` program, which was not found on PATH; "
            "install Graphviz (e.g. `apt install graphviz`, `brew install graphviz` or "
            "`conda install graphviz`), or use the DOT text in `.source` (save() writes it)")
    return exe


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class Digraph:
    """A directed graph as DOT text: `.source`, `save()`, and `render()`/`pipe()` through
    Graphviz's `dot` (raising ExecutableNotFound, with what to install, when it is absent)."""

    def __init__(self, name="autograd"):
        self.name = name
        self.body = []

    def node(self, name, label, **attrs):
        extra = "".join(f" {k}={_quote(v)}" for k, v in attrs.items())
        self.body.append(f"\t{_quote(name)} [label={_quote(label)}{extra}]")

    def edge(self, tail, head, **attrs):
        extra = " [" + " ".join(f"{k}={_quote(v)}" for k, v in attrs.items()) + "]" \
            if attrs else ""
        self.body.append(f"\t{_quote(tail)} -> {_quote(head)}{extra}")

    @property
    def source(self):
        lines = [f"digraph {_quote(self.name)} {{", "\tgraph [size=\"12,12\"]",
                 "\t" + _NODE_STYLE] + self.body + ["}"]
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.source

    def save(self, filename):
        """Write the DOT text to `filename`; returns the path."""
        with open(filename, "w", encoding="utf-8") as f:
            f.write(self.source)
        return filename

    def pipe(self, format="svg"):
        """The rendered graph as bytes (`format`: svg, png, pdf... whatever dot supports)."""
        exe = _dot_program()
        done = subprocess.run([exe, f"-T{format}"], input=self.source.encode("utf-8"),
                              capture_output=True, check=False)
        if done.returncode:
            raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    def render(self, filename="autograd", format="svg", cleanup=False):
        """Save the DOT text to `filename` and draw it to `filename.<format>`; returns that
        path. `cleanup=True` removes the DOT file afterwards."""
        data = self.pipe(format)   # first, so a missing `dot` leaves no files behind
        self.save(filename)
        out = f"{filename}.{format}"
        with open(out, "wb") as f:
            f.write(data)
        if cleanup:
            os.remove(filename)
        return out

    def _repr_svg_(self):
        try:
            return self.pipe("svg").decode("utf-8")
        except ExecutableNotFound:
            return None


def _size(shape):
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _node_name(fn):
    return fn.name().replace("torch::autograd::", "")


def _attr_lines(params, max_chars):
    lines = []
    for k, v in params.items():
        text = str(v)
        if len(text) > max_chars:
            text = text[:max_chars - 3] + "..."
        lines.append(f"{k}: {text}")
    return lines


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The autograd graph that produced `var` (a tensor or a sequence of tensors).

    `params`: {name: tensor}, e.g. dict(model.named_parameters()), to name the leaves;
    `show_attrs`: list each node's op arguments; `show_saved`: draw the tensors each node
    saved for backward. Returns a Digraph (`.source` is the DOT text).
    """
    if params is not None:
        if not all(isinstance(p, Tensor) for p in params.values()):
            raise AssertionError("params values must be tensors")
        names = {id(v): k for k, v in params.items()}
    else:
        names = {}
    dot = Digraph()
    seen = set()

    def leaf_label(t, name=None):
        name = names.get(id(t), "") if name is None else name
        return f"{name}\n {_size(t.shape)}"

    def add_fn(fn):
        if id(fn) in seen:
            return
        seen.add(id(fn))
        label = _node_name(fn)
        params_ = getattr(fn, "params", None)
        if show_attrs and params_:
            label += "\n" + "\n".join(_attr_lines(params_, max_attr_chars))
        dot.node(str(id(fn)), label, fillcolor="lightgrey")
        if show_saved:
            add_saved(fn)
        variable = getattr(fn, "variable", None) if label == "AccumulateGrad" else None
        if variable is not None:
            dot.node(str(id(variable)), leaf_label(variable), fillcolor="lightblue")
            dot.edge(str(id(variable)), str(id(fn)))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                add_fn(nxt)
                dot.edge(str(id(nxt)), str(id(fn)))

    def add_saved(fn):
        saved = getattr(fn, "inputs", None) or ()
        for i, t in enumerate(saved):
            if isinstance(t, Tensor):
                key = f"{id(fn)}.saved{i}"
                dot.node(key, f"[saved tensor {i}]\n {_size(t.shape)}", fillcolor="orange")
                dot.edge(str(id(fn)), key, dir="none")

    def add_tensor(t):
        dot.node(str(id(t)), leaf_label(t), fillcolor="darkolivegreen1")
        if t.grad_fn is not None:
            add_fn(t.grad_fn)
            dot.edge(str(id(t.grad_fn)), str(id(t)))

    for t in (var if isinstance(var, (tuple, list)) else (var,)):
        add_tensor(t)
    return dot
