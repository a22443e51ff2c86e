"""Symbolic functions of the nn ops: convolution, pooling, normalisation, GELU, embedding
and the LSTM and GRU layers (see symbolic_table.py)."""
import math

import numpy as np

from .errors import OnnxExporterError
from .symbolic_table import operands, symbolic


def _pads(padding):
    """ember's ((lo, hi), ...) per spatial axis as ONNX's [lo..., hi...]."""
    pairs = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
    return [lo for lo, _ in pairs] + [hi for _, hi in pairs]


def _ceil_mode(in_sizes, ksize, stride, pads, dilation, out):
    """Whether ember's output size `out` needed ceil mode: ember gives the size, ONNX wants
    the rule that made it."""
    n = len(ksize)
    for i in range(n):
        span = in_sizes[i] + pads[i] + pads[i + n] - dilation[i] * (ksize[i] - 1) - 1
        if span // stride[i] + 1 != out[i]:
            return 1
    return 0


@symbolic("convolution")
def _convolution(g, call):
    x, w, b = call.inputs[:3]
    p = call.params
    names = operands(g, x, w) + ([] if b is None else operands(g, b))
    return [g.op("Conv", *names, strides=list(p["stride"]), pads=_pads(p["padding"]),
                 dilations=list(p["dilation"]), group=p["groups"],
                 kernel_shape=list(w.tensor.shape[2:]))]


@symbolic("convolution_transpose")
def _convolution_transpose(g, call):
    """The gradient of a convolution with respect to its input: ConvTranspose, with the
    output padding that gives the traced size."""
    y, w = call.inputs[:2]
    p = call.params
    k = list(w.tensor.shape[2:])
    pads = _pads(p["padding"])
    n = len(k)
    in_sizes = y.tensor.shape[2:]
    target = list(p["x_shape"])[2:]
    extra = [target[i] - ((in_sizes[i] - 1) * p["stride"][i] - pads[i] - pads[i + n]
                          + p["dilation"][i] * (k[i] - 1) + 1) for i in range(n)]
    return [g.op("ConvTranspose", *operands(g, y, w), strides=list(p["stride"]), pads=pads,
                 dilations=list(p["dilation"]), group=p["groups"], kernel_shape=k,
                 output_padding=extra if any(extra) else None)]


@symbolic("max_pool")
def _max_pool(g, call):
    x = call.inputs[0]
    p = call.params
    pads = _pads(p["padding"])
    ceil = _ceil_mode(x.tensor.shape[2:], p["ksize"], p["stride"], pads, p["dilation"],
                      p["out"])
    # (the second output, the indices, has no ONNX use here: max_pool's VJP reads them)
    return [g.op("MaxPool", g.input(x), kernel_shape=list(p["ksize"]),
                 strides=list(p["stride"]), pads=pads, dilations=list(p["dilation"]),
                 ceil_mode=ceil)]


@symbolic("avg_pool")
def _avg_pool(g, call):
    """ember divides window sums by `divisor` (a number, or PyTorch's count per position):
    AveragePool counting the padding gives sum / window size, rescaled to it."""
    x = call.inputs[0]
    p = call.params
    pads = _pads(p["padding"])
    ones = [1] * len(p["ksize"])
    ceil = _ceil_mode(x.tensor.shape[2:], p["ksize"], p["stride"], pads, ones, p["out"])
    y = g.op("AveragePool", g.input(x), kernel_shape=list(p["ksize"]),
             strides=list(p["stride"]), pads=pads, ceil_mode=ceil, count_include_pad=1)
    window = math.prod(p["ksize"])
    divisor = p["divisor"]
    if isinstance(divisor, (int, float)) and divisor == window:
        return [y]
    scale = window / np.asarray(divisor, dtype=np.float64)
    return [g.op("Mul", y, g.const(scale.astype(g.out_dtype()), "scale"))]


@symbolic("native_layer_norm")
def _layer_norm(g, call):
    x, w, b = call.inputs[:3]
    p = call.params
    nd = p.get("nd", 1)
    shape = tuple(x.tensor.shape[-nd:])
    scale = operands(g, w)[0] if w is not None else g.const(np.ones(shape, g.out_dtype()))
    names = [operands(g, x)[0], scale] + ([] if b is None else operands(g, b))
    y, mean, inv_std = g.op("LayerNormalization", *names, axis=-nd,
                            epsilon=float(p.get("eps", 1e-5)), outputs=3)
    return [mean, inv_std, y]   # (ember's order: the statistics first)


