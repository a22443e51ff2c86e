"""Datasets: Digits ships inside ember; readers for the standard on-disk formats."""
from .cifar import CIFAR10, CIFAR100  # noqa: F401
from .digits import Digits  # noqa: F401
from .fakedata import FakeData  # noqa: F401
from .folder import DatasetFolder, ImageFolder  # noqa: F401
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST  # noqa: F401
from .svhn import SVHN  # noqa: F401
from .vision import VisionDataset  # noqa: F401

__all__ = ["CIFAR10", "CIFAR100", "Digits", "DatasetFolder", "EMNIST", "FakeData",
           "FashionMNIST", "ImageFolder", "KMNIST", "MNIST", "SVHN", "VisionDataset"]
