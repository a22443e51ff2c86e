"""Dataset readers on small files written here in each on-disk format."""
import gzip
import os
import pickle

import numpy as np
import pytest

import ember
from ember.vision import datasets, transforms

Image = pytest.importorskip("PIL.Image")


def _write_idx(path, array, compress=False):
    code = {np.uint8: 8, np.int8: 9, np.int16: 11, np.int32: 12, np.float32: 13,
            np.float64: 14}[array.dtype.type]
    header = bytes([0, 0, code, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if compress else open
    with opener(path + (".gz" if compress else ""), "wb") as f:
        f.write(data)


def _mnist_files(root, name, n, compress=False, prefix=("train", "t10k"), names=None):
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(len(name) + n)
    out = {}
    for split in prefix:
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        stem = names(split) if names else split
        _write_idx(os.path.join(raw, f"{stem}-images-idx3-ubyte"), images, compress)
        _write_idx(os.path.join(raw, f"{stem}-labels-idx1-ubyte"), labels, compress)
        out[split] = (images, labels)
    return out


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST, datasets.KMNIST])
@pytest.mark.parametrize("compress", [False, True])
def test_mnist_family(tmp_path, cls, compress):
    written = _mnist_files(str(tmp_path), cls.__name__, 5, compress)
    for train, key in ((True, "train"), (False, "t10k")):
        ds = cls(str(tmp_path), train=train, transform=transforms.ToTensor(),
                 target_transform=lambda t: t + 100, download=True)
        images, labels = written[key]
        assert len(ds) == 5
        assert ds.data.dtype == ember.uint8 and ds.targets.dtype == ember.int64
        np.testing.assert_array_equal(ds.data.numpy(), images)
        np.testing.assert_array_equal(ds.targets.numpy(), labels)
        img, target = ds[3]
        np.testing.assert_allclose(img.numpy()[0], images[3] / 255.0, rtol=1e-6)
        assert target == labels[3] + 100
        assert ds.class_to_idx == {c: i for i, c in enumerate(ds.classes)}
        with pytest.warns(UserWarning):
            legacy = ds.train_labels if train else ds.test_labels
        assert legacy is ds.targets
        assert f"Split: {'Train' if train else 'Test'}" in repr(ds)
    raw_image = cls(str(tmp_path))[0][0]
    assert isinstance(raw_image, Image.Image) and raw_image.mode == "L"
    assert datasets.MNIST.classes[3] == "3 - three"
    assert datasets.FashionMNIST.classes[-1] == "Ankle boot"


def test_emnist(tmp_path):
    written = _mnist_files(str(tmp_path), "EMNIST", 4, True, ("train", "test"),
                           lambda s: f"emnist-letters-{s}")
    ds = datasets.EMNIST(str(tmp_path), split="letters", train=False)
    np.testing.assert_array_equal(ds.data.numpy(), written["test"][0])
    assert ds.classes[:3] == ["N/A", "a", "b"] and len(ds.classes) == 27
    assert len(datasets.EMNIST.classes_split_dict["balanced"]) == 47
    with pytest.raises(ValueError, match="Unknown value 'nope' for argument split"):
        datasets.EMNIST(str(tmp_path), split="nope")