@symbolic("gelu")
def _gelu(g, call):
    x, = operands(g, call.inputs[0])
    approximate = call.params.get("approximate", "none")
    if g.opset >= 20:
        return [g.op("Gelu", x, approximate=approximate)]
    dtype = g.out_dtype()
    c = lambda v: g.const(np.asarray(v, dtype=dtype), "c")  # noqa: E731
    if approximate == "tanh":
        inner = g.op("Mul", c(math.sqrt(2 / math.pi)),
                     g.op("Add", x, g.op("Mul", c(0.044715), g.op("Pow", x, c(3)))))
        core = g.op("Tanh", inner)
    else:
        core = g.op("Erf", g.op("Div", x, c(math.sqrt(2))))
    return [g.op("Mul", g.op("Mul", x, c(0.5)), g.op("Add", core, c(1)))]


@symbolic("embedding")
def _embedding(g, call):
    weight, indices = call.inputs[:2]
    return [g.op("Gather", g.input(weight), g.input(indices), axis=0)]


# PyTorch orders an LSTM's gate blocks (input, forget, cell, output); ONNX (input, output,
# forget, cell).
_ONNX_GATE_ORDER = (0, 3, 1, 2)


@symbolic("lstm_layer")
def _lstm_layer(g, call):
    """One LSTM layer and direction, `gates_x` (T, B, 4H) already holding the input
    projection and both biases: an ONNX LSTM whose input weight is the permutation matrix
    that reorders the gates, and whose recurrent weight is W_hh's rows in ONNX's order."""
    gates_x, h0, c0, w_hh = call.inputs[:4]
    hidden = w_hh.tensor.shape[1]
    dtype = g.out_dtype()
    rows = np.concatenate([np.arange(hidden) + block * hidden for block in _ONNX_GATE_ORDER])
    permutation = np.zeros((1, 4 * hidden, 4 * hidden), dtype=dtype)
    permutation[0, np.arange(4 * hidden), rows] = 1
    axis0 = g.ints([0], "axes")
    recurrent = g.op("Unsqueeze", g.op("Gather", g.input(w_hh), g.const(rows, "gate_rows"),
                                       axis=0), axis0)
    y, y_h, y_c = g.op(
        "LSTM", g.input(gates_x), g.const(permutation, "gate_order"), recurrent, None, None,
        g.op("Unsqueeze", g.input(h0), axis0), g.op("Unsqueeze", g.input(c0), axis0),
        hidden_size=hidden, direction="reverse" if call.params.get("reverse") else "forward",
        outputs=3)
    return [g.op("Squeeze", y, g.ints([1], "axes")), g.op("Squeeze", y_h, axis0),
            g.op("Squeeze", y_c, axis0)]


# PyTorch orders a GRU's gate blocks (reset, update, new); ONNX (update, reset, hidden).
_ONNX_GRU_GATE_ORDER = (1, 0, 2)


@symbolic("gru_layer")
def _gru_layer(g, call):
    """One GRU layer and direction, `gates_x` (T, B, 3H) already holding the input projection
    and b_ih: an ONNX GRU with linear_before_reset (PyTorch's new gate, r * (W_hn h + b_hn))
    whose input weight is the permutation matrix that reorders the gates, and whose recurrent
    weight and bias are W_hh's and b_hh's rows in ONNX's order."""
    gates_x, h0, w_hh, b_hh = call.inputs[:4]
    hidden = w_hh.tensor.shape[1]
    dtype = g.out_dtype()
    rows = np.concatenate([np.arange(hidden) + block * hidden
                           for block in _ONNX_GRU_GATE_ORDER])
    permutation = np.zeros((1, 3 * hidden, 3 * hidden), dtype=dtype)
    permutation[0, np.arange(3 * hidden), rows] = 1
    axis0 = g.ints([0], "axes")
    gate_rows = g.const(rows, "gate_rows")
    recurrent = g.op("Unsqueeze", g.op("Gather", g.input(w_hh), gate_rows, axis=0), axis0)
    bias = None
    if b_hh is not None:   # ONNX's B is [Wb, Rb]: the input's part is already in gates_x
        bias = g.op("Unsqueeze", g.op("Concat", g.const(np.zeros(3 * hidden, dtype), "zeros"),
                                      g.op("Gather", g.input(b_hh), gate_rows, axis=0),
                                      axis=0), axis0)
    y, y_h = g.op(
        "GRU", g.input(gates_x), g.const(permutation, "gate_order"), recurrent, bias, None,
        g.op("Unsqueeze", g.input(h0), axis0), hidden_size=hidden, linear_before_reset=1,
        direction="reverse" if call.params.get("reverse") else "forward", outputs=2)
    return [g.op("Squeeze", y, g.ints([1], "axes")), g.op("Squeeze", y_h, axis0)]


