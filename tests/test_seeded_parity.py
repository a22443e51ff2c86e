"""Seeded programs give PyTorch's numbers: every nn.init function, the default initialisation
of each layer with parameters, dropout masks, shuffles and splits, compared bit for bit with
real torch after the same manual_seed. tests/test_cpu_capability.py reruns this file under
each CPU capability PyTorch can take on this machine (its random kernels round per build)."""
import warnings

import numpy as np
import pytest

import ember

INITS = {
    "uniform_": lambda L, t: L.nn.init.uniform_(t, -0.3, 0.7),
    "normal_": lambda L, t: L.nn.init.normal_(t, 0.2, 1.5),
    "trunc_normal_": lambda L, t: L.nn.init.trunc_normal_(t, 0.1, 0.9, -1.0, 1.2),
    "xavier_uniform_": lambda L, t: L.nn.init.xavier_uniform_(t, gain=1.3),
    "xavier_normal_": lambda L, t: L.nn.init.xavier_normal_(t),
    "kaiming_uniform_": lambda L, t: L.nn.init.kaiming_uniform_(t, a=0.1, mode="fan_out"),
    "kaiming_normal_": lambda L, t: L.nn.init.kaiming_normal_(t, nonlinearity="leaky_relu"),
    "sparse_": lambda L, t: L.nn.init.sparse_(t.view(t.shape[0], -1), 0.4),
    "orthogonal_": lambda L, t: L.nn.init.orthogonal_(t, gain=0.5),
}


@pytest.mark.parametrize("name", sorted(INITS))
@pytest.mark.parametrize("shape", [(7, 5), (33, 4, 3, 3), (16, 17)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_functions(name, shape, dtype, torch_mod):
    out = []
    for L in (torch_mod, ember):
        L.manual_seed(11)
        t = L.empty(*shape, dtype=getattr(L, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            INITS[name](L, t)
        out.append(t.numpy())
    if name == "orthogonal_":
        # a QR factorisation: LAPACK's, whose rounding is the BLAS's and the CPU's
        np.testing.assert_allclose(out[1], out[0], rtol=1e-4 if dtype == "float32" else 1e-10,
                                   atol=1e-5 if dtype == "float32" else 1e-12)
    else:
        np.testing.assert_array_equal(out[1], out[0])


LAYERS = {
    "Linear": lambda n: n.Linear(19, 7),
    "Bilinear": lambda n: n.Bilinear(3, 4, 5),
    "Conv1d": lambda n: n.Conv1d(3, 8, 5),
    "Conv2d": lambda n: n.Conv2d(3, 16, 3, groups=1),
    "Conv3d": lambda n: n.Conv3d(2, 4, 3),
    "ConvTranspose2d": lambda n: n.ConvTranspose2d(4, 6, 3),
    "Embedding": lambda n: n.Embedding(50, 16, padding_idx=3),
    "EmbeddingBag": lambda n: n.EmbeddingBag(40, 8),
    "LSTM": lambda n: n.LSTM(10, 20, num_layers=2, bidirectional=True),
    "GRU": lambda n: n.GRU(6, 9),
    "RNN": lambda n: n.RNN(5, 7),
    "LSTMCell": lambda n: n.LSTMCell(4, 6),
    "MultiheadAttention": lambda n: n.MultiheadAttention(32, 4),
    "TransformerEncoderLayer": lambda n: n.TransformerEncoderLayer(32, 4, 64),
    "PReLU": lambda n: n.PReLU(3),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_default_layer_initialisation(name, torch_mod):
    states = []
    for L in (torch_mod, ember):
        L.manual_seed(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = LAYERS[name](L.nn)
        states.append({k: v.detach().numpy() for k, v in layer.state_dict().items()})
    assert list(states[1]) == list(states[0])
    for key in states[0]:
        np.testing.assert_array_equal(states[1][key], states[0][key], err_msg=key)


DROPOUTS = {
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.3),
    "dropout1d": lambda L, x: L.nn.functional.dropout1d(x.view(6, 5, 20), 0.4),
    "dropout2d": lambda L, x: L.nn.functional.dropout2d(x.view(6, 5, 4, 5), 0.4),
    "dropout3d": lambda L, x: L.nn.functional.dropout3d(x.view(6, 5, 2, 2, 5), 0.4),
    "alpha_dropout": lambda L, x: L.nn.functional.alpha_dropout(x, 0.2, True),
    "feature_alpha_dropout": lambda L, x: L.nn.functional.feature_alpha_dropout(
        x.view(6, 5, 4, 5), 0.2, True),
}


@pytest.mark.parametrize("name", sorted(DROPOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_masks(name, dtype, torch_mod):
    out = []
    for L in (torch_mod, ember):
        L.manual_seed(3)
        x = L.arange(600, dtype=getattr(L, dtype)) / 100 - 3
        out.append(DROPOUTS[name](L, x).numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.25, 0.7])
def test_large_dropout_masks_and_their_gradient(dtype, p, torch_mod):
    """Dropout over 100,003 elements (the one-pass mask kernel, ops/random.dropout_mask_):
    output and input gradient equal torch's bit for bit, and the stream continues alike."""
    out = []
    for L in (torch_mod, ember):
        L.manual_seed(11)
        x = (L.arange(100_003, dtype=getattr(L, dtype)) / 1000 - 50).requires_grad_()
        y = L.nn.functional.dropout(x, p)
        y.backward(L.ones_like(y))
        out.append((y.detach().numpy(), x.grad.numpy(), L.rand(5).numpy()))
    for theirs, ours in zip(*out):
        np.testing.assert_array_equal(ours, theirs)


def test_shuffles_splits_and_samplers(torch_mod):
    def draw(L):
        data = L.utils.data
        g = L.Generator().manual_seed(9)
        loader = data.DataLoader(data.TensorDataset(L.arange(40)), batch_size=7, shuffle=True,
                                 generator=g)
        parts = data.random_split(range(30), [0.5, 0.3, 0.2],
                                  generator=L.Generator().manual_seed(2))
        L.manual_seed(4)
        weighted = list(data.WeightedRandomSampler([0.1, 0.5, 2.0, 0.4], 12))
        subset = list(data.SubsetRandomSampler(list(range(5, 25))))
        replace = list(data.RandomSampler(range(10), replacement=True, num_samples=15))
        return ([b[0].tolist() for b in loader], [list(p) for p in parts], weighted, subset,
                replace, L.randperm(100).tolist(), L.multinomial(L.rand(3, 9), 4).tolist())
    assert draw(ember) == draw(torch_mod)
