"""AutoAugment, RandAugment, TrivialAugmentWide: random sequences of image operations with
parameters drawn as torchvision draws them."""
import math
from enum import Enum

from ... import nn
from ..._creation import tensor
from ..._dtype import long
from ..._ranges import arange, linspace
from ..._tensor import Tensor
from ...ops.random_factories import rand, randint

from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    if op_name in ("ShearX", "ShearY"):
        # torchvision shears by atan(magnitude) degrees about the top-left corner
        angle = math.degrees(math.atan(magnitude))
        shear = [angle, 0.0] if op_name == "ShearX" else [0.0, angle]
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=shear,
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name in ("TranslateX", "TranslateY"):
        shift = [int(magnitude), 0] if op_name == "TranslateX" else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=shift, scale=1.0,
                        interpolation=interpolation, shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    factor_ops = {"Brightness": F.adjust_brightness, "Color": F.adjust_saturation,
                  "Contrast": F.adjust_contrast, "Sharpness": F.adjust_sharpness}
    if op_name in factor_ops:
        return factor_ops[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert}
    if op_name in plain:
        return plain[op_name](img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# The sub-policies of the AutoAugment paper (Cubuk et al., 2019), as torchvision lists them:
# "op probability magnitude-bin" pairs, "-" where the op takes no magnitude.
_POLICIES = {
    "imagenet": """
        Posterize 0.4 8, Rotate 0.6 9
        Solarize 0.6 5, AutoContrast 0.6 -
        Equalize 0.8 -, Equalize 0.6 -
        Posterize 0.6 7, Posterize 0.6 6
        Equalize 0.4 -, Solarize 0.2 4
        Equalize 0.4 -, Rotate 0.8 8
        Solarize 0.6 3, Equalize 0.6 -
        Posterize 0.8 5, Equalize 1.0 -
        Rotate 0.2 3, Solarize 0.6 8
        Equalize 0.6 -, Posterize 0.4 6
        Rotate 0.8 8, Color 0.4 0
        Rotate 0.4 9, Equalize 0.6 -
        Equalize 0.0 -, Equalize 0.8 -
        Invert 0.6 -, Equalize 1.0 -
        Color 0.6 4, Contrast 1.0 8
        Rotate 0.8 8, Color 1.0 2
        Color 0.8 8, Solarize 0.8 7
        Sharpness 0.4 7, Invert 0.6 -
        ShearX 0.6 5, Equalize 1.0 -
        Color 0.4 0, Equalize 0.6 -
        Equalize 0.4 -, Solarize 0.2 4
        Solarize 0.6 5, AutoContrast 0.6 -
        Invert 0.6 -, Equalize 1.0 -
        Color 0.6 4, Contrast 1.0 8
        Equalize 0.8 -, Equalize 0.6 -
    """,
    "cifar10": """
        Invert 0.1 -, Contrast 0.2 6
        Rotate 0.7 2, TranslateX 0.3 9
        Sharpness 0.8 1, Sharpness 0.9 3
        ShearY 0.5 8, TranslateY 0.7 9
        AutoContrast 0.5 -, Equalize 0.9 -
        ShearY 0.2 7, Posterize 0.3 7
        Color 0.4 3, Brightness 0.6 7
        Sharpness 0.3 9, Brightness 0.7 9
        Equalize 0.6 -, Equalize 0.5 -
        Contrast 0.6 7, Sharpness 0.6 5
        Color 0.7 7, TranslateX 0.5 8
        Equalize 0.3 -, AutoContrast 0.4 -
        TranslateY 0.4 3, Sharpness 0.2 6
        Brightness 0.9 6, Color 0.2 8
        Solarize 0.5 2, Invert 0.0 -
        Equalize 0.2 -, AutoContrast 0.6 -
        Equalize 0.2 -, Equalize 0.6 -
        Color 0.9 9, Equalize 0.6 -
        AutoContrast 0.8 -, Solarize 0.2 8
        Brightness 0.1 3, Color 0.7 0
        Solarize 0.4 5, AutoContrast 0.9 -
        TranslateY 0.9 9, TranslateY 0.7 9
        AutoContrast 0.9 -, Solarize 0.8 3
        Equalize 0.8 -, Invert 0.1 -
        TranslateY 0.7 9, AutoContrast 0.9 -
    """,
    "svhn": """
        ShearX 0.9 4, Invert 0.2 -
        ShearY 0.9 8, Invert 0.7 -
        Equalize 0.6 -, Solarize 0.6 6
        Invert 0.9 -, Equalize 0.6 -
        Equalize 0.6 -, Rotate 0.9 3
        ShearX 0.9 4, AutoContrast 0.8 -
        ShearY 0.9 8, Invert 0.4 -
        ShearY 0.9 5, Solarize 0.2 6
        Invert 0.9 -, AutoContrast 0.8 -
        Equalize 0.6 -, Rotate 0.9 3
        ShearX 0.9 4, Solarize 0.3 3
        ShearY 0.8 8, Invert 0.7 -
        Equalize 0.9 -, TranslateY 0.6 6
        Invert 0.9 -, Equalize 0.6 -
        Contrast 0.3 3, Rotate 0.8 4
        Invert 0.8 -, TranslateY 0.0 2
        ShearY 0.7 6, Solarize 0.4 8
        Invert 0.6 -, Rotate 0.8 4
        ShearY 0.3 7, TranslateX 0.9 3
        ShearX 0.1 6, Invert 0.6 -
        Solarize 0.7 2, TranslateY 0.6 7
        ShearY 0.8 4, Invert 0.8 -
        ShearX 0.7 9, TranslateY 0.8 3
        ShearY 0.8 5, AutoContrast 0.7 -
        ShearX 0.7 2, Invert 0.1 -
    """,
}


def _parse_policy(text):
    def op(item):
        name, p, m = item.split()
        return name, float(p), None if m == "-" else int(m)
    return [tuple(op(item) for item in line.split(",")) for line in text.strip().splitlines()]


def _linspace(start, end, steps):
    return linspace(start, end, steps)


def _posterize_bits(top, num_bins, spread):
    return top - (arange(num_bins) / ((num_bins - 1) / spread)).round().int()


def _space(num_bins, shear, translate, rotate, enhance, bits_spread, identity):
    """The magnitude table: op -> (magnitudes, signed); 0-dim magnitudes mean 'none'."""
    none = tensor(0.0)
    space = {"Identity": (none, False)} if identity else {}
    space.update({
        "ShearX": (_linspace(0.0, shear, num_bins), True),
        "ShearY": (_linspace(0.0, shear, num_bins), True),
        "TranslateX": (_linspace(0.0, translate[0], num_bins), True),
        "TranslateY": (_linspace(0.0, translate[1], num_bins), True),
        "Rotate": (_linspace(0.0, rotate, num_bins), True),
        "Brightness": (_linspace(0.0, enhance, num_bins), True),
        "Color": (_linspace(0.0, enhance, num_bins), True),
        "Contrast": (_linspace(0.0, enhance, num_bins), True),
        "Sharpness": (_linspace(0.0, enhance, num_bins), True),
        "Posterize": (_posterize_bits(8, num_bins, bits_spread), False),
        "Solarize": (_linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (none, False),
        "Equalize": (none, False),
    })
    return space


def _tensor_fill(img, fill):
    if isinstance(img, Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


class AutoAugment(nn.Module):
    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy, self.interpolation, self.fill = policy, interpolation, fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        if not isinstance(policy, AutoAugmentPolicy):
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _parse_policy(_POLICIES[policy.value])

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, 0.3, (150.0 / 331.0 * image_size[1],
                                       150.0 / 331.0 * image_size[0]), 30.0, 0.9, 4, False)
        space["Invert"] = (tensor(0.0), False)
        return space

    @staticmethod
    def get_params(transform_num):
        policy_id = int(randint(transform_num, (1,)).item())
        probs = rand((2,))
        signs = randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = (float(magnitudes[magnitude_id].item())
                             if magnitude_id is not None else 0.0)
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


def _draw_sign(magnitude, signed):
    if signed and randint(2, (1,)).item():
        return -magnitude
    return magnitude


class RandAugment(nn.Module):
    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops, self.magnitude = num_ops, magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation, self.fill = interpolation, fill

    def _augmentation_space(self, num_bins, image_size):
        return _space(num_bins, 0.3, (150.0 / 331.0 * image_size[1],
                                      150.0 / 331.0 * image_size[0]), 30.0, 0.9, 4, True)

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        names = list(op_meta)
        for _ in range(self.num_ops):
            op_name = names[int(randint(len(op_meta), (1,)).item())]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            img = _apply_op(img, op_name, _draw_sign(magnitude, signed), self.interpolation,
                            fill)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude="
                f"{self.magnitude}, num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation, self.fill = interpolation, fill

    def _augmentation_space(self, num_bins):
        return _space(num_bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6, True)

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_name = list(op_meta)[int(randint(len(op_meta), (1,)).item())]
        magnitudes, signed = op_meta[op_name]
        if magnitudes.ndim > 0:
            index = randint(len(magnitudes), (1,), dtype=long)
            magnitude = float(magnitudes[index].item())
        else:
            magnitude = 0.0
        return _apply_op(img, op_name, _draw_sign(magnitude, signed), self.interpolation, fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
