"""Building blocks of the models (torchvision.ops.misc and ops.stochastic_depth): their
submodule layout decides the parameter names, so it follows torchvision's exactly."""
from ... import _creation, nn


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, then an optional norm layer, then an optional activation, as one Sequential
    (children 0, 1, 2). Padding defaults to "same" for odd kernels; the conv has a bias only
    when there is no norm layer, unless `bias` says otherwise."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                n = len(kernel_size) if not isinstance(kernel_size, int) else len(dilation)
                ks = (kernel_size,) * n if isinstance(kernel_size, int) else tuple(kernel_size)
                dl = (dilation,) * n if isinstance(dilation, int) else tuple(dilation)
                kernel_size, dilation = ks, dl
                padding = tuple((k - 1) // 2 * d for k, d in zip(ks, dl))
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Channel attention: global average pool, 1x1 conv down (fc1), activation, 1x1 conv up
    (fc2), gate (`scale_activation`), then scale the input channels."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                 scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, x):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))

    def forward(self, x):
        return self._scale(x) * x


class MLP(nn.Sequential):
    """Linear layers of widths `hidden_channels`, each but the last followed by the optional
    norm, the activation and dropout; dropout also follows the last one."""

    def __init__(self, in_channels, hidden_channels, norm_layer=None,
                 activation_layer=nn.ReLU, inplace=None, bias=True, dropout=0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        width = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(width, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            width = hidden
        layers.append(nn.Linear(width, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


def stochastic_depth(input, p, mode, training=True):
    """Drop whole residual branches with probability `p` while training: per sample
    (mode="row") or for the whole batch (mode="batch"); survivors are scaled by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = _creation.empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival)
    if survival > 0.0:
        noise.div_(survival)
    return input * noise


class StochasticDepth(nn.Module):
    def __init__(self, p, mode):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
