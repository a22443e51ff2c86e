"""Fused recurrent-cell ops: one LSTM time step as one registry op.

An LSTM step written in ember ops costs about twelve recorded ops (a chunk, three sigmoids,
two tanhs, the products and sums); per-step Python overhead dominates small LSTMs, so the
step's pointwise part is one op here.  Its VJP has two forms:
- plain backward: one `lstm_cell_backward` op computes both input gradients in a single
  kernel (grad mode is off there, so nothing is recorded);
- `create_graph=True`: the same formulas in ember ops, so double backward works.
Both recompute the gate activations from the saved pre-activations (one pass) instead of
keeping them alive for the whole sequence.
"""
from ..autograd.grad_mode import state
from ..backends import array_module
from .registry import defop, dispatch

__all__ = ["lstm_cell_fused"]


def _activations(xp, gates):
    """(B, 4H) pre-activations -> [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)].

    NOTE: sigmoid(x) = (1 + tanh(x / 2)) / 2, so all four gates take one tanh pass and never
    overflow (exp(-x) does for very negative x)."""
    size = gates.shape[1] // 4
    scale = xp.full(4 * size, 0.5, dtype=gates.dtype)
    scale[2 * size:3 * size] = 1
    act = xp.tanh(gates * scale)
    act *= scale
    act += scale
    act[:, 2 * size:3 * size] -= 1  # the cell gate is plain tanh
    return act, size


@defop("lstm_cell", node="LstmCellBackward0", save=(0, 1), save_output=True, num_outputs=2)
def _lstm_cell(gates, c):
    xp = array_module(gates)
    act, n = _activations(xp, gates)
    c_new = act[:, n:2 * n] * c
    c_new += act[:, :n] * act[:, 2 * n:3 * n]
    h = act[:, 3 * n:] * xp.tanh(c_new)
    return h, c_new


@defop("lstm_cell_backward", node="LstmCellBackwardBackward0", num_outputs=2)
def _lstm_cell_backward(grad_h, grad_c, gates, c, c_new):
    xp = array_module(gates)
    act, n = _activations(xp, gates)
    i, f, g, o = act[:, :n], act[:, n:2 * n], act[:, 2 * n:3 * n], act[:, 3 * n:]
    tc = xp.tanh(c_new)
    grad_c = grad_c + grad_h * o * (1 - tc * tc)
    d = xp.empty_like(act)
    # d(pre-activation) = d(activation) * activation' (sigmoid: s(1-s), tanh: 1-t^2)
    d[:, :n] = grad_c * g * i * (1 - i)
    d[:, n:2 * n] = grad_c * c * f * (1 - f)
    d[:, 2 * n:3 * n] = grad_c * i * (1 - g * g)
    d[:, 3 * n:] = grad_h * tc * o * (1 - o)
    return d, grad_c * f


@_lstm_cell.defvjp
def _lstm_cell_vjp(ctx, grad_h, grad_c):
    gates, c = ctx.inputs
    c_new = ctx.outputs[1]
    if not state.enabled:
        return dispatch(_lstm_cell_backward, (grad_h, grad_c, gates, c, c_new))
    # create_graph: the same gradient, differentiable.
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = c_new.tanh()
    grad_c = grad_c + grad_h * o * (1 - tc * tc)
    from .shape import cat
    d = cat([grad_c * g * i * (1 - i), grad_c * c * f * (1 - f),
             grad_c * i * (1 - g * g), grad_h * tc * o * (1 - o)], 1)
    return d, grad_c * f


def lstm_cell_fused(gates, c):
    """(h, c') of one LSTM step from the summed pre-activations (B, 4H) and the cell (B, H).

    Gates are ordered (input, forget, cell, output), as in PyTorch's weights."""
    return dispatch(_lstm_cell, (gates, c))
