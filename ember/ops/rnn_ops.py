"""Fused recurrent ops: one LSTM time step, and a whole LSTM or GRU layer, as one registry op.

An LSTM step written in ember ops costs about twelve recorded ops (a chunk, three sigmoids,
two tanhs, the products and sums); per-step Python overhead dominates small LSTMs, so the
step (the recurrent matmul and the gate arithmetic) is one op here.  Its VJP has two forms:
- plain backward: one `lstm_cell_backward` op computes both input gradients in a single
  kernel (grad mode is off there, so nothing is recorded);
- `create_graph=True`: the same formulas in ember ops, so double backward works.
The forward keeps the gate activations and tanh(c') (as PyTorch keeps its sigmoid and tanh
outputs), so the plain backward does no transcendental functions; the create_graph form
recomputes them in ember ops from the saved inputs.
A GRU layer works the same way (its step is `gru_cell`); its forward keeps [r, z, n,
W_hn h + b_hn] of every step for the backward.
"""
from ..autograd.grad_mode import state
from ..backends import array_module, gru, recurrent
from ..backends import matmul as products
from ..backends.special import quiet
from ._elementwise import LOW
from .linalg import addmm
from .matmul import matmul
from .registry import defop, dispatch
from .shape import cat, stack
from .unary import sigmoid, tanh

__all__ = ["gru_cell", "gru_layer", "lstm_cell_fused", "lstm_layer"]


@quiet  # exp(-x) overflows to inf for very negative x; 1/(1+inf) is then exactly 0
def _lstm_cell_kernel(gates_x, h, w_hh, c, stash):
    """h' and c'; the activations [i, f, g, o] and tanh(c') the backward reads go to
    `stash`."""
    xp = array_module(gates_x)
    act = products.matmul(h, w_hh.T)
    h_new, c_new, tc = (xp.empty_like(c) for _ in range(3))
    recurrent.lstm_gates(act, gates_x, c, h_new, c_new, tc)
    stash.append((act, tc))
    return h_new, c_new


# NOTE: the activations travel in a list passed as a parameter (the node keeps its params),
# not as a third output: an extra output would cost a wrap, a zero gradient and a check
# per step, on the path that dominates small LSTMs.
_lstm_cell = defop("lstm_cell", node="LstmCellBackward0", num_outputs=2)(_lstm_cell_kernel)


@defop("lstm_cell_backward", node="LstmCellBackwardBackward0", num_outputs=4)
def _lstm_cell_backward(grad_h, grad_c, saved, h, w_hh, c, need_h, need_w):
    """Gradients of (gates_x, h, w_hh, c); an unneeded one is returned as a placeholder."""
    xp = array_module(grad_h)
    act, tc = saved
    d = xp.empty_like(act)
    grad_c_prev = recurrent.lstm_gate_grads(act, tc, c, grad_h, grad_c, d)
    return (d, products.matmul(d, w_hh) if need_h else d,
            products.matmul(d.T, h) if need_w else d,
            grad_c_prev)


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


# ---------------------------------------------------------------------- a whole layer
@quiet
def _lstm_layer_kernel(gates_x, h0, c0, w_hh, reverse, stash):
    """Every step of one LSTM layer and direction: (output, h_T, c_T).

    gates_x: the input projection plus biases of every step, (T, B, 4H); the output is
    (T, B, H). What the backward reads goes to `stash`."""
    hs, h, c, saved = recurrent.lstm_layer(gates_x, h0, c0, w_hh, reverse)
    stash.append(saved)
    return hs, h, c


# (the grad_fn name is PyTorch's for its CPU LSTM layer)
_lstm_layer = defop("lstm_layer", node="MkldnnRnnLayerBackward0", num_outputs=3,
                    save_output=True)(_lstm_layer_kernel)


