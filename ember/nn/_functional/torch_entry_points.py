"""torch's top-level forms of nn.functional's kernels, with ATen's positional signatures:
batch_norm / native_batch_norm, native_layer_norm, native_group_norm, rms_norm, the in-place
dropouts and activations (alpha_dropout_, feature_alpha_dropout_, dropout_, celu_, selu_,
rrelu_, threshold_), native_channel_shuffle, convolution, max_pool1d_with_indices,
grid_sampler(_2d/_3d), affine_grid_generator, embedding_bag, and the recurrent cells and
runs (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell, lstm, gru, rnn_tanh, rnn_relu).

Each calls ember's nn.functional implementation (so values, random streams and gradients
are that code's, which is tested against torch) and adds the extra outputs ATen returns
(saved mean and inverse std, bag bookkeeping); the recurrent ones step ember ops through
time themselves. The forms written in tensor ops alone (batch_norm_update_stats,
native_dropout, feature_dropout, embedding_renorm_) are in ops/functional_entry_points.py."""
from ... import _dtype as dt
from ..._inplace import write_out
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.functional_entry_points import check_dropout_p
from ...ops.registry import PUBLIC, check_tensor, export
from .. import functional as F
from .normalization import _batch_norm_body

# NOTE: the kernels are read from nn.functional (F.<name>) when called, not imported one by
# one: `import ember` later puts torch's argument parser in front of F's functions
# (ember._signatures), and these forms call the checked ones.

__all__ = ["batch_norm", "native_batch_norm", "native_layer_norm", "native_group_norm",
           "rms_norm", "alpha_dropout_", "feature_alpha_dropout_", "dropout_", "celu_",
           "selu_", "rrelu_", "threshold_", "native_channel_shuffle", "convolution",
           "max_pool1d_with_indices", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "affine_grid_generator", "embedding_bag", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell", "lstm", "gru", "rnn_tanh", "rnn_relu"]


def _empty(like):
    return like.new_empty((0,))


# ---------------------------------------------------------------------- normalization
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """ATen's argument order (weight and bias before the running statistics)."""
    return _batch_norm_body(input, running_mean, running_var, weight, bias, training,
                            momentum, eps)


def _batch_stats(input, eps):
    """The batch mean and 1/sqrt(biased var + eps) over every dim but the channel's."""
    dims = (0,) + tuple(range(2, input.dim()))
    with no_grad():
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        return mean, (var + eps).rsqrt()


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps, *, out=None):
    """(output, save_mean, save_invstd); the saved statistics are empty in evaluation."""
    check_tensor("native_batch_norm", input)
    if training:
        stats = _batch_stats(input, eps)
    output = _batch_norm_body(input, running_mean, running_var, weight, bias, training,
                              momentum, eps)
    if not training:
        stats = (_empty(input), _empty(input))
    result = (output,) + stats
    if out is None:
        return result
    with no_grad():
        for value, target in zip(result, out):
            write_out(value, target)
    return tuple(out)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    check_tensor("native_layer_norm", input)
    output = F.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    with no_grad():
        mean = input.mean(dims, keepdim=True) if dims else input.clone()
        var = input.var(dims, unbiased=False, keepdim=True) if dims else input * 0
        return output, mean, (var + eps).rsqrt()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with mean and rstd of shape (N, group)."""
    check_tensor("native_group_norm", input)
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()}")
    output = F.group_norm(input, group, weight, bias, eps)
    with no_grad():
        grouped = input.reshape(N, group, -1)
        mean = grouped.mean(-1)
        var = grouped.var(-1, unbiased=False)
        return output, mean, (var + eps).rsqrt()


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


# ---------------------------------------------------------------------- in-place forms
def alpha_dropout_(input, p, train):
    check_tensor("alpha_dropout_", input)
    check_dropout_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input, p, train):
    check_tensor("feature_alpha_dropout_", input)
    check_dropout_p(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def celu_(input, alpha=1.0):
    check_tensor("celu_", input)
    return F.celu_(input, alpha)


def selu_(input):
    check_tensor("selu_", input)
    return F.selu_(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    check_tensor("rrelu_", input)
    if generator is not None:
        raise NotImplementedError("rrelu_(generator=...) is not supported by ember: it draws "
                                  "from the default generator (seed it with manual_seed)")
    return F.rrelu_(input, lower, upper, training)


def threshold_(input, threshold, value):
    check_tensor("threshold_", input)
    return F.threshold_(input, threshold, value)


def dropout_(input, p, train):
    check_tensor("dropout_", input)
    check_dropout_p(p)
    return F.dropout(input, p, train, inplace=True)


# ---------------------------------------------------------------------- convolution, pooling
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's generic convolution: the dimensionality comes from the weight."""
    check_tensor("convolution", input)
    spatial = weight.dim() - 2
    if spatial not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but "
                           f"got input of size: {list(input.shape)}")
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                    groups, tuple(dilation))
    conv = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride if stride != () else None, padding,
                        dilation, ceil_mode, return_indices=True)


