"""ember.vision.models against torchvision 0.29, without needing torchvision.

The references in tests/data/model_refs/ come from scripts/make_model_refs.py: ember's weights
(saved with ember.save) loaded into torchvision with strict=True and run there, and
torchvision's initial weights for a fixed seed.
"""
import os
import sys
import warnings

import numpy as np
import pytest

import ember
from ember.vision import models

REFS = os.path.join(os.path.dirname(__file__), "data", "model_refs")
sys.path.insert(0, REFS)
import cases  # noqa: E402



def _ref(name):
    path = os.path.join(REFS, name + ".npz")
    if not os.path.exists(path):
        pytest.fail(f"no reference {path}: run scripts/make_model_refs.py {name}")
    return np.load(path)


def _layout(state):
    return list(state), [",".join(map(str, v.shape)) for v in state.values()]


@pytest.mark.parametrize("name", sorted(cases.FORWARD))
def test_forward_matches_torchvision(name):
    ref = _ref(name)
    model = cases.build_forward_model(ember, name)
    keys, shapes = _layout(model.state_dict())
    # the names and shapes torchvision's strict load accepted
    assert keys == list(ref["keys"])
    assert shapes == list(ref["shapes"])
    x = ember.from_numpy(cases.input_array(cases.FORWARD[name][1]))
    with ember.no_grad():
        got = model(x).numpy()
    want = ref["logits"]
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", sorted(cases.INIT))
def test_init_matches_torchvision(name):
    ref = _ref(name)
    ember.manual_seed(cases.SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cases.build_init_model(models, name)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    keys, shapes = _layout(state)
    assert keys == list(ref["init_keys"])
    assert shapes == list(ref["init_shapes"])
    # PyTorch compiles its random kernels for DEFAULT and AVX2 only (AVX512 runs the AVX2
    # build), and the two draw different values for one seed; ember follows the capability it
    # runs at (ATEN_CPU_CAPABILITY included), so compare with that build's reference
    suffix = "_default" if ember.backends.cpu.get_cpu_capability() == "DEFAULT" else ""
    first = np.concatenate([v.reshape(-1)[:4].astype(np.float64) for v in state.values()])
    np.testing.assert_array_equal(first, ref["init_first" + suffix])
    np.testing.assert_allclose(cases.checksums(state), ref["init_checksums" + suffix],
                               rtol=1e-12, atol=0)


def test_every_reference_has_a_case():
    names = {f[:-4] for f in os.listdir(REFS) if f.endswith(".npz")}
    assert names == set(cases.FORWARD) | set(cases.INIT)


REQUIRED = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
            "wide_resnet50_2", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn",
            "vgg16_bn", "vgg19_bn", "alexnet", "squeezenet1_0", "squeezenet1_1",
            "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "densenet121",
            "efficientnet_b0", "googlenet", "vit_b_16"]


def test_registry():
    names = models.list_models()
    assert names == sorted(names) and set(REQUIRED) <= set(names)
    assert models.list_models(include="vgg1[13]*") == ["vgg11", "vgg11_bn", "vgg13",
                                                         "vgg13_bn"]
    assert models.list_models(include=["resnet1*"], exclude="*52") == ["resnet101",
                                                                       "resnet18"]
    assert models.list_models(module=models) == names
    assert models.get_model_builder("ResNet18") is models.resnet18
    with pytest.raises(ValueError, match="Unknown model nope"):
        models.get_model("nope")


