"""Opt-in logging of captures, as PyTorch's TORCH_LOGS names it: `TORCH_LOGS="recompiles"`
logs why a compiled function captured again, `"graph_code"` (or `"graph"`) logs each
recorded program; `+dynamo` both. The logger is `ember._dynamo` (standard logging)."""
import logging
import os

logger = logging.getLogger("ember._dynamo")

_KEY_PARTS = ("the non-tensor arguments", "a tensor argument's shape, dtype, device, "
              "requires_grad, leaf-ness or contiguity", "argument aliasing", "grad mode",
              "inference mode", "autocast", "a module's state (training flag, attributes, "
              "parameters, buffers or hooks)")


def _wanted():
    names = {n.strip().lstrip("+") for n in os.environ.get("TORCH_LOGS", "").split(",")}
    return names


def enabled(kind):
    names = _wanted()
    on = kind in names or "dynamo" in names or (kind == "graph_code" and "graph" in names)
    if on and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[ember._dynamo] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return on


def recompile(name, key, old_keys):
    """Log which guard failed for `key` against the signatures captured before."""
    if not old_keys or not enabled("recompiles"):
        return
    differing = [[_KEY_PARTS[i] for i, (a, b) in enumerate(zip(key, old)) if a != b]
                 for old in old_keys]
    parts = min(differing, key=len) or ["a tensor or value read from outside the function"]
    logger.info("Recompiling function %s: guard failed on %s", name, "; ".join(parts))


def program(name, steps):
    if enabled("graph_code"):
        lines = [f"  {', '.join(map(repr, s.outs or []))} = "
                 f"{s.name}({', '.join(map(repr, s.args))})" for s in steps]
        logger.info("Captured program of %s:\n%s", name, "\n".join(lines))
