"""MobileNetV3 small and large (torchvision.models.mobilenetv3)."""
from collections.abc import Sequence
from functools import partial
from typing import Optional

from ... import nn
from ...ops.views import flatten
from ._api import WeightsEnum, register_model
from ._layers import Conv2dNormActivation, SqueezeExcitation
from ._utils import (_imagenet, _load_weights, _make_divisible, _ovewrite_named_param,
                     handle_legacy_interface, init_conv_norm_linear)

__all__ = ["MobileNetV3", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights",
           "mobilenet_v3_large", "mobilenet_v3_small"]


def _init_linear(m):
    nn.init.normal_(m.weight, 0, 0.01)
    nn.init.zeros_(m.bias)


class InvertedResidualConfig:
    """One bottleneck's settings, channels scaled by `width_mult` and rounded to 8."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, dilation, width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"  # hard swish, else ReLU ("RE")
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer,
                 se_layer=partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=act))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels,
                                           kernel_size=cnf.kernel, stride=stride,
                                           dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=act))
        if cnf.use_se:
            squeeze = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(se_layer(cnf.expanded_channels, squeeze))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels,
                                           kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result += x
        return result


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None,
                 norm_layer=None, dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, Sequence) and all(
                isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be "
                            "List[InvertedResidualConfig]")
        block = InvertedResidual if block is None else block
        if norm_layer is None:
            norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(last_out, last_channel), nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        init_conv_norm_linear(self, _init_linear)

    def _forward_impl(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False, **kwargs):
    div = 2 if reduced_tail else 1  # thinner last stage (for detection backbones)
    dil = 2 if dilated else 1
    c = partial(InvertedResidualConfig, width_mult=width_mult)
    adjust = partial(InvertedResidualConfig.adjust_channels, width_mult=width_mult)
    # (in, kernel, expanded, out, SE, activation, stride, dilation)
    if arch == "mobilenet_v3_large":
        setting = [
            c(16, 3, 16, 16, False, "RE", 1, 1), c(16, 3, 64, 24, False, "RE", 2, 1),
            c(24, 3, 72, 24, False, "RE", 1, 1), c(24, 5, 72, 40, True, "RE", 2, 1),
            c(40, 5, 120, 40, True, "RE", 1, 1), c(40, 5, 120, 40, True, "RE", 1, 1),
            c(40, 3, 240, 80, False, "HS", 2, 1), c(80, 3, 200, 80, False, "HS", 1, 1),
            c(80, 3, 184, 80, False, "HS", 1, 1), c(80, 3, 184, 80, False, "HS", 1, 1),
            c(80, 3, 480, 112, True, "HS", 1, 1), c(112, 3, 672, 112, True, "HS", 1, 1),
            c(112, 5, 672, 160 // div, True, "HS", 2, dil),
            c(160 // div, 5, 960 // div, 160 // div, True, "HS", 1, dil),
            c(160 // div, 5, 960 // div, 160 // div, True, "HS", 1, dil)]
        last_channel = adjust(1280 // div)
    elif arch == "mobilenet_v3_small":
        setting = [
            c(16, 3, 16, 16, True, "RE", 2, 1), c(16, 3, 72, 24, False, "RE", 2, 1),
            c(24, 3, 88, 24, False, "RE", 1, 1), c(24, 5, 96, 40, True, "HS", 2, 1),
            c(40, 5, 240, 40, True, "HS", 1, 1), c(40, 5, 240, 40, True, "HS", 1, 1),
            c(40, 5, 120, 48, True, "HS", 1, 1), c(48, 5, 144, 48, True, "HS", 1, 1),
            c(48, 5, 288, 96 // div, True, "HS", 2, dil),
            c(96 // div, 5, 576 // div, 96 // div, True, "HS", 1, dil),
            c(96 // div, 5, 576 // div, 96 // div, True, "HS", 1, dil)]
        last_channel = adjust(1024 // div)
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return setting, last_channel


def _mobilenet_v3(setting, last_channel, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = MobileNetV3(setting, last_channel, **kwargs)
    if weights is not None:
        _load_weights(model, weights, progress)
    return model


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("mobilenet_v3_large-8738ca79.pth", 5483032, (1, 1), 74.042,
                              91.34)
    IMAGENET1K_V2 = _imagenet("mobilenet_v3_large-5c1a4163.pth", 5483032, (1, 1), 75.274,
                              92.566, resize_size=232)
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("mobilenet_v3_small-047dcff4.pth", 2542856, (1, 1), 67.668,
                              87.402)
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def mobilenet_v3_large(*, weights: Optional[MobileNet_V3_Large_Weights] = None,
                       progress: bool = True, **kwargs):
    """MobileNetV3-Large ("Searching for MobileNetV3")."""
    weights = MobileNet_V3_Large_Weights.verify(weights)
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_large", **kwargs)
    return _mobilenet_v3(setting, last_channel, weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Small_Weights.IMAGENET1K_V1))
def mobilenet_v3_small(*, weights: Optional[MobileNet_V3_Small_Weights] = None,
                       progress: bool = True, **kwargs):
    """MobileNetV3-Small."""
    weights = MobileNet_V3_Small_Weights.verify(weights)
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_small", **kwargs)
    return _mobilenet_v3(setting, last_channel, weights, progress, **kwargs)