def test_missing_without_download(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        datasets.MNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.CIFAR10(str(tmp_path))


def _offline(monkeypatch):
    import urllib.error

    from ember.vision.datasets import utils

    def refuse(url):
        raise urllib.error.URLError("network is unreachable")
    monkeypatch.setattr(utils, "_urlopen", refuse)


def test_download_offline_says_where_files_go(tmp_path, monkeypatch):
    _offline(monkeypatch)
    with pytest.raises(RuntimeError) as info:
        datasets.MNIST(str(tmp_path), download=True)
    message = str(info.value)
    assert os.path.join(str(tmp_path), "MNIST", "raw", "train-images-idx3-ubyte.gz") in message
    assert "network is unreachable" in message
    with pytest.raises(RuntimeError, match="cifar-10-batches-py"):
        datasets.CIFAR10(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="train_32x32.mat"):
        datasets.SVHN(str(tmp_path), download=True)


def test_download_with_files_present_does_nothing(tmp_path, monkeypatch):
    _offline(monkeypatch)
    _mnist_files(str(tmp_path), "MNIST", 2)
    assert len(datasets.MNIST(str(tmp_path), download=True)) == 2


def _cifar_files(root, folder, train_names, test_names, meta_name, meta_key, label_key,
                 classes):
    d = os.path.join(root, folder)
    os.makedirs(d)
    rng = np.random.default_rng(3)
    written = {}
    for name in train_names + test_names:
        data = rng.integers(0, 256, size=(3, 3072), dtype=np.uint8)
        labels = rng.integers(0, len(classes), size=3).tolist()
        with open(os.path.join(d, name), "wb") as f:
            pickle.dump({"data": data, label_key: labels}, f)
        written[name] = (data, labels)
    with open(os.path.join(d, meta_name), "wb") as f:
        pickle.dump({meta_key: classes}, f)
    return written


@pytest.mark.parametrize("cls", [datasets.CIFAR10, datasets.CIFAR100])
def test_cifar(tmp_path, cls):
    classes = [f"c{i}" for i in range(10 if cls is datasets.CIFAR10 else 100)]
    w = _cifar_files(str(tmp_path), cls.base_folder, [n for n, _ in cls.train_list],
                     [n for n, _ in cls.test_list], cls.meta["filename"], cls.meta["key"],
                     "labels" if cls is datasets.CIFAR10 else "fine_labels", classes)
    train = cls(str(tmp_path), train=True, download=True)
    test = cls(str(tmp_path), train=False)
    assert len(train) == 3 * len(cls.train_list) and len(test) == 3
    data, labels = w[cls.test_list[0][0]]
    expected = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(test.data, expected)
    assert test.targets == labels and test.classes == classes
    assert test.class_to_idx["c2"] == 2
    img, target = test[1]
    assert img.mode == "RGB" and target == labels[1]
    np.testing.assert_array_equal(np.array(img), expected[1])


def test_svhn(tmp_path):
    sio = pytest.importorskip("scipy.io")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(32, 32, 3, 4), dtype=np.uint8)
    y = np.array([[10], [1], [2], [10]], dtype=np.uint8)
    sio.savemat(os.path.join(str(tmp_path), "test_32x32.mat"), {"X": x, "y": y})
    ds = datasets.SVHN(str(tmp_path), split="test")
    assert ds.data.shape == (4, 3, 32, 32)
    np.testing.assert_array_equal(ds.labels, [0, 1, 2, 0])
    img, target = ds[1]
    np.testing.assert_array_equal(np.array(img), x[..., 1])
    assert target == 1
    assert "Split: test" in repr(ds)


def test_image_folder(tmp_path):
    rng = np.random.default_rng(0)
    expected = []
    for ci, cname in enumerate(["cat", "dog"]):
        os.makedirs(tmp_path / cname / "sub")
        for k, rel in enumerate(["b.png", "a.png", "sub/c.bmp"]):
            a = rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
            Image.fromarray(a).save(tmp_path / cname / rel)
            expected.append((str(tmp_path / cname / rel), ci, a))
        (tmp_path / cname / "notes.txt").write_text("not an image")
    ds = datasets.ImageFolder(str(tmp_path), transform=transforms.PILToTensor())
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    order = sorted(expected, key=lambda e: (e[1], e[0]))
    assert [p for p, _ in ds.samples] == [e[0] for e in order]
    assert ds.targets == [e[1] for e in order] and ds.imgs is ds.samples
    for i, (_, ci, a) in enumerate(order):
        img, target = ds[i]
        assert target == ci
        np.testing.assert_array_equal(img.numpy().transpose(1, 2, 0), a)
    only_png = datasets.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".png",))
    assert len(only_png) == 4
    os.makedirs(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty"):
        datasets.ImageFolder(str(tmp_path))
    assert len(datasets.ImageFolder(str(tmp_path), allow_empty=True)) == 6


def test_fakedata_restores_rng_and_is_reproducible():
    ds = datasets.FakeData(size=4, image_size=(3, 6, 5), num_classes=3,
                           transform=transforms.ToTensor())
    ember.manual_seed(7)
    before = ember.rand(3)
    ember.manual_seed(7)
    a, ta = ds[2]
    b, tb = ds[2]
    assert ember.equal(ember.rand(3), before)
    assert ember.equal(a, b) and ta == tb and 0 <= ta < 3
    assert a.shape == (3, 6, 5)
    with pytest.raises(IndexError):
        ds[4]


def test_dataloader_over_reader(tmp_path):
    _mnist_files(str(tmp_path), "MNIST", 6)
    ds = datasets.MNIST(str(tmp_path), transform=transforms.ToTensor())
    images, targets = next(iter(ember.utils.data.DataLoader(ds, batch_size=4)))
    assert images.shape == (4, 1, 28, 28) and targets.dtype == ember.int64