def test_weight_enums():
    w = models.ResNet18_Weights.IMAGENET1K_V1
    assert models.ResNet18_Weights.DEFAULT is w
    assert models.get_weight("ResNet18_Weights.IMAGENET1K_V1") is w
    assert models.get_model_weights("resnet50") is models.ResNet50_Weights
    assert models.get_model_weights(models.vit_b_16) is models.ViT_B_16_Weights
    assert models.ResNet50_Weights.DEFAULT is models.ResNet50_Weights.IMAGENET1K_V2
    assert w.url == "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    assert repr(w) == "ResNet18_Weights.IMAGENET1K_V1"
    assert len(w.meta["categories"]) == 1000 and w.meta["categories"][0] == "tench"
    assert w.meta["num_params"] == 11689512
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is w
    assert models.ResNet18_Weights.verify("ResNet18_Weights.IMAGENET1K_V1") is w
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received "
                                        "ResNet50_Weights"):
        models.ResNet18_Weights.verify(models.ResNet50_Weights.DEFAULT)
    with pytest.raises(ValueError, match="Invalid weight name"):
        models.get_weight("resnet18")
    # every builder names its enum, and the enums point at torchvision's files
    for name in REQUIRED:
        enum = models.get_model_weights(name)
        assert all(m.url.startswith("https://download.pytorch.org/models/") for m in enum)


def test_weights_transforms():
    preset = models.EfficientNet_B0_Weights.DEFAULT.transforms()
    assert preset.crop_size == [224] and preset.resize_size == [256]
    assert str(preset.interpolation) == "InterpolationMode.BICUBIC"
    img = ember.randint(0, 256, (3, 240, 320), dtype=ember.uint8)
    out = models.ResNet50_Weights.IMAGENET1K_V2.transforms()(img)
    assert out.shape == (3, 224, 224) and out.dtype == ember.float32
    # resize to 232 on the short side keeps the aspect ratio; the centre crop is normalised
    plain = img.float() / 255
    assert abs(float(out.mean()) - float(((plain.mean() - 0.456) / 0.224))) < 0.1


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    monkeypatch.setattr(ember.hub, "_hub_dir", None, raising=False)
    return tmp_path / "hub" / "checkpoints"


def test_missing_weights_name_the_file(hub_dir):
    expected = str(hub_dir / "squeezenet1_1-b8a52dc0.pth")
    with pytest.raises(RuntimeError, match="squeezenet1_1-b8a52dc0.pth") as info:
        models.squeezenet1_1(weights=models.SqueezeNet1_1_Weights.IMAGENET1K_V1)
    assert expected in str(info.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="squeezenet1_1-b8a52dc0.pth"):
            models.squeezenet1_1(pretrained=True)
    assert "'pretrained' is deprecated" in str(caught[0].message)
    assert "`weights=SqueezeNet1_1_Weights.IMAGENET1K_V1`" in str(caught[1].message)
    with pytest.raises(RuntimeError, match="squeezenet1_1-b8a52dc0.pth"):
        models.get_model("squeezenet1_1", weights="DEFAULT")


def test_weights_load_from_the_cache(hub_dir, monkeypatch):
    ember.manual_seed(1)
    src = models.squeezenet1_1()
    hub_dir.mkdir(parents=True)
    weights = models.SqueezeNet1_1_Weights.IMAGENET1K_V1
    ember.save(src.state_dict(), str(hub_dir / "squeezenet1_1-b8a52dc0.pth"))
    # the file name carries the first hex digits of torchvision's file's SHA-256
    with pytest.raises(RuntimeError, match="invalid hash value"):
        models.squeezenet1_1(weights=weights)
    # a name without a hash is not checked: point the entry at one
    ember.save(src.state_dict(), str(hub_dir / "squeezenet_local.pth"))
    monkeypatch.setattr(weights.value, "url", "https://example.invalid/squeezenet_local.pth")
    ember.manual_seed(2)
    got = models.squeezenet1_1(weights=weights)
    for (k, a), (k2, b) in zip(src.state_dict().items(), got.state_dict().items()):
        assert k == k2 and ember.equal(a, b)


