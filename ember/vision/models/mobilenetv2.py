"""MobileNetV2 (torchvision.models.mobilenetv2)."""
from typing import Optional

from ... import nn
from ...ops.views import flatten
from ._api import WeightsEnum, register_model
from ._layers import Conv2dNormActivation
from ._utils import (_imagenet, _load_weights, _make_divisible, _ovewrite_named_param,
                     handle_legacy_interface, init_conv_norm_linear)

__all__ = ["MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2"]


def _init_linear(m):
    nn.init.normal_(m.weight, 0, 0.01)
    nn.init.zeros_(m.bias)


class InvertedResidual(nn.Module):
    """Expand (1x1), depthwise 3x3, linear projection (1x1, no activation); residual when
    the shape is kept."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                        norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                   norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
                 round_nearest=8, block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        block = InvertedResidual if block is None else block
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        input_channel = 32
        last_channel = 1280
        if inverted_residual_setting is None:
            # t (expansion), c (channels), n (repeats), s (first stride)
            inverted_residual_setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2],
                                         [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                                         [6, 320, 1, 1]]
        if len(inverted_residual_setting) == 0 or len(inverted_residual_setting[0]) != 4:
            raise ValueError("inverted_residual_setting should be non-empty or a 4-element "
                             f"list, got {inverted_residual_setting}")
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1,
                                      expand_ratio=t, norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))
        init_conv_norm_linear(self, _init_linear)

    def _forward_impl(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


class MobileNet_V2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("mobilenet_v2-b0353104.pth", 3504872, (1, 1), 71.878, 90.286)
    IMAGENET1K_V2 = _imagenet("mobilenet_v2-7ebf99e0.pth", 3504872, (1, 1), 72.154, 90.822,
                              resize_size=232)
    DEFAULT = IMAGENET1K_V2


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V2_Weights.IMAGENET1K_V1))
def mobilenet_v2(*, weights: Optional[MobileNet_V2_Weights] = None, progress: bool = True,
                 **kwargs):
    """MobileNetV2 ("Inverted Residuals and Linear Bottlenecks")."""
    weights = MobileNet_V2_Weights.verify(weights)
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = MobileNetV2(**kwargs)
    if weights is not None:
        _load_weights(model, weights, progress)
    return model
