"""The names the profiler gives ember's ops: PyTorch's aten names where a user compares a
table with PyTorch's, `aten::<op name>` otherwise."""

# ember op name -> PyTorch's operator name, where the two differ.
_ATEN = {
    "_to_copy": "aten::to",
    "native_batch_norm": "aten::batch_norm",
    "native_layer_norm": "aten::layer_norm",
    "log_softmax_backward_data": "aten::_log_softmax_backward_data",
    "softmax_backward_data": "aten::_softmax_backward_data",
    "convolution_weight": "aten::convolution_backward",
    "convolution_transpose": "aten::conv_transpose{n}d",
    "max_pool_values": "aten::max_pool{n}d",
    "max_pool": "aten::max_pool{n}d_with_indices",
    "max_pool_backward": "aten::max_pool{n}d_with_indices_backward",
    "avg_pool": "aten::avg_pool{n}d",
    "avg_pool_backward": "aten::avg_pool{n}d_backward",
}

_MATMUL_BY_RANKS = {(2, 2): "aten::mm", (1, 1): "aten::dot", (2, 1): "aten::mv",
                    (3, 3): "aten::bmm"}


def op_event_name(op, inputs, params):
    """The profiler's name for one call of `op` (some depend on the operands' ranks, as
    PyTorch's overloads do: a 2-D by 2-D matmul is `aten::mm`, a 4-D convolution
    `aten::conv2d`)."""
    name = op.name
    if name == "matmul":
        ranks = tuple(getattr(x, "ndim", 0) for x in inputs[:2])
        return _MATMUL_BY_RANKS.get(ranks, "aten::matmul")
    if name == "convolution":
        return f"aten::conv{max(getattr(inputs[0], 'ndim', 4) - 2, 1)}d"
    aten = _ATEN.get(name)
    if aten is None:
        return "aten::" + name
    if "{n}" in aten:
        return aten.format(n=max(getattr(inputs[0], "ndim", 4) - 2, 1))
    return aten


def backward_node_name(node):
    """PyTorch's name for a graph node in the profiler (its class name; AccumulateGrad is
    PyTorch's C++ class)."""
    name = type(node).__name__
    return "torch::autograd::AccumulateGrad" if name == "AccumulateGrad" else name
