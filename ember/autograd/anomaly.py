"""Anomaly detection: remember where each node was made; name the op and line of a NaN."""
import traceback

enabled = False
check_nan = True


def record_trace(node):
    node.anomaly_trace = traceback.format_stack()[:-3]


def check_grad(node, index, grad):
    """Raise when the VJP of `node` produced NaN, naming the forward op and its source line."""
    if not check_nan:
        return
    import numpy as np
    data = grad._host()
    if data.dtype.kind in "fc" and np.isnan(data).any():
        where = "".join(node.anomaly_trace or ["(no forward trace recorded)\n"])
        raise RuntimeError(
            f"Function '{node.op.node_name}' returned nan values in its {index}th output.\n"
            f"The forward op that produced it was created here:\n{where}")
