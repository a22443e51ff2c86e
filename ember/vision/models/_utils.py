"""Helpers the model builders share: the legacy `pretrained=` interface, channel rounding,
the ImageNet preprocessing preset, and weight-enum entries."""
import functools
import inspect
import warnings
from collections import OrderedDict
from functools import partial

from ... import nn
from ..._dtype import float32
from ..._tensor import Tensor
from ..transforms import InterpolationMode, functional as F
from ._api import Weights, WeightsEnum
from ._meta import _IMAGENET_CATEGORIES


def _make_divisible(v, divisor, min_value=None):
    """Round a channel count to a multiple of `divisor`, never dropping below 90% of `v`
    (the rule of the TensorFlow MobileNet reference, which the weights were trained with)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def init_conv_norm_linear(model, init_linear):
    """torchvision's initialisation of the MobileNet and EfficientNet families, module by
    module: convolutions kaiming-normal (fan_out) with a zero bias, norm layers ones and
    zeros, each Linear through `init_linear(m)`."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            init_linear(m)


def _ovewrite_named_param(kwargs, param, new_value):
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                             f"{kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def _ovewrite_value_param(param, actual, expected):
    if actual is not None and actual != expected:
        raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} "
                         "instead.")
    return expected


def _join_names(names):
    if len(names) == 1:
        return f"'{names[0]}'"
    return ", ".join(f"'{n}'" for n in names[:-1]) + f" and '{names[-1]}'"


def kwonly_to_pos_or_kw(fn):
    """Let keyword-only parameters still be passed by position, with a deprecation warning
    (builders became keyword-only in torchvision 0.13)."""
    params = list(inspect.signature(fn).parameters.values())
    start = next((i for i, p in enumerate(params) if p.kind == p.KEYWORD_ONLY), None)
    if start is None:
        raise TypeError(f"Found no keyword-only parameter on function '{fn.__name__}'")
    kw_names = [p.name for p in params[start:]]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, extra = args[:start], args[start:]
        if extra:
            moved = dict(zip(kw_names, extra))
            warnings.warn(f"Using {_join_names(list(moved))} as positional parameter(s) is "
                          "deprecated since 0.13 and may be removed in the future. Please use "
                          "keyword parameter(s) instead.")
            kwargs.update(moved)
        return fn(*args, **kwargs)
    return wrapper


def handle_legacy_interface(**weights):
    """Accept the pre-0.13 `pretrained=True/False` (or a bool in place of the weights) and map
    it to the builder's default weights (or None), warning as torchvision does.

    Each keyword names a weights parameter and maps to (legacy name, default weights or a
    callable taking the call's kwargs)."""
    def outer(builder):
        @kwonly_to_pos_or_kw
        @functools.wraps(builder)
        def inner(*args, **kwargs):
            for weights_param, (legacy_param, default) in weights.items():
                missing = object()
                value = kwargs.get(weights_param, missing)
                if ((weights_param not in kwargs and legacy_param not in kwargs)
                        or isinstance(value, WeightsEnum)
                        or (isinstance(value, str) and value != "legacy") or value is None):
                    continue
                positional = value is not missing
                if positional:
                    kwargs[legacy_param] = legacy = kwargs.pop(weights_param)
                else:
                    legacy = kwargs[legacy_param]
                if legacy:
                    chosen = default(kwargs) if callable(default) else default
                    if not isinstance(chosen, WeightsEnum):
                        raise ValueError(f"No weights available for model {builder.__name__}")
                else:
                    chosen = None
                if not positional:
                    warnings.warn(f"The parameter '{legacy_param}' is deprecated since 0.13 and "
                                  "may be removed in the future, please use "
                                  f"'{weights_param}' instead.")
                msg = (f"Arguments other than a weight enum or `None` for '{weights_param}' are "
                       "deprecated since 0.13 and may be removed in the future. The current "
                       f"behavior is equivalent to passing `{weights_param}={chosen}`.")
                if legacy:
                    msg += (f" You can also use `{weights_param}={type(chosen).__name__}.DEFAULT`"
                            " to get the most up-to-date weights.")
                warnings.warn(msg)
                del kwargs[legacy_param]
                kwargs[weights_param] = chosen
            return builder(*args, **kwargs)
        return inner
    return outer


def _load_weights(model, weights, progress):
    model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))


class IntermediateLayerGetter(nn.ModuleDict):
    """Run a model's direct children in order and return the outputs of `return_layers`
    (a dict child name -> output name), dropping the children after the last one asked."""
    _version = 2

    def __init__(self, model, return_layers):
        if not set(return_layers).issubset(name for name, _ in model.named_children()):
            raise ValueError("return_layers are not present in model")
        wanted = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            wanted.pop(name, None)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class ImageClassification(nn.Module):
    """The evaluation preprocessing of the ImageNet weights: resize, centre crop, scale to
    [0, 1] float and normalise (torchvision.transforms._presets.ImageClassification)."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=None, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = (InterpolationMode.BILINEAR if interpolation is None
                              else interpolation)
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n"
                f"    resize_size={self.resize_size}\n    mean={self.mean}\n"
                f"    std={self.std}\n    interpolation={self.interpolation}\n)")

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                "``torch.Tensor`` objects. The images are resized to "
                f"``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``, followed by a central crop of "
                f"``crop_size={self.crop_size}``. Finally the values are first rescaled to "
                f"``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``.")


_BASE = "https://download.pytorch.org/models/"


def _imagenet(file, num_params, min_size, acc1, acc5, crop_size=224, resize_size=256,
              interpolation=None, **meta):
    """One ImageNet-1K classification Weights entry for the file `file` of PyTorch's model
    store (acc@1 / acc@5 are the published ImageNet-1K accuracies)."""
    if interpolation is not None:
        interpolation = InterpolationMode(interpolation)
    kw = {"crop_size": crop_size}
    if resize_size != 256:
        kw["resize_size"] = resize_size
    if interpolation is not None:
        kw["interpolation"] = interpolation
    info = {"categories": _IMAGENET_CATEGORIES, "num_params": num_params,
            "min_size": min_size,
            "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}}
    info.update(meta)
    return Weights(url=_BASE + file, transforms=partial(ImageClassification, **kw), meta=info)