def native_channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


# ---------------------------------------------------------------------- grid sampling
_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with ATen's integer modes (0 bilinear, 1 nearest, 2 bicubic; padding 0
    zeros, 1 border, 2 reflection)."""
    check_tensor("grid_sampler", input)
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], align_corners)


def _grid_sampler_of_rank(spatial):
    """grid_sampler_2d / grid_sampler_3d: grid_sampler for inputs of `spatial` + 2 dims."""
    name = f"grid_sampler_{spatial}d"

    def fn(input, grid, interpolation_mode, padding_mode, align_corners):
        check_tensor(name, input)
        if input.dim() != spatial + 2:
            raise RuntimeError(f"grid_sampler(): expected {spatial + 2}D input and grid with "
                               f"same number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    fn.__name__ = fn.__qualname__ = name
    return fn


grid_sampler_2d, grid_sampler_3d = _grid_sampler_of_rank(2), _grid_sampler_of_rank(3)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), align_corners)


# ---------------------------------------------------------------------- embeddings
_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices), ATen's order of arguments; the last three
    are the bookkeeping ATen's CPU kernel returns for each mode (empty or zero where a mode
    keeps none)."""
    check_tensor("embedding_bag", weight, "weight")
    output = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                             _BAG_MODES[mode], sparse, per_sample_weights,
                             include_last_offset, padding_idx)
    with no_grad():
        bags = output.shape[0]
        starts = offsets[:bags] if include_last_offset else offsets
        zeros = offsets.new_zeros((bags,))
        # offset2bag: the bag each index falls in (a later bag wins over empty ones)
        marks = indices.new_zeros((indices.numel() + 1,))
        marks.index_add_(0, starts, indices.new_ones(starts.shape))
        offset2bag = marks[:indices.numel()].cumsum(0) - 1
        if mode == 0:
            # NOTE: ATen's CPU sum kernel fills offset2bag only on its float64 path and
            # when a padding index is given
            if weight.dtype is not dt.float64 and padding_idx is None:
                offset2bag = indices.new_empty((0,))
            return output, offset2bag, zeros, zeros.clone()
        # NOTE: as ATen's CPU kernel, bag sizes run from each start to the next one (the
        # last bag to the end of `indices`), also under include_last_offset
        ends = PUBLIC["cat"]([starts[1:], offsets.new_tensor([indices.numel()])])
        bag_size = ends - starts
        if padding_idx is not None:
            kept = (indices != padding_idx).long()
            bag_size = zeros.index_add(0, offset2bag, kept)
        if mode == 1:
            return output, offset2bag, bag_size, bag_size.clone()
        max_indices = offsets.new_zeros(tuple(output.shape))
        rows = weight[indices]
        if padding_idx is not None:   # padded entries never win (an all-padded bag: 0)
            rows = rows.masked_fill((indices == padding_idx).unsqueeze(-1), float("-inf"))
        for b in range(bags):
            lo, hi = int(starts[b]), int(ends[b])
            if hi > lo and bool((rows[lo:hi] > float("-inf")).any()):
                best = rows[lo:hi].argmax(0)
                max_indices[b] = indices[lo:hi][best]
        return output, offset2bag, bag_size, max_indices


# ---------------------------------------------------------------------- recurrent cells
# The cells and the multi-layer runs over flat weight lists, as torch's nn.LSTM/GRU/RNN call
# them (ember's run their own loops: rnn.py). Written in ember ops (matmuls and pointwise
# gates), so they differentiate for free; a run steps through time with the cells, layer by
# layer, direction by direction, with F.dropout between layers in training.
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


# ---------------------------------------------------------------------- recurrent runs
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
            check_dropout_p(dropout)   # (ATen's RuntimeError, before F.dropout's ValueError)
            layer_input = F.dropout(layer_input, dropout, True)
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
