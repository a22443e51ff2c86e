"""torch._dynamo.explain's report, built from one capture (ember/_compile/capture.py)."""
from .. import nn
from .._compile import CompiledFunction
from .._compile.capture import OP

__all__ = ["ExplainOutput", "GraphCompileReason", "explain"]


class GraphCompileReason:
    """Why a graph ended: `reason` and the user's frames (`user_stack`)."""

    def __init__(self, reason, user_stack, graph_break=True):
        self.reason = reason
        self.user_stack = user_stack
        self.graph_break = graph_break

    def __repr__(self):
        return (f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack!r}, "
                f"graph_break={self.graph_break})")


class Graph:
    """One captured piece: the names of its ops, in order."""

    def __init__(self, ops):
        self.ops = ops

    def __repr__(self):
        return f"<Graph of {len(self.ops)} ops>"


class ExplainOutput:
    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count,
                 ops_per_graph=None, out_guards=None, compile_times=None, refusals=(),
                 backward=None):
        self.graphs = graphs
        self.graph_count = graph_count
        self.graph_break_count = graph_break_count
        self.break_reasons = break_reasons
        self.op_count = op_count
        self.ops_per_graph = ops_per_graph
        self.out_guards = out_guards
        self.compile_times = compile_times
        self.refusals = list(refusals)   # ember's own: why the record would run eagerly
        self.backward = backward         # ember's own: how a replay differentiates (below)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, br in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {br.reason}", "    User Stack:"]
            lines += [f"      {frame!r}" for frame in br.user_stack]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph or (), 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {op}" for op in ops]
        lines.append("Out Guards:")
        for i, guard in enumerate(self.out_guards or (), 1):
            lines += [f"  Guard {i}:", f"    {guard}"]
        if self.backward:
            lines.append("Backward:")
            lines += [f"  {line}" for line in self.backward]
        if self.refusals:
            lines.append("Runs eagerly because:")
            lines += [f"  {reason}" for reason in self.refusals]
        if self.compile_times is not None:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


_GUARDS = ("tensor arguments: shape, dtype, device, requires_grad, leaf, contiguity",
           "other arguments: value", "grad mode", "inference mode", "autocast",
           "modules in reach: training flag, parameter and buffer identity, forward hooks",
           "tensors read from globals, closures and module attributes: identity")


def explain(fn, *args, **kwargs):
    target = getattr(fn, "_ember_compiled", None)
    target = target.fn if target is not None else fn
    if isinstance(target, nn.Module) and hasattr(target, "_orig_mod"):
        target = target._orig_mod
    module = target if isinstance(target, nn.Module) else None
    compiled = CompiledFunction(target, module, fullgraph=False)
    compiled(*args, **kwargs)
    entry = next(iter(compiled.entries.values()))
    ops_per_graph = [[] for _ in range(len(entry.breaks) + 1)]
    for step in entry.steps:
        if step.kind == OP:
            ops_per_graph[step.segment].append(step.name)
    reasons = [GraphCompileReason(b.reason, b.user_stack) for b in entry.breaks]
    return ExplainOutput([Graph(ops) for ops in ops_per_graph], len(ops_per_graph),
                         len(entry.breaks), reasons, sum(map(len, ops_per_graph)),
                         ops_per_graph, list(_GUARDS),
                         f"capture took {entry.capture_seconds:.4f} s", entry.reasons,
                         _backward(entry.program))


def _backward(program):
    """How a replay of `program` differentiates: its backward recorded as steps (no graph
    recorded), or autograd's engine and why; None without a program or a graph."""
    if program is None:
        return None
    if program.lowered:
        return ["recorded as steps: the replay records no graph"]
    if program.engine_reasons:
        return ["the replay records graphs for autograd's engine:"] + program.engine_reasons
    return None
