"""Vision Transformer ViT-B/16 (torchvision.models.vision_transformer)."""
import math
from collections import OrderedDict
from functools import partial
from typing import NamedTuple, Optional

from ... import _creation, nn
from ...ops.shape import cat
from ._api import WeightsEnum, register_model
from ._layers import MLP, Conv2dNormActivation
from ._utils import _imagenet, _load_weights, _ovewrite_named_param, handle_legacy_interface

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "vit_b_16"]


class ConvStemConfig(NamedTuple):
    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: type = nn.BatchNorm2d
    activation_layer: type = nn.ReLU


def _check(cond, message):
    if not cond:
        raise AssertionError(message)


class MLPBlock(MLP):
    """The transformer's feed-forward block: Linear, GELU, Dropout, Linear, Dropout."""
    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args, **kwargs):
        # checkpoints from before version 2 name the linears "linear_1"/"linear_2"
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(2):
                for kind in ["weight", "bias"]:
                    old_key = f"{prefix}linear_{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *args, **kwargs)


class EncoderBlock(nn.Module):
    """Pre-norm transformer layer: x + attention(ln_1(x)), then + mlp(ln_2(.))."""

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        _check(input.dim() == 3,
               f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        # learned position embeddings (BERT's init)
        self.pos_embedding = nn.Parameter(
            _creation.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers = OrderedDict()
        for i in range(num_layers):
            layers[f"encoder_layer_{i}"] = EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                        attention_dropout, norm_layer)
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        _check(input.dim() == 3,
               f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))


def _patch_projection(conv_stem_configs, patch_size, hidden_dim):
    """The patches' embedding: one strided conv, or a conv stem then a 1x1 conv
    ("Early Convolutions Help Transformers See Better")."""
    if conv_stem_configs is None:
        return nn.Conv2d(in_channels=3, out_channels=hidden_dim, kernel_size=patch_size,
                         stride=patch_size)
    seq_proj = nn.Sequential()
    prev = 3
    for i, cfg in enumerate(conv_stem_configs):
        seq_proj.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
            in_channels=prev, out_channels=cfg.out_channels,
            kernel_size=cfg.kernel_size, stride=cfg.stride, norm_layer=cfg.norm_layer,
            activation_layer=cfg.activation_layer))
        prev = cfg.out_channels
    seq_proj.add_module("conv_last", nn.Conv2d(in_channels=prev, out_channels=hidden_dim,
                                               kernel_size=1))
    return seq_proj


def _heads(hidden_dim, representation_size, num_classes):
    """The classifier: a linear head, after a tanh pre-logits layer when one is asked for."""
    heads = OrderedDict()
    if representation_size is None:
        heads["head"] = nn.Linear(hidden_dim, num_classes)
    else:
        heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
        heads["act"] = nn.Tanh()
        heads["head"] = nn.Linear(representation_size, num_classes)
    return nn.Sequential(heads)


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000,
                 representation_size=None, norm_layer=partial(nn.LayerNorm, eps=1e-6),
                 conv_stem_configs=None):
        super().__init__()
        _check(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        self.conv_proj = _patch_projection(conv_stem_configs, patch_size, hidden_dim)
        seq_length = (image_size // patch_size) ** 2 + 1  # + the class token
        self.class_token = nn.Parameter(_creation.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        self.heads = _heads(hidden_dim, representation_size, num_classes)
        self._init_weights()

    def _init_weights(self):
        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = (self.conv_proj.in_channels * self.conv_proj.kernel_size[0]
                      * self.conv_proj.kernel_size[1])
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        elif isinstance(getattr(self.conv_proj, "conv_last", None), nn.Conv2d):
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            if last.bias is not None:
                nn.init.zeros_(last.bias)
        if isinstance(getattr(self.heads, "pre_logits", None), nn.Linear):
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        _check(h == self.image_size, f"Wrong image height! Expected {self.image_size} but got "
                                     f"{h}!")
        _check(w == self.image_size, f"Wrong image width! Expected {self.image_size} but got "
                                     f"{w}!")
        n_h, n_w = h // p, w // p
        # (n, c, h, w) -> (n, hidden, n_h, n_w) -> (n, n_h * n_w, hidden)
        x = self.conv_proj(x).reshape(n, self.hidden_dim, n_h * n_w)
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])  # classify from the class token


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights,
                        progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        assert weights.meta["min_size"][0] == weights.meta["min_size"][1]
        _ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads,
                              hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)
    if weights:
        _load_weights(model, weights, progress)
    return model


_SWAG = {"recipe": "https://github.com/facebookresearch/SWAG",
         "license": "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"}


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet("vit_b_16-c867db91.pth", 86567656, (224, 224), 81.072, 95.318)
    IMAGENET1K_SWAG_E2E_V1 = _imagenet("vit_b_16_swag-9ac1b537.pth", 86859496, (384, 384),
                                       85.304, 97.65, crop_size=384, resize_size=384,
                                       interpolation="bicubic", **_SWAG)
    IMAGENET1K_SWAG_LINEAR_V1 = _imagenet("vit_b_16_lc_swag-4e70ced5.pth", 86567656,
                                          (224, 224), 81.886, 96.18, resize_size=224,
                                          interpolation="bicubic", **_SWAG)
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_16_Weights.IMAGENET1K_V1))
def vit_b_16(*, weights: Optional[ViT_B_16_Weights] = None, progress: bool = True, **kwargs):
    """ViT-B/16 ("An Image is Worth 16x16 Words"); `image_size` (default 224) may be set
    when building without weights."""
    weights = ViT_B_16_Weights.verify(weights)
    return _vision_transformer(16, 12, 12, 768, 3072, weights, progress, **kwargs)
