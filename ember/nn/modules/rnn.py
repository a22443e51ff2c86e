"""RNN, LSTM, GRU and their single-step cells, with PyTorch's parameters, checks and reprs."""
import math
import numbers
import warnings

from ... import _creation
from ...ops.rnn_ops import lstm_cell_fused
from ...ops.activation import relu
from ...ops.unary import sigmoid, tanh
from .. import init
from .._functional.linear import linear
from .._functional.rnn import run_rnn
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_type(value, kind, name):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                        f"{type(value).__name__}")


def _permute(hx, permutation):
    return hx if permutation is None else hx.index_select(1, permutation)


def _check_rnn_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                    proj_size):
    """RNNBase's argument checks, in PyTorch's order and words."""
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    _check_type(bias, bool, "bias")
    _check_type(batch_first, bool, "batch_first")
    _check_type(input_size, int, "input_size")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    _check_type(hidden_size, int, "hidden_size")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


class RNNBase(Module):
    """The parameters, checks and driving loop shared by RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        _check_rnn_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                        proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._make_weights({"device": device, "dtype": dtype})
        self.reset_parameters()

    def _make_weights(self, kw):
        """One Parameter per layer, direction and kind, named as PyTorch's
        (weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0, ...)."""
        mode, hidden_size, proj_size = self.mode, self.hidden_size, self.proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        dirs = 2 if self.bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(self.num_layers):
            for d in range(dirs):
                layer_input = self.input_size if layer == 0 else real_hidden * dirs
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if self.bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if d == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)

    # torch keeps these as lists of the live Parameters; properties stay in step with
    # load_state_dict, .to() and reassignment for free.
    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def _weight_slots(self):
        """Per layer and direction, the names of (w_ih, w_hh, b_ih, b_hh, w_hr) or None."""
        slots = self.__dict__.get("_slots_cache")
        if slots is None or len(slots) != len(self._all_weights):
            kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
            slots = [tuple(next((n for n in names if n.startswith(k + "_l")), None)
                           for k in kinds) for names in self._all_weights]
            self.__dict__["_slots_cache"] = slots
        return slots

    def flatten_parameters(self):
        """Accepted for compatibility: ember's weights need no flattening."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ checks
    def _expected_hidden_size(self, input, batch_sizes, cell=False):
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        size = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def check_input(self, input, batch_sizes):
        w = self.weight_ih_l0
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    @staticmethod
    def check_hidden_size(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # ------------------------------------------------------------------ forward
    def _zeros_state(self, input, batch_sizes, cell=False):
        shape = self._expected_hidden_size(input, batch_sizes, cell)
        return _creation.zeros(shape, dtype=input.dtype, device=input.device)

    def _prepare(self, input, hx, is_lstm):
        """Unpack/normalise the input and initial state; returns what _run needs."""
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        batch_sizes = sorted_indices = unsorted_indices = None
        batched = True
        if isinstance(input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = ((_permute(hx[0], sorted_indices), _permute(hx[1], sorted_indices))
                      if is_lstm else _permute(hx, sorted_indices))
        else:
            if input.dim() not in (2, 3):
                tensor = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 f"{tensor} instead")
            batched = input.dim() == 3
            want = 3 if batched else 2
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if hx is not None:
                if is_lstm:
                    if hx[0].dim() != want or hx[1].dim() != want:
                        raise RuntimeError(f"For {kind} input, hx and cx should also be {want}"
                                           f"-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) "
                                           "tensors")
                elif hx.dim() != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                       f"{hx.dim()}-D tensor")
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
                if hx is not None:
                    hx = ((hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if is_lstm
                          else hx.unsqueeze(1))
        self.check_input(input, batch_sizes)
        if is_lstm:
            if hx is None:
                hx = (self._zeros_state(input, batch_sizes),
                      self._zeros_state(input, batch_sizes, cell=True))
            else:
                self.check_hidden_size(hx[0], self._expected_hidden_size(input, batch_sizes),
                                       "Expected hidden[0] size {}, got {}")
                self.check_hidden_size(hx[1], self._expected_hidden_size(input, batch_sizes,
                                                                         True),
                                       "Expected hidden[1] size {}, got {}")
        elif hx is None:
            hx = self._zeros_state(input, batch_sizes)
        else:
            self.check_hidden_size(hx, self._expected_hidden_size(input, batch_sizes))
        return input, hx, batch_sizes, sorted_indices, unsorted_indices, batched

    def _run(self, input, hx, is_lstm):
        input, hx, batch_sizes, sorted_idx, unsorted_idx, batched = self._prepare(
            input, hx, is_lstm)
        h0, c0 = hx if is_lstm else (hx, None)
        sizes = None if batch_sizes is None else batch_sizes.tolist()
        x = input
        params = self._parameters
        weights = [tuple(None if n is None else params[n] for n in slots)
                   for slots in self._weight_slots()]
        output, h_n, c_n = run_rnn(self.mode, x, h0, c0, weights, self.num_layers,
                                   self.bidirectional, self.dropout, self.training, sizes,
                                   self.batch_first and sizes is None)
        if sizes is not None:
            output = PackedSequence(output, batch_sizes, sorted_idx, unsorted_idx)
            h_n = _permute(h_n, unsorted_idx)
            if c_n is not None:
                c_n = _permute(c_n, unsorted_idx)
        else:
            if not batched:
                output = output.squeeze(0 if self.batch_first else 1)
                h_n = h_n.squeeze(1)
                if c_n is not None:
                    c_n = c_n.squeeze(1)
        return output, (h_n if c_n is None else (h_n, c_n))


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def __setattr__(self, name, value):
        if name == "nonlinearity" and "_parameters" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def forward(self, input, hx=None):
        return self._run(input, hx, False)


class LSTM(RNNBase):
    """Long short-term memory, gates ordered (input, forget, cell, output) as in PyTorch."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, True)


class GRU(RNNBase):
    """Gated recurrent unit, gates ordered (reset, update, new) as in PyTorch."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, False)


# ---------------------------------------------------------------------- cells
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size),
                                                   **kw))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size),
                                                   **kw))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for h in (hx if isinstance(hx, tuple) else (hx,)):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        return input, batched

    def _check_hidden(self, input, h, which):
        if input.shape[0] != h.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{which} "
                               f"batch size {h.shape[0]}")
        if h.shape[1] != self.hidden_size:
            raise RuntimeError(f"hidden{which} has inconsistent hidden_size: got "
                               f"{h.shape[1]}, expected {self.hidden_size}")

    def _state(self, input, hx, batched):
        if hx is None:
            return _creation.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                                   device=input.device)
        return hx if batched else hx.unsqueeze(0)

    def _gates(self, input, hx):
        return (linear(input, self.weight_ih, self.bias_ih),
                linear(hx, self.weight_hh, self.bias_hh))


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, batched = self._check(input, hx, "RNNCell")
        hx = self._state(input, hx, batched)
        self._check_hidden(input, hx, "0")
        gi, gh = self._gates(input, hx)
        if self.nonlinearity == "tanh":
            ret = tanh(gi + gh)
        elif self.nonlinearity == "relu":
            ret = relu(gi + gh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._check(input, hx, "LSTMCell")
        if hx is None:
            zeros = self._state(input, None, True)
            hx = (zeros, zeros)
        else:
            hx = (self._state(input, hx[0], batched), self._state(input, hx[1], batched))
        self._check_hidden(input, hx[0], "0")
        self._check_hidden(input, hx[1], "1")
        gates_x = linear(input, self.weight_ih, self.bias_ih)
        if self.bias_hh is not None:
            gates_x = gates_x + self.bias_hh
        h, c = lstm_cell_fused(gates_x, hx[0], self.weight_hh, hx[1])
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._check(input, hx, "GRUCell")
        hx = self._state(input, hx, batched)
        self._check_hidden(input, hx, "0")
        gi, gh = self._gates(input, hx)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = tanh(i_n + r * h_n)
        ret = n + z * (hx - n)
        return ret if batched else ret.squeeze(0)
