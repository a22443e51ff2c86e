"""Fused recurrent-cell ops: one LSTM time step as one registry op.

An LSTM step written in ember ops costs about twelve recorded ops (a chunk, three sigmoids,
two tanhs, the products and sums); per-step Python overhead dominates small LSTMs, so the
step (the recurrent matmul and the gate arithmetic) is one op here.  Its VJP has two forms:
- plain backward: one `lstm_cell_backward` op computes both input gradients in a single
  kernel (grad mode is off there, so nothing is recorded);
- `create_graph=True`: the same formulas in ember ops, so double backward works.
The forward keeps the gate activations and tanh(c') (as PyTorch keeps its sigmoid and tanh
outputs), so the plain backward does no transcendental functions; the create_graph form
recomputes them in ember ops from the saved inputs.
"""
from ..autograd.grad_mode import state
from ..backends import array_module
from ..backends.special import quiet
from .registry import defop, dispatch

__all__ = ["lstm_cell_fused"]


@quiet  # exp(-x) overflows to inf for very negative x; 1/(1+inf) is then exactly 0
def _lstm_cell_kernel(gates_x, h, w_hh, c, stash):
    """h' and c'; the (B, 5H) buffer [i, f, g, o, tanh(c')] the backward reads goes to
    `stash`."""
    xp = array_module(gates_x)
    n = c.shape[1]
    gates = xp.matmul(h, w_hh.T)
    gates += gates_x
    saved = xp.empty((gates.shape[0], 5 * n), dtype=gates.dtype)
    act = saved[:, :4 * n]
    xp.negative(gates, out=act)
    xp.exp(act, out=act)
    act += 1
    xp.reciprocal(act, out=act)
    xp.tanh(gates[:, 2 * n:3 * n], out=saved[:, 2 * n:3 * n])
    c_new = saved[:, n:2 * n] * c
    c_new += saved[:, :n] * saved[:, 2 * n:3 * n]
    tc = saved[:, 4 * n:]
    xp.tanh(c_new, out=tc)
    stash.append(saved)
    return saved[:, 3 * n:4 * n] * tc, c_new


# NOTE: the activations travel in a list passed as a parameter (the node keeps its params),
# not as a third output: an extra output would cost a wrap, a zero gradient and a check
# per step, on the path that dominates small LSTMs.
_lstm_cell = defop("lstm_cell", node="LstmCellBackward0", num_outputs=2)(_lstm_cell_kernel)


@defop("lstm_cell_backward", node="LstmCellBackwardBackward0", num_outputs=4)
def _lstm_cell_backward(grad_h, grad_c, saved, h, w_hh, c, need_h, need_w):
    """Gradients of (gates_x, h, w_hh, c); an unneeded one is returned as a placeholder."""
    xp = array_module(saved)
    n = c.shape[1]
    i, f, g, o, tc = (saved[:, k * n:(k + 1) * n] for k in range(5))
    grad_c = grad_c + grad_h * o * (1 - tc * tc)
    d = xp.empty((saved.shape[0], 4 * n), dtype=saved.dtype)
    xp.multiply(grad_c, g, out=d[:, :n])
    xp.multiply(grad_c, c, out=d[:, n:2 * n])
    xp.multiply(grad_c, i, out=d[:, 2 * n:3 * n])
    xp.multiply(grad_h, tc, out=d[:, 3 * n:])
    # d(pre-activation) = d(activation) * activation': s(1 - s) for the sigmoid gates,
    # 1 - t^2 for the tanh cell gate.
    act = saved[:, :4 * n]
    slope = 1 - act
    slope *= act
    xp.multiply(g, g, out=slope[:, 2 * n:3 * n])
    xp.subtract(1, slope[:, 2 * n:3 * n], out=slope[:, 2 * n:3 * n])
    d *= slope
    return (d, xp.matmul(d, w_hh) if need_h else d, xp.matmul(d.T, h) if need_w else d,
            grad_c * f)


@_lstm_cell.defvjp
def _lstm_cell_vjp(ctx, grad_h, grad_c):
    h, w_hh, c = ctx.inputs[1:]
    need_h, need_w = ctx.edges[1] is not None, ctx.edges[2] is not None
    if not state.enabled:
        saved = ctx.params["stash"][0]
        d, dh, dw, dc = dispatch(_lstm_cell_backward, (grad_h, grad_c, saved, h, w_hh, c),
                                 {"need_h": need_h, "need_w": need_w})
        return d, (dh if need_h else None), (dw if need_w else None), dc
    # create_graph: the same gradients in ember ops, differentiable again.
    from .matmul import matmul
    from .shape import cat
    gates = ctx.inputs[0] + matmul(h, w_hh.t())
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = (f * c + i * g).tanh()
    grad_c = grad_c + grad_h * o * (1 - tc * tc)
    d = cat([grad_c * g * i * (1 - i), grad_c * c * f * (1 - f),
             grad_c * i * (1 - g * g), grad_h * tc * o * (1 - o)], 1)
    return (d, (matmul(d, w_hh) if need_h else None), (matmul(d.t(), h) if need_w else None),
            grad_c * f)


def lstm_cell_fused(gates_x, h, w_hh, c):
    """(h', c') of one LSTM step: gates = gates_x + h @ w_hh^T, ordered (input, forget, cell,
    output) as in PyTorch's weights; gates_x holds the input projection and the biases."""
    return dispatch(_lstm_cell, (gates_x, h, w_hh, c), {"stash": []})