@symbolic("lstm_cell")
def _lstm_cell(g, call):
    """One LSTM step, (h', c') from gates_x + h W_hh^T: written out gate by gate."""
    gates_x, h, w_hh, c = call.inputs[:4]
    gates = g.op("Add", g.input(gates_x),
                 g.op("MatMul", g.input(h), g.op("Transpose", g.input(w_hh), perm=[1, 0])))
    hidden = w_hh.tensor.shape[1]
    i, f, cell, o = g.op("Split", gates, g.ints([hidden] * 4, "split"), axis=1, outputs=4)
    c_new = g.op("Add", g.op("Mul", g.op("Sigmoid", f), g.input(c)),
                 g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cell)))
    h_new = g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c_new))
    return [h_new, c_new]


@symbolic("interp_taps")
def _interp_taps(g, call):
    """Resampling along one dim as ember does it: output j = sum over taps t of
    x[idx[t, j]] * w[t, j] (nearest has one tap of weight 1). Gathers and a weighted sum:
    every interpolation mode, exactly ember's weights."""
    x = call.inputs[0]
    p = call.params
    dim = p["dim"]
    idx, weights = np.asarray(p["idx"]), p["w"]
    trailing = [1] * (g.rank(x) - dim - 1)
    name = g.input(x)
    total = None
    for t in range(idx.shape[0]):
        term = g.op("Gather", name, g.const(idx[t].astype(np.int64), "taps"), axis=dim)
        if weights is not None:
            w = np.asarray(weights[t], dtype=g.out_dtype()).reshape([-1] + trailing)
            term = g.op("Mul", term, g.const(w, "tap_weights"))
        total = term if total is None else g.op("Add", total, term)
    return [total]


@symbolic("native_batch_norm")
def _batch_norm(g, call):
    """Batch statistics (training-mode BatchNorm, InstanceNorm): (mean, biased variance,
    normalised x) over every dim but the channels."""
    x, w, b = call.inputs[:3]
    rank = g.rank(x)
    axes = g.ints([0] + list(range(2, rank)), "axes")
    name, = operands(g, x)
    mean = g.op("ReduceMean", name, axes, keepdims=1)
    centred = g.op("Sub", name, mean)
    var = g.op("ReduceMean", g.op("Mul", centred, centred), axes, keepdims=1)
    eps = g.const(np.asarray(call.params.get("eps", 1e-5), g.out_dtype()), "eps")
    y = g.op("Div", centred, g.op("Sqrt", g.op("Add", var, eps)))
    channel = [-1] + [1] * (rank - 2)
    if w is not None:
        y = g.op("Mul", y, g.op("Reshape", operands(g, w)[0], g.ints(channel, "shape")))
    if b is not None:
        y = g.op("Add", y, g.op("Reshape", operands(g, b)[0], g.ints(channel, "shape")))
    return [g.op("Reshape", mean, g.ints([-1], "shape")),
            g.op("Reshape", var, g.ints([-1], "shape")), y]


@symbolic("nll_loss")
def _nll_loss(g, call):
    logp, target, weight = call.inputs[:3]
    p = call.params
    names = [operands(g, logp)[0], operands(g, target, dtype=np.dtype(np.int64))[0]]
    if weight is not None:
        names += operands(g, weight)
    return [g.op("NegativeLogLikelihoodLoss", *names, reduction=p.get("reduction", "mean"),
                 ignore_index=int(p.get("ignore_index", -100)))]


@symbolic("adaptive_max_pool")
def _adaptive_max_pool(g, call):
    """Windows of equal size (each input size a multiple of the output's): MaxPool with
    kernel = stride = in / out. Other sizes have overlapping uneven windows ONNX cannot say."""
    x = call.inputs[0]
    out = list(call.params["out"])
    spatial = list(x.tensor.shape[2:])
    if any(o == 0 or s % o for s, o in zip(spatial, out)):
        raise OnnxExporterError(f"ember.onnx: adaptive max pooling from {spatial} to {out} "
                                "(sizes that do not divide) is not supported")
    k = [s // o for s, o in zip(spatial, out)]
    return [g.op("MaxPool", g.input(x), kernel_shape=k, strides=k)]
