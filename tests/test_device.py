"""Devices against real PyTorch (CPU build): device objects, CUDA-unavailable errors, and the
device semantics of tensors on a test-only second device backed by NumPy."""
import warnings

import numpy as np
import pytest

import ember
from checks import without_gpu
from ember import backends


def outcome(fn):
    try:
        r = fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc).__name__, str(exc).replace("ember", "torch").split("\n")[0]
    return repr(r).replace("ember", "torch") if not isinstance(r, (bool, int)) else r


DEVICES = {
    "cpu": lambda m: m.device("cpu"),
    "cuda": lambda m: m.device("cuda"),
    "cuda:1": lambda m: m.device("cuda:1"),
    "cuda, 1": lambda m: m.device("cuda", 1),
    "keywords": lambda m: m.device(type="cuda", index=2),
    "cpu:0": lambda m: m.device("cpu:0"),
    "cpu, 0": lambda m: m.device("cpu", 0),
    "meta": lambda m: m.device("meta"),
    "mps": lambda m: m.device("mps"),
    "of device": lambda m: m.device(m.device("cuda:1")),
    "of device with index": lambda m: m.device(m.device("cuda"), 1),
    "str": lambda m: str(m.device("cuda:1")),
    "str cpu": lambda m: str(m.device("cpu")),
    "attrs": lambda m: (m.device("cuda:1").type, m.device("cuda:1").index,
                        m.device("cpu").index),
    "eq": lambda m: m.device("cpu") == m.device("cpu"),
    "eq str": lambda m: m.device("cpu") == "cpu",
    "cuda vs cuda:0": lambda m: m.device("cuda") == m.device("cuda:0"),
    "hash": lambda m: hash(m.device("cuda:1")) == hash(m.device("cuda", 1)),
    "int without accelerator": lambda m: m.device(1),
    "negative int": lambda m: m.device(-1),
    "negative in string": lambda m: m.device("cuda:-1"),
    "negative index": lambda m: m.device("cuda", -1),
    "unknown": lambda m: m.device("foo"),
    "upper case": lambda m: m.device("CUDA"),
    "bad index": lambda m: m.device("cuda:x"),
    "leading zero": lambda m: m.device("cuda:01"),
    "space": lambda m: m.device(" cpu"),
    "space in index": lambda m: m.device("cuda: 1"),
    "trailing colon": lambda m: m.device("cuda:"),
    "index twice": lambda m: m.device("cuda:1", 1),
    "float": lambda m: m.device(1.0),
    "None": lambda m: m.device(None),
}


@pytest.mark.parametrize("case", list(DEVICES), ids=list(DEVICES))
def test_device_objects(case, torch_mod):
    assert outcome(lambda: DEVICES[case](ember)) == outcome(lambda: DEVICES[case](torch_mod))


NO_CUDA = {
    "is_available": lambda m: m.cuda.is_available(),
    "device_count": lambda m: m.cuda.device_count(),
    "zeros": lambda m: m.zeros(2, device="cuda"),
    "tensor": lambda m: m.tensor([1], device="cuda"),
    "ones device object": lambda m: m.ones(2, device=m.device("cuda:1")),
    "t.cuda()": lambda m: m.zeros(2).cuda(),
    "t.to('cuda')": lambda m: m.zeros(2).to("cuda"),
    "t.to('cuda:1')": lambda m: m.zeros(2).to("cuda:1"),
    "t.to(0)": lambda m: m.zeros(2).to(0),
    "zeros device 0": lambda m: m.zeros(2, device=0),
    "current_device": lambda m: m.cuda.current_device(),
    "is_cuda": lambda m: m.zeros(2).is_cuda,
    "device": lambda m: m.zeros(2).device,
    "get_device": lambda m: m.zeros(2).get_device(),
    "to unknown": lambda m: m.zeros(2).to("foo"),
    "xpu": lambda m: m.zeros(2, device="xpu"),
    "cpu is same": lambda m: (lambda t: t.cpu() is t and t.to("cpu") is t)(m.zeros(2)),
    "cpu:0 placement": lambda m: m.zeros(2, device="cpu:0").device,
    "pin_memory()": lambda m: m.zeros(2).pin_memory(),
    "is_pinned()": lambda m: m.zeros(2).is_pinned(),
    "zeros pin_memory": lambda m: m.zeros(2, pin_memory=True),
    "rand pin_memory": lambda m: m.rand(2, pin_memory=True),
    "cuda.synchronize": lambda m: m.cuda.synchronize(),
    "cuda.memory_allocated": lambda m: m.cuda.memory_allocated(),
    "cuda.memory_stats": lambda m: dict(m.cuda.memory_stats()),
    "cuda.manual_seed": lambda m: m.cuda.manual_seed(1),
    "cuda.is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "cuda.empty_cache": lambda m: m.cuda.empty_cache(),
    "version.cuda": lambda m: m.version.cuda,
    "cudnn.version": lambda m: m.backends.cudnn.version(),
    "accelerator.current": lambda m: m.accelerator.current_accelerator(),
}


