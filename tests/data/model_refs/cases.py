"""The model cases shared by scripts/make_model_refs.py (which runs them through torchvision)
and tests/test_vision_models.py (which runs them through ember.vision.models).

Only ember builds models here; the script loads ember's weights into torchvision. A forward
case builds the model with its initialisers switched off (ember's bit-exact RNG is slow on
100M-parameter models; the init itself is checked by the INIT cases), then fills every float
tensor of the state_dict from a NumPy generator, so BatchNorm statistics and zero-initialised
heads carry real values too.
"""
import contextlib

import numpy as np

SEED = 0

# name -> (builder keyword arguments, input shape): small inputs keep CI fast
FORWARD = {
    "resnet18": ({}, (2, 3, 64, 64)),
    "resnet34": ({}, (1, 3, 64, 64)),
    "resnet50": ({}, (1, 3, 64, 64)),
    "resnet101": ({}, (1, 3, 32, 32)),
    "resnet152": ({}, (1, 3, 32, 32)),
    "resnext50_32x4d": ({}, (1, 3, 64, 64)),
    "wide_resnet50_2": ({}, (1, 3, 32, 32)),
    "vgg11": ({}, (1, 3, 32, 32)),
    "vgg11_bn": ({}, (1, 3, 32, 32)),
    "vgg13": ({}, (1, 3, 32, 32)),
    "vgg13_bn": ({}, (1, 3, 32, 32)),
    "vgg16": ({}, (1, 3, 32, 32)),
    "vgg16_bn": ({}, (1, 3, 32, 32)),
    "vgg19": ({}, (1, 3, 32, 32)),
    "vgg19_bn": ({}, (1, 3, 32, 32)),
    "alexnet": ({}, (1, 3, 64, 64)),
    "squeezenet1_0": ({}, (1, 3, 64, 64)),
    "squeezenet1_1": ({}, (2, 3, 64, 64)),
    "mobilenet_v2": ({}, (1, 3, 64, 64)),
    "mobilenet_v3_small": ({}, (2, 3, 64, 64)),
    "mobilenet_v3_large": ({}, (1, 3, 64, 64)),
    "densenet121": ({}, (1, 3, 64, 64)),
    "efficientnet_b0": ({}, (1, 3, 64, 64)),
    "googlenet": ({"init_weights": True, "transform_input": True}, (1, 3, 64, 64)),
    "vit_b_16": ({"image_size": 32}, (1, 3, 32, 32)),
}

# name -> (callable name in the models package, keyword arguments): built with the real
# initialisers after manual_seed(SEED); torchvision's weights for the same seed are the reference
INIT = {
    "resnet18": ("resnet18", {}),
    "resnet50": ("resnet50", {}),
    "squeezenet1_1": ("squeezenet1_1", {}),
    "mobilenet_v2": ("mobilenet_v2", {}),
    "mobilenet_v3_small": ("mobilenet_v3_small", {}),
    "mobilenet_v3_large": ("mobilenet_v3_large", {}),
    "efficientnet_b0": ("efficientnet_b0", {}),
    "densenet121": ("densenet121", {}),
    "googlenet": ("googlenet", {"init_weights": True}),
    "vit_tiny": ("VisionTransformer", {"image_size": 32, "patch_size": 16, "num_layers": 2,
                                       "num_heads": 2, "hidden_dim": 16, "mlp_dim": 32,
                                       "num_classes": 10, "representation_size": 8}),
}

_INITS = ["uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
          "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


@contextlib.contextmanager
def no_init(ember):
    """Switch ember.nn.init's initialisers off (tensors keep whatever memory they had)."""
    init = ember.nn.init
    saved = {name: getattr(init, name) for name in _INITS}
    try:
        for name in _INITS:
            setattr(init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, fn in saved.items():
            setattr(init, name, fn)


def _draw(rng, shape, kind, scale, dtype):
    """`kind` ("normal" or "uniform") values of `shape` times `scale`, as `dtype`. Big
    tensors repeat a block of a prime length (rows never line up with it): drawing 100M values
    would dominate CI."""
    n = int(np.prod(shape))
    block = min(n, 65521)
    base = rng.standard_normal(block) if kind == "normal" else rng.uniform(0.5, 1.5, block)
    base = (base * scale).astype(dtype)
    return np.tile(base, -(-n // block))[:n].reshape(shape)


def fill_values(state):
    """NumPy values for every float entry of `state` (name -> ndarray), drawn in order: He
    scale for weights, around 1 for norm scales and variances, small for the rest."""
    rng = np.random.default_rng(SEED)
    out = {}
    for name, value in state.items():
        if value.dtype.kind != "f":
            continue
        shape = value.shape
        if name.endswith("running_var") or (len(shape) == 1 and name.endswith("weight")):
            kind, scale = "uniform", 1.0
        elif len(shape) >= 2 and "embedding" not in name and "token" not in name:
            kind, scale = "normal", np.sqrt(2.0 / (int(np.prod(shape[1:])) or 1))
        else:
            kind, scale = "normal", 0.1
        out[name] = _draw(rng, shape, kind, scale, value.dtype)
    return out


def input_array(shape):
    return np.random.default_rng(SEED + 1).standard_normal(shape).astype(np.float32)


def build_forward_model(ember, name):
    """The ember model of FORWARD case `name` in eval mode, its weights from fill_values."""
    from ember.vision import models
    kwargs, _ = FORWARD[name]
    ember.manual_seed(SEED)
    with no_init(ember):
        model = models.get_model(name, **kwargs)
    return fill(ember, model).eval()


def fill(ember, model):
    """Load fill_values into `model` (strictly); returns it."""
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    values = fill_values(state)
    # assign: the fresh arrays become the parameters (no copy into the untouched memory)
    model.load_state_dict({k: ember.from_numpy(values.get(k, v)) for k, v in state.items()},
                          assign=True)
    return model


def build_init_model(module, name):
    """INIT case `name` from `module` (ember.vision.models or torchvision.models); seed the
    library's generator with SEED first."""
    fn_name, kwargs = INIT[name]
    return getattr(module, fn_name)(**kwargs)


def checksums(state):
    """Per-entry float64 sum and sum of squares (name -> ndarray) of a state dict given as
    name -> ndarray, stacked in order: equal iff the initial values agree (in practice)."""
    rows = []
    for value in state.values():
        v = np.asarray(value, dtype=np.float64)
        rows.append((v.sum(), (v * v).sum(), v.size))
    return np.array(rows, dtype=np.float64).reshape(-1, 3)
