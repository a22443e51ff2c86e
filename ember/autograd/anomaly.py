"""Anomaly detection: remember where each node was made; name the op and line of a NaN.

While enabled, every recorded node keeps the user's stack at forward time (ember's own frames
left out). A VJP that raises, or returns NaN, is reported with that stack, as PyTorch's
"Error detected in XBackward0. Traceback of forward call that caused the error" warning.
"""
import os
import sys
import traceback
import warnings

from .._constants import strided as _STRIDED

enabled = False
check_nan = True

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def record_trace(node):
    frames = [f for f in traceback.extract_stack(sys._getframe(1))
              if not f.filename.startswith(_PACKAGE)]
    node.anomaly_trace = traceback.format_list(frames)


def forward_trace(node):
    return "".join(node.anomaly_trace or ["  (no forward trace recorded)\n"])


def report(node, exc):
    """Warn with the forward stack of the node whose backward failed (once per error)."""
    if getattr(exc, "_ember_anomaly_reported", False):
        return
    try:
        exc._ember_anomaly_reported = True
        exc.add_note(f"Forward call of {node.name()} that caused the error:\n"
                     + forward_trace(node).rstrip("\n"))
    except (AttributeError, TypeError):
        pass
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                  f"the error:\n{forward_trace(node)}", UserWarning, stacklevel=5)


def check_grad(node, index, grad):
    """Raise PyTorch's error when the VJP of `node` produced NaN in its `index`th output."""
    data = grad._data
    if grad.layout is not _STRIDED:   # (a sparse gradient: its numbers are its values)
        data = (grad._values() if grad.is_sparse else grad.values())._data
    if data.dtype.kind in "fc" and bool((data != data).any()):
        raise RuntimeError(f"Function '{node.name()}' returned nan values in its {index}th "
                           "output.")