@without_gpu
def test_dataloader_pin_memory_without_accelerator(torch_mod):
    def run(m):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            batches = list(m.utils.data.DataLoader(m.arange(4.0), batch_size=2,
                                                   pin_memory=True))
        return [b.tolist() for b in batches], [str(w.message) for w in seen]
    assert run(ember) == run(torch_mod)


@without_gpu
@pytest.mark.parametrize("case", list(NO_CUDA), ids=list(NO_CUDA))
def test_without_cuda(case, torch_mod):
    assert not ember.cuda.is_available()
    assert outcome(lambda: NO_CUDA[case](ember)) == outcome(lambda: NO_CUDA[case](torch_mod))


# ---------------------------------------------------------------------- a second device
def test_to_moves_and_back(cuda_standin):
    t = ember.tensor([1.0, 2.0])
    g = t.to("cuda")
    assert g.device == ember.device("cuda:0") and g.is_cuda and g.get_device() == 0
    assert g.device != t.device and str(g.device) == "cuda:0"
    assert g._data is not t._data  # a transfer copies
    back = g.cpu()
    assert back.device == ember.device("cpu") and back.tolist() == [1.0, 2.0]
    assert g.cuda() is g and g.to("cuda:0") is g
    assert t.cuda().device == g.device and t.cuda(1).device == ember.device("cuda:1")
    assert t.to(ember.device("cuda", 1)).device.index == 1
    assert ember.device(1) == ember.device("cuda:1")
    other = t.to(g)
    assert other.device == g.device
    assert t.to("cuda", ember.float64).dtype is ember.float64
    assert t.type() == "torch.FloatTensor" and g.type() == "torch.cuda.FloatTensor"
    assert t.type("torch.cuda.LongTensor").device == g.device


def test_creation_honours_device(cuda_standin):
    makers = [lambda: ember.zeros(2, 3, device="cuda"), lambda: ember.ones(2, device="cuda"),
              lambda: ember.empty(2, device="cuda"), lambda: ember.full((2,), 3.0, device="cuda"),
              lambda: ember.tensor([1, 2], device="cuda"), lambda: ember.arange(3, device="cuda"),
              lambda: ember.linspace(0, 1, 3, device="cuda"), lambda: ember.eye(2, device="cuda"),
              lambda: ember.as_tensor(np.ones(2), device="cuda"),
              lambda: ember.zeros_like(ember.ones(2).cuda()),
              lambda: ember.full_like(ember.ones(2).cuda(), 2.0)]
    for make in makers:
        t = make()
        assert t.device == ember.device("cuda:0"), make
    assert ember.zeros_like(ember.ones(2).cuda(), device="cpu").device == ember.device("cpu")


def test_ops_stay_on_device_and_mixing_raises(cuda_standin, torch_mod):
    a = ember.tensor([1.0, 2.0], device="cuda")
    b = ember.tensor([3.0, 4.0], device="cuda")
    c = a + b * 2
    assert c.device == a.device and c.cpu().tolist() == [7.0, 10.0]
    assert (a + 1).device == a.device
    with pytest.raises(RuntimeError) as exc:
        ember.tensor([1.0, 2.0]) + a
    assert str(exc.value) == ("Expected all tensors to be on the same device, but found at "
                              "least two devices, cpu and cuda:0!")
    with pytest.raises(RuntimeError, match="cuda:0 and cpu!"):
        a * ember.tensor([1.0, 2.0])


def test_numpy_of_device_tensor(cuda_standin):
    g = ember.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError) as exc:
        g.numpy()
    assert str(exc.value) == ("can't convert cuda:0 device type tensor to numpy. Use "
                              "Tensor.cpu() to copy the tensor to host memory first.")
    with pytest.raises(TypeError):
        np.asarray(g)
    np.testing.assert_array_equal(g.numpy(force=True), [1.0, 2.0])
    assert g.tolist() == [1.0, 2.0] and ember.tensor(3.0, device="cuda").item() == 3.0


def test_gradient_crosses_devices(cuda_standin):
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to("cuda") * 3.0).cpu()
    assert y.device == x.device and y.requires_grad
    y.sum().backward()
    assert x.grad.device == x.device and x.grad.tolist() == [3.0, 3.0]


@without_gpu
def test_unregister_restores_error(torch_mod):
    from ember.backends.standin import StandinBackend
    backends.register("cuda", StandinBackend(1))
    backends.unregister("cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ember.zeros(2).cuda()