@defop("lstm_layer_backward", node="MkldnnRnnLayerBackwardBackward0", num_outputs=4)
def _lstm_layer_backward(grad_out, grad_h, grad_c, h0, c0, w_hh, saved, hs, reverse):
    """Gradients of (gates_x, h0, c0, w_hh); W_hh's is one matmul over every step at the
    end."""
    xp = array_module(grad_out)
    d, dh, dc = recurrent.lstm_layer_backward(grad_out, grad_h, grad_c, c0, w_hh, saved,
                                              reverse)
    # the hidden state each step started from, in step order: h0 first
    h_prev = xp.concatenate([hs[1:], h0[None]] if reverse else [h0[None], hs[:-1]])
    n4 = d.shape[2]
    grad_w = products.matmul(d.reshape(-1, n4).T, h_prev.reshape(-1, n4 // 4))
    return d, dh, dc, grad_w


@_lstm_layer.defvjp
def _lstm_layer_vjp(ctx, grad_out, grad_h, grad_c):
    gates_x, h0, c0, w_hh = ctx.inputs
    p = ctx.params
    if not state.enabled:
        return dispatch(_lstm_layer_backward, (grad_out, grad_h, grad_c, h0, c0, w_hh),
                        {"saved": p["stash"][0], "hs": ctx.output_array(0),
                         "reverse": p["reverse"]})
    # create_graph: the same layer step by step (cells whose VJP has a graph form),
    # differentiated with a graph.
    steps = gates_x.unbind(0)
    outs = [None] * len(steps)
    h, c = h0, c0
    for t in (range(len(steps) - 1, -1, -1) if p["reverse"] else range(len(steps))):
        h, c = lstm_cell_fused(steps[t], h, w_hh, c)
        outs[t] = h
    return _graph_grads(ctx, (stack(outs), h, c), (grad_out, grad_h, grad_c))


def _graph_grads(ctx, outputs, grad_outputs):
    """A layer VJP's create_graph form: the gradients, differentiable again, of `outputs`
    (the layer rebuilt step by step in ember ops) for the op's inputs that need one."""
    from ..autograd import grad  # (cycle: create_graph runs the engine, above the ops)
    wanted = [x for x, e in zip(ctx.inputs, ctx.edges) if e is not None]
    found = iter(grad(outputs, wanted, grad_outputs, create_graph=True, allow_unused=True))
    return tuple(next(found) if e is not None else None for e in ctx.edges)


def lstm_layer(gates_x, h0, c0, w_hh, reverse=False):
    """(output, h_T, c_T) of one LSTM layer direction over time-major gates_x, as one op
    (see _lstm_layer_kernel): no per-step dispatch, graph node or gradient accumulation for
    W_hh."""
    return dispatch(_lstm_layer, (gates_x, h0, c0, w_hh), {"reverse": reverse, "stash": []})


# ---------------------------------------------------------------------- a GRU layer
def gru_cell(gates_x, h, w_hh_t, b_hh):
    """h' of one GRU step in ember ops (a graph of about ten nodes, differentiable again):
    gates_x holds the input projection plus b_ih, w_hh_t is W_hh^T (transposed once per layer
    by the caller); gate order (reset, update, new) as in PyTorch's weights; h' = n + z (h - n)
    rounds as PyTorch's CPU cell's (h - n) z + n."""
    gh = matmul(h, w_hh_t) if b_hh is None else addmm(b_hh, h, w_hh_t)
    size = h.shape[1]
    x_rz, x_n = gates_x.split([2 * size, size], 1)
    h_rz, h_n = gh.split([2 * size, size], 1)
    r, z = sigmoid(x_rz + h_rz).chunk(2, 1)
    n = tanh(x_n + r * h_n)
    return n + z * (h - n)


@quiet  # exp(-x) overflows to inf for very negative x; 1/(1+inf) is then exactly 0
def _gru_layer_kernel(gates_x, h0, w_hh, b_hh, reverse, stash):
    """Every step of one GRU layer and direction: (output, h_T).

    gates_x: the input projection plus b_ih of every step, (T, B, 3H); the output is
    (T, B, H). What the backward reads goes to `stash`."""
    hs, h, acts = gru.gru_layer(gates_x, h0, w_hh, b_hh, reverse)
    stash.append(acts)
    return hs, h


# NOTE: PyTorch's CPU GRU has no layer node (its output's grad_fn is the StackBackward0 of its
# steps): the layer's node takes that name, so `out.grad_fn` reads as PyTorch's.
_gru_layer = defop("gru_layer", node="StackBackward0", num_outputs=2,
                   save_output=True)(_gru_layer_kernel)


@defop("gru_layer_backward", num_outputs=4)
def _gru_layer_backward(grad_out, grad_h, h0, w_hh, acts, hs, reverse):
    """Gradients of (gates_x, h0, w_hh, b_hh); W_hh's and b_hh's are sums over every step at
    the end."""
    xp = array_module(grad_out)
    dx, dgh, dh = gru.gru_layer_backward(grad_out, grad_h, h0, w_hh, acts, hs, reverse)
    # the hidden state each step started from, in step order: h0 first
    h_prev = xp.concatenate([hs[1:], h0[None]] if reverse else [h0[None], hs[:-1]])
    n3 = dgh.shape[2]
    flat = dgh.reshape(-1, n3)
    return dx, dh, products.matmul(flat.T, h_prev.reshape(-1, n3 // 3)), flat.sum(0)


@_gru_layer.defvjp
def _gru_layer_vjp(ctx, grad_out, grad_h):
    gates_x, h0, w_hh, b_hh = ctx.inputs
    p = ctx.params
    if not state.enabled:
        grads = dispatch(_gru_layer_backward, (grad_out, grad_h, h0, w_hh),
                         {"acts": p["stash"][0], "hs": ctx.output_array(0),
                          "reverse": p["reverse"]})
        return tuple(g if e is not None else None for g, e in zip(grads, ctx.edges))
    # create_graph: the same layer step by step in ember ops, differentiated with a graph.
    return _graph_grads(ctx, _gru_steps(gates_x, h0, w_hh, b_hh, p["reverse"]),
                        (grad_out, grad_h))


def _gru_steps(gates_x, h0, w_hh, b_hh, reverse):
    """gru_layer's (output, h_T) step by step in ember ops: a graph of every step."""
    steps = gates_x.unbind(0)
    outs = [None] * len(steps)
    h, w_hh_t = h0, w_hh.t()
    for t in (range(len(steps) - 1, -1, -1) if reverse else range(len(steps))):
        h = outs[t] = gru_cell(steps[t], h, w_hh_t, b_hh)
    return stack(outs), h


def gru_layer(gates_x, h0, w_hh, b_hh=None, reverse=False):
    """(output, h_T) of one GRU layer direction over time-major gates_x (the input projection
    plus b_ih), as one op (see _gru_layer_kernel): no per-step dispatch or graph nodes."""
    if gates_x.dtype in LOW:
        # NOTE: float16/bfloat16 ops compute in float32 and round each result, as PyTorch's
        # do; the layer's arrays would round at other places (its sigmoid is four ops)
        return _gru_steps(gates_x, h0, w_hh, b_hh, reverse)
    return dispatch(_gru_layer, (gates_x, h0, w_hh, b_hh), {"reverse": reverse, "stash": []})
