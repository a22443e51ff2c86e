"""ResNet, ResNeXt and Wide ResNet (torchvision.models.resnet): same module layout, parameter
names and initialisation order as torchvision, so its checkpoints load with strict=True and
`manual_seed(s); resnet18()` draws the same initial weights."""
from typing import Optional

from ... import nn
from ...ops.views import flatten
from ._api import WeightsEnum, register_model
from ._utils import _imagenet, _load_weights, _ovewrite_named_param, handle_legacy_interface

__all__ = ["ResNet", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights",
           "ResNet101_Weights", "ResNet152_Weights", "ResNeXt50_32X4D_Weights",
           "ResNeXt101_32X8D_Weights", "ResNeXt101_64X4D_Weights", "Wide_ResNet50_2_Weights",
           "Wide_ResNet101_2_Weights", "resnet18", "resnet34", "resnet50", "resnet101",
           "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
           "wide_resnet50_2", "wide_resnet101_2"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convs with a residual connection (ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        # NOTE: registered after bn2 although built first: the init loop walks modules in
        # registration order, so this order is part of the random stream
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (grouped for ResNeXt; stride here, as in ResNet v1.5), 1x1 expand."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element "
                             f"tuple, got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        dilate = replace_stride_with_dilation
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=dilate[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=dilate[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=dilate[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            # start each residual branch at zero so every block begins as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = flatten(self.avgpool(x), 1)
        return self.fc(x)

    def forward(self, x):
        return self._forward_impl(x)


def _resnet(block, layers, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = ResNet(block, layers, **kwargs)
    if weights is not None:
        _load_weights(model, weights, progress)
    return model


_S1 = {"min_size": (1, 1)}
_V2 = {"resize_size": 232}


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnet18-f37072fd.pth", 11689512, **_S1, acc1=69.758,
                              acc5=89.078)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnet34-b627a593.pth", 21797672, **_S1, acc1=73.314,
                              acc5=91.42)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnet50-0676ba61.pth", 25557032, **_S1, acc1=76.13,
                              acc5=92.862)
    IMAGENET1K_V2 = _imagenet("resnet50-11ad3fa6.pth", 25557032, **_S1, **_V2, acc1=80.858,
                              acc5=95.434)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnet101-63fe2227.pth", 44549160, **_S1, acc1=77.374,
                              acc5=93.546)
    IMAGENET1K_V2 = _imagenet("resnet101-cd907fc2.pth", 44549160, **_S1, **_V2, acc1=81.886,
                              acc5=95.78)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnet152-394f9c45.pth", 60192808, **_S1, acc1=78.312,
                              acc5=94.046)
    IMAGENET1K_V2 = _imagenet("resnet152-f82ba261.pth", 60192808, **_S1, **_V2, acc1=82.284,
                              acc5=96.002)
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnext50_32x4d-7cdf4587.pth", 25028904, **_S1, acc1=77.618,
                              acc5=93.698)
    IMAGENET1K_V2 = _imagenet("resnext50_32x4d-1a0047aa.pth", 25028904, **_S1, **_V2,
                              acc1=81.198, acc5=95.34)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnext101_32x8d-8ba56ff5.pth", 88791336, **_S1, acc1=79.312,
                              acc5=94.526)
    IMAGENET1K_V2 = _imagenet("resnext101_32x8d-110c445d.pth", 88791336, **_S1, **_V2,
                              acc1=82.834, acc5=96.228)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("resnext101_64x4d-173b62eb.pth", 83455272, **_S1, **_V2,
                              acc1=83.246, acc5=96.454)
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("wide_resnet50_2-95faca4d.pth", 68883240, **_S1, acc1=78.468,
                              acc5=94.086)
    IMAGENET1K_V2 = _imagenet("wide_resnet50_2-9ba9bcbe.pth", 68883240, **_S1, **_V2,
                              acc1=81.602, acc5=95.758)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("wide_resnet101_2-32ee1156.pth", 126886696, **_S1, acc1=78.848,
                              acc5=94.284)
    IMAGENET1K_V2 = _imagenet("wide_resnet101_2-d733dc28.pth", 126886696, **_S1, **_V2,
                              acc1=82.51, acc5=96.02)
    DEFAULT = IMAGENET1K_V2


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet18_Weights.IMAGENET1K_V1))
def resnet18(*, weights: Optional[ResNet18_Weights] = None, progress: bool = True, **kwargs):
    """ResNet-18 ("Deep Residual Learning for Image Recognition")."""
    weights = ResNet18_Weights.verify(weights)
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet34_Weights.IMAGENET1K_V1))
def resnet34(*, weights: Optional[ResNet34_Weights] = None, progress: bool = True, **kwargs):
    """ResNet-34."""
    weights = ResNet34_Weights.verify(weights)
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet50_Weights.IMAGENET1K_V1))
def resnet50(*, weights: Optional[ResNet50_Weights] = None, progress: bool = True, **kwargs):
    """ResNet-50 (v1.5: the stride sits on the 3x3 conv of the bottleneck)."""
    weights = ResNet50_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet101_Weights.IMAGENET1K_V1))
def resnet101(*, weights: Optional[ResNet101_Weights] = None, progress: bool = True,
              **kwargs):
    """ResNet-101."""
    weights = ResNet101_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet152_Weights.IMAGENET1K_V1))
def resnet152(*, weights: Optional[ResNet152_Weights] = None, progress: bool = True,
              **kwargs):
    """ResNet-152."""
    weights = ResNet152_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 8, 36, 3], weights, progress, **kwargs)


def _grouped(kwargs, groups, width):
    _ovewrite_named_param(kwargs, "groups", groups)
    _ovewrite_named_param(kwargs, "width_per_group", width)
    return kwargs


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt50_32X4D_Weights.IMAGENET1K_V1))
def resnext50_32x4d(*, weights: Optional[ResNeXt50_32X4D_Weights] = None,
                    progress: bool = True, **kwargs):
    """ResNeXt-50 32x4d ("Aggregated Residual Transformations for Deep Neural Networks")."""
    weights = ResNeXt50_32X4D_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **_grouped(kwargs, 32, 4))


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_32X8D_Weights.IMAGENET1K_V1))
def resnext101_32x8d(*, weights: Optional[ResNeXt101_32X8D_Weights] = None,
                     progress: bool = True, **kwargs):
    """ResNeXt-101 32x8d."""
    weights = ResNeXt101_32X8D_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **_grouped(kwargs, 32, 8))


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_64X4D_Weights.IMAGENET1K_V1))
def resnext101_64x4d(*, weights: Optional[ResNeXt101_64X4D_Weights] = None,
                     progress: bool = True, **kwargs):
    """ResNeXt-101 64x4d."""
    weights = ResNeXt101_64X4D_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **_grouped(kwargs, 64, 4))


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet50_2_Weights.IMAGENET1K_V1))
def wide_resnet50_2(*, weights: Optional[Wide_ResNet50_2_Weights] = None,
                    progress: bool = True, **kwargs):
    """Wide ResNet-50-2: the bottleneck's inner width doubled."""
    weights = Wide_ResNet50_2_Weights.verify(weights)
    _ovewrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet101_2_Weights.IMAGENET1K_V1))
def wide_resnet101_2(*, weights: Optional[Wide_ResNet101_2_Weights] = None,
                     progress: bool = True, **kwargs):
    """Wide ResNet-101-2."""
    weights = Wide_ResNet101_2_Weights.verify(weights)
    _ovewrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)
