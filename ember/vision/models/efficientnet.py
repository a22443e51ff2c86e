"""EfficientNet-B0 (torchvision.models.efficientnet; the other widths are not built yet)."""
import copy
import math
from collections.abc import Sequence
from functools import partial
from typing import Optional

from ... import nn
from ...ops.views import flatten
from ._api import WeightsEnum, register_model
from ._layers import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from ._utils import (_imagenet, _load_weights, _make_divisible, _ovewrite_named_param,
                     handle_legacy_interface, init_conv_norm_linear)

__all__ = ["EfficientNet", "EfficientNet_B0_Weights", "efficientnet_b0"]


def _init_linear(m):
    init_range = 1.0 / math.sqrt(m.out_features)
    nn.init.uniform_(m.weight, -init_range, init_range)
    nn.init.zeros_(m.bias)


class _MBConvConfig:
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 block):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
        self.block = block

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{self.__class__.__name__}({fields})"


class MBConvConfig(_MBConvConfig):
    """A stage of MBConv blocks, channels scaled by `width_mult` and depth by `depth_mult`."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 width_mult=1.0, depth_mult=1.0, block=None):
        input_channels = self.adjust_channels(input_channels, width_mult)
        out_channels = self.adjust_channels(out_channels, width_mult)
        num_layers = self.adjust_depth(num_layers, depth_mult)
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         MBConv if block is None else block)

    @staticmethod
    def adjust_depth(num_layers, depth_mult):
        return int(math.ceil(num_layers * depth_mult))


class MBConv(nn.Module):
    """Expand 1x1, depthwise kxk, squeeze-excitation, project 1x1; SiLU activations; the
    residual branch is randomly dropped while training (stochastic depth)."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        squeeze = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded, squeeze, activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += x
        return result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2,
                 num_classes=1000, norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, Sequence) and all(
                isinstance(s, _MBConvConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # later blocks of a stage keep the shape
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                # the drop probability grows linearly with depth
                sd_prob = stochastic_depth_prob * float(block_id) / total
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_out, num_classes))
        init_conv_norm_linear(self, _init_linear)

    def _forward_impl(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


def _efficientnet_conf(arch, width_mult=1.0, depth_mult=1.0):
    if not arch.startswith("efficientnet_b"):
        raise ValueError(f"Unsupported model type {arch}")
    c = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
    # expand ratio, kernel, stride, in, out, layers
    setting = [c(1, 3, 1, 32, 16, 1), c(6, 3, 2, 16, 24, 2), c(6, 5, 2, 24, 40, 2),
               c(6, 3, 2, 40, 80, 3), c(6, 5, 1, 80, 112, 3), c(6, 5, 2, 112, 192, 4),
               c(6, 3, 1, 192, 320, 1)]
    return setting, None


def _efficientnet(setting, dropout, last_channel, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = EfficientNet(setting, dropout, last_channel=last_channel, **kwargs)
    if weights is not None:
        _load_weights(model, weights, progress)
    return model


class EfficientNet_B0_Weights(WeightsEnum):
    # ported from Ross Wightman's timm weights
    IMAGENET1K_V1 = _imagenet("efficientnet_b0_rwightman-7f5810bc.pth", 5288548, (1, 1),
                              77.692, 93.532, interpolation="bicubic")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B0_Weights.IMAGENET1K_V1))
def efficientnet_b0(*, weights: Optional[EfficientNet_B0_Weights] = None,
                    progress: bool = True, **kwargs):
    """EfficientNet-B0 ("Rethinking Model Scaling for Convolutional Neural Networks")."""
    weights = EfficientNet_B0_Weights.verify(weights)
    setting, last_channel = _efficientnet_conf("efficientnet_b0", width_mult=1.0,
                                               depth_mult=1.0)
    return _efficientnet(setting, kwargs.pop("dropout", 0.2), last_channel, weights, progress,
                         **kwargs)
