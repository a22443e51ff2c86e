"""torch's functional recurrent entry points: the cells (lstm_cell, gru_cell, rnn_tanh_cell,
rnn_relu_cell) and the multi-layer runs over flat weight lists (lstm, gru, rnn_tanh,
rnn_relu), with ATen's positional signatures, as nn.LSTM/GRU/RNN call them.

They are written in ember ops (matmuls and pointwise gates), so they differentiate for
free; the layer runs step through time with the cells, layer by layer, direction by
direction, with dropout between layers in training."""
from .._tensor import Tensor
from .registry import PUBLIC, check_tensor, export

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "lstm", "gru",
           "rnn_tanh", "rnn_relu"]


def _check_cell(name, input, hiddens, w_ih, w_hh):
    """PyTorch's shape checks of a cell call (2-D input; batch and sizes consistent)."""
    check_tensor(name, input)
    if input.size(1) != w_ih.size(1):   # (a 1-D input raises PyTorch's IndexError here)
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    for i, h in enumerate(hiddens):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                               f"batch size {h.size(0)}")
        if h.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {w_hh.size(1)}")


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    gates = input.matmul(w_ih.t()) + hx.matmul(w_hh.t())
    if b_ih is not None:
        gates = gates + b_ih
    if b_hh is not None:
        gates = gates + b_hh
    return gates


def _lstm_step(input, hx, w_ih, w_hh, b_ih, b_hh):
    """(h', c') from gates i, f, g, o (PyTorch's order in w_ih's rows)."""
    h, c = hx
    i, f, g, o = _gates(input, h, w_ih, w_hh, b_ih, b_hh).chunk(4, -1)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_next.tanh(), c_next


def _gru_step(input, hx, w_ih, w_hh, b_ih, b_hh):
    """h' from reset, update and new gates; the reset gate scales the hidden part of n."""
    gi = input.matmul(w_ih.t())
    gh = hx.matmul(w_hh.t())
    if b_ih is not None:
        gi = gi + b_ih
    if b_hh is not None:
        gh = gh + b_hh
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n)


def _tanh_step(input, hx, w_ih, w_hh, b_ih, b_hh):
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


def _relu_step(input, hx, w_ih, w_hh, b_ih, b_hh):
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    hx = tuple(hx)
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell("lstm_cell", input, hx, w_ih, w_hh)
    return _lstm_step(input, hx, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell("gru_cell", input, (hx,), w_ih, w_hh)
    return _gru_step(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell("rnn_tanh_cell", input, (hx,), w_ih, w_hh)
    return _tanh_step(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell("rnn_relu_cell", input, (hx,), w_ih, w_hh)
    return _relu_step(input, hx, w_ih, w_hh, b_ih, b_hh)


# ---------------------------------------------------------------------- layer runs
def _run(name, cell, input, states, params, has_biases, num_layers, dropout, train,
         bidirectional, batch_first):
    """Shared loop. `states` is a list of per-state tensors (h, or h and c), each
    (layers * directions, batch, hidden); returns the output and the final states."""
    stack, cat = PUBLIC["stack"], PUBLIC["cat"]
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != per * num_layers * directions:
        raise RuntimeError("got an incorrect number of RNN parameters")
    if any(s.shape[0] < num_layers * directions for s in states):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    unbatched = input.dim() == 2
    if unbatched:
        input = input.unsqueeze(1)
        states = [s.unsqueeze(1) for s in states]
    elif batch_first:
        input = input.transpose(0, 1)
    finals = [[] for _ in states]
    layer_input = input
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = params[k * per:(k + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            state = tuple(s[k] for s in states)
            steps = range(layer_input.shape[0])
            if direction == 1:
                steps = reversed(steps)
            hs = []
            for t in steps:
                state = cell(layer_input[t], state if len(state) > 1 else state[0],
                             w_ih, w_hh, b_ih, b_hh)
                state = state if isinstance(state, tuple) else (state,)
                hs.append(state[0])
            if direction == 1:
                hs.reverse()
            outputs.append(stack(hs) if hs else layer_input.new_zeros(
                (0,) + tuple(state[0].shape)))
            for store, value in zip(finals, state):
                store.append(value)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            from ..nn import functional  # (cycle: dropout is nn.functional's, above the ops)
            layer_input = functional.dropout(layer_input, dropout, True)
    output = layer_input
    finals = [stack(f) for f in finals]
    if unbatched:
        return output.squeeze(1), [f.squeeze(1) for f in finals]
    if batch_first:
        output = output.transpose(0, 1)
    return output, finals


def _packed_unsupported(name, hx):
    if isinstance(hx, Tensor) and hx.dim() == 1 and not hx.is_floating_point():
        raise NotImplementedError(f"ember does not support torch.{name} on packed sequences "
                                  "(data, batch_sizes); run nn.utils.rnn's padded form")


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    """(output, h_n, c_n); hx is (h_0, c_0)."""
    check_tensor("lstm", input)
    _packed_unsupported("lstm", hx)
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    out, (h, c) = _run("lstm", _lstm_step, input, list(hx), list(params), has_biases,
                       num_layers, dropout, train, bidirectional, batch_first)
    return out, h, c


def _single_state(name, cell):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first):
        check_tensor(name, input)
        _packed_unsupported(name, hx)
        out, (h,) = _run(name, lambda x, s, *w: cell(x, s, *w), input, [hx], list(params),
                         has_biases, num_layers, dropout, train, bidirectional, batch_first)
        return out, h
    run.__name__ = name
    run.__doc__ = f"(output, h_n) of a multi-layer {name} over flat weights."
    return run


gru = _single_state("gru", _gru_step)
rnn_tanh = _single_state("rnn_tanh", _tanh_step)
rnn_relu = _single_state("rnn_relu", _relu_step)

for _name in __all__:
    export(globals()[_name], method=False)
