"""The recurrent loops behind nn.RNN, nn.LSTM and nn.GRU (not public: torch has no F.lstm).

One layer and direction at a time: the input projection of every time step is one matmul
up front (x @ W_ih^T + biases over the whole sequence), then each step does one matmul
against W_hh and the gate arithmetic.  The backward is plain autograd through the steps (one
graph; the engine is iterative, so long sequences are fine), except for the common LSTM
(not packed, no projection) and GRU (not packed), whose whole layer is one op with its own
VJP; its create_graph form differentiates the step-by-step graph.

Packed sequences (decreasing batch sizes per step) run the same loop: in the forward
direction the finished sequences' states drop out of the batch (and are kept as their final
states); in the reverse direction the batch grows and new sequences start from their
initial state.
"""
from ...ops.linalg import addmm
from ...ops.rnn_ops import gru_cell, gru_layer, lstm_cell_fused, lstm_layer
from ...ops.activation import relu
from ...ops.shape import cat, stack
from ...ops.unary import tanh
from .dropout import dropout as apply_dropout   # (the loop's `dropout` is a probability)

__all__ = []


def _matmul_t(w):
    return None if w is None else w.t()


def _rnn_step(nonlinearity):
    act = tanh if nonlinearity == "tanh" else relu

    def step(xp, h, c, w):
        return act(xp + h.mm(w[0])), None
    return step


def _lstm_step(xp, h, c, w):
    h, c = lstm_cell_fused(xp, h, w[0], c)
    if w[2] is not None:
        h = h.mm(w[2])
    return h, c


def _gru_step(xp, h, c, w):
    return gru_cell(xp, h, w[0], w[1]), None


def step_function(mode):
    if mode == "LSTM":
        return _lstm_step
    if mode == "GRU":
        return _gru_step
    return _rnn_step("tanh" if mode == "RNN_TANH" else "relu")


def _run_direction(step, xs, h, c, w, sizes, reverse):
    """Run one direction over the per-step projected inputs `xs` (list, time order).

    `sizes` is None for a full batch, else the per-step batch sizes of a packed sequence.
    Returns (outputs in time order, final h, final c)."""
    outs = [None] * len(xs)
    if sizes is None:
        order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
        for t in order:
            h, c = step(xs[t], h, c, w)
            outs[t] = h
        return outs, h, c
    if reverse:
        h0, c0 = h, c
        n = sizes[-1]
        h = h0[:n]
        c = None if c0 is None else c0[:n]
        for t in range(len(xs) - 1, -1, -1):
            bs = sizes[t]
            if bs > n:  # longer sequences join, from their initial state
                h = cat([h, h0[n:bs]])
                if c is not None:
                    c = cat([c, c0[n:bs]])
                n = bs
            h, c = step(xs[t], h, c, w)
            outs[t] = h
        return outs, h, c
    done_h, done_c = [], []
    n = sizes[0] if sizes else 0
    for t in range(len(xs)):
        bs = sizes[t]
        if bs < n:  # sequences bs..n-1 ended at the previous step
            done_h.append(h[bs:])
            h = h[:bs]
            if c is not None:
                done_c.append(c[bs:])
                c = c[:bs]
            n = bs
        h, c = step(xs[t], h, c, w)
        outs[t] = h
    if done_h:
        h = cat([h] + done_h[::-1])
        if c is not None:
            c = cat([c] + done_c[::-1])
    return outs, h, c


def _project(x, w_ih, bias, sizes):
    """x @ W_ih^T + bias for every step at once (one 2-D matmul): in x's layout, or split
    into per-step pieces for packed data."""
    flat = x.reshape(-1, x.shape[-1])
    xp = flat.mm(w_ih.t()) if bias is None else addmm(bias, flat, w_ih.t())
    if sizes is not None:
        return list(xp.split(sizes, 0))
    return xp.view(tuple(x.shape[:-1]) + (w_ih.shape[0],))


def run_rnn(mode, x, hx, cx, weights, num_layers, bidirectional, dropout, training,
            sizes=None, batch_first=False):
    """The stacked, optionally bidirectional recurrence.

    x: (T, B, I) time-major ((B, T, I) with batch_first: as in PyTorch, the layers run on
    its time-major transpose and the output is transposed back), or packed data (N, I) with
    `sizes` the per-step batch sizes.
    hx: (L*D, B, H_out); cx: (L*D, B, H) for LSTM else None.
    weights: per layer-direction (w_ih, w_hh, b_ih, b_hh, w_hr) (absent ones None).
    Returns (output, h_n, c_n) with output in x's layout ((T, B, D*H_out), ...).
    """
    step = step_function(mode)
    if batch_first:
        x = x.transpose(0, 1)
    dirs = 2 if bidirectional else 1
    h_n, c_n = [], []
    layer_input = x
    for layer in range(num_layers):
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            if mode == "GRU":
                bias = b_ih  # b_hh sits inside r * (W_hn h + b_hn)
                w = (w_hh.t(), b_hh, None)
            else:
                bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
                # the fused LSTM step takes W_hh as stored; the others multiply by W_hh^T
                w = (w_hh if mode == "LSTM" else w_hh.t(), None, _matmul_t(w_hr))
            xs = _project(layer_input, w_ih, bias, sizes)
            if mode == "LSTM" and sizes is None and w_hr is None and xs.shape[0]:
                # the common LSTM: the whole layer is one op (see ops/rnn_ops.py)
                out, h, c = lstm_layer(xs, hx[k], cx[k], w_hh, reverse=d == 1)
                outputs.append(out)
            elif mode == "GRU" and sizes is None and xs.shape[0]:
                # the common GRU likewise
                out, h = gru_layer(xs, hx[k], w_hh, b_hh, reverse=d == 1)
                c = None
                outputs.append(out)
            else:
                if sizes is None:
                    xs = list(xs.unbind(0))
                outs, h, c = _run_direction(step, xs, hx[k], None if cx is None else cx[k],
                                            w, sizes, reverse=d == 1)
                outputs.append(stack(outs) if sizes is None else cat(outs))
            h_n.append(h)
            if c is not None:
                c_n.append(c)
        layer_input = outputs[0] if dirs == 1 else cat(outputs, -1)
        if dropout and training and layer < num_layers - 1:
            layer_input = apply_dropout(layer_input, dropout, True)
    output = layer_input.transpose(0, 1) if batch_first else layer_input
    return output, stack(h_n), (stack(c_n) if c_n else None)
