"""Datasets: Digits ships inside ember; readers for the standard on-disk formats."""
from .cifar import CIFAR10, CIFAR100
from .digits import Digits
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from .svhn import SVHN
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "Digits", "DatasetFolder", "EMNIST", "FakeData",
           "FashionMNIST", "ImageFolder", "KMNIST", "MNIST", "SVHN", "VisionDataset"]