def test_legacy_interface():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = models.squeezenet1_1(pretrained=False, num_classes=7)
    assert m.classifier[1].out_channels == 7
    assert [str(w.message)[:60] for w in caught] == [
        "The parameter 'pretrained' is deprecated since 0.13 and may ",
        "Arguments other than a weight enum or `None` for 'weights' a"]
    assert "equivalent to passing `weights=None`." in str(caught[1].message)
    with pytest.warns(UserWarning, match="Using 'weights' and 'progress' as positional "
                                         "parameter"):
        models.squeezenet1_1(None, True, num_classes=3)
    with pytest.raises(ValueError, match="expected value 1000 but got 10"):
        models.squeezenet1_1(weights="DEFAULT", num_classes=10)
    with pytest.raises(TypeError):
        models.vgg11(weights=models.ResNet18_Weights.DEFAULT)


def test_densenet_renames_old_checkpoint_keys():
    from ember.vision.models.densenet import DenseNet, _load_state_dict
    ember.manual_seed(0)
    src = DenseNet(growth_rate=4, block_config=(1, 1), num_init_features=4, num_classes=3)
    old = {k if k.endswith("num_batches_tracked") else
           k.replace("norm1.", "norm.1.").replace("conv2.", "conv.2."): v
           for k, v in src.state_dict().items()}
    assert any(".norm.1." in k for k in old)

    class Fake:
        def get_state_dict(self, **kwargs):
            return dict(old)
    dst = DenseNet(growth_rate=4, block_config=(1, 1), num_init_features=4, num_classes=3)
    _load_state_dict(dst, Fake(), progress=False)
    for k, v in src.state_dict().items():
        assert ember.equal(v, dst.state_dict()[k])


def test_vit_mlp_block_loads_version_1_keys():
    from ember.vision.models.vision_transformer import MLPBlock
    src = MLPBlock(4, 8, 0.0)
    old = {k.replace("0.", "linear_1.").replace("3.", "linear_2."): v
           for k, v in src.state_dict().items()}
    assert sorted(old) == ["linear_1.bias", "linear_1.weight", "linear_2.bias",
                           "linear_2.weight"]
    dst = MLPBlock(4, 8, 0.0)
    dst.load_state_dict(old)
    assert ember.equal(dst[3].weight, src[3].weight)


def test_train_mode_backward():
    from ember.vision.models.resnet import BasicBlock, ResNet
    ember.manual_seed(0)
    with cases.no_init(ember):
        model = cases.fill(ember, ResNet(BasicBlock, [1, 1, 1, 1], num_classes=5))
    model.train()
    out = model(ember.randn(2, 3, 16, 16))
    out.sum().backward()
    assert out.shape == (2, 5)
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None and bool(ember.isfinite(g).all()) for g in grads)
    assert float(model.conv1.weight.grad.abs().sum()) > 0
    # batch statistics were used and the running ones updated
    assert int(model.bn1.num_batches_tracked) == 1


def test_stochastic_depth():
    from ember.vision.models._layers import stochastic_depth
    x = ember.ones(64, 3)
    assert stochastic_depth(x, 0.5, "row", training=False) is x
    ember.manual_seed(0)
    y = stochastic_depth(x, 0.5, "row").numpy()
    rows = y[:, 0]
    assert set(np.unique(rows)) <= {0.0, 2.0} and 0 < rows.sum() < 128
    assert (y == rows[:, None]).all()
    z = stochastic_depth(x, 0.5, "batch").numpy()
    assert len(np.unique(z)) == 1
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1"):
        stochastic_depth(x, 1.5, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row'"):
        stochastic_depth(x, 0.5, "col")


def test_vit_input_checks():
    from ember.vision.models.vision_transformer import VisionTransformer
    ember.manual_seed(0)
    vit = VisionTransformer(32, 16, 1, 2, 8, 16, num_classes=3)
    assert vit(ember.randn(2, 3, 32, 32)).shape == (2, 3)
    with pytest.raises(AssertionError, match="Wrong image height! Expected 32 but got 48!"):
        vit(ember.randn(1, 3, 48, 32))
    with pytest.raises(AssertionError, match="indivisible"):
        VisionTransformer(30, 16, 1, 2, 8, 16)
