"""Datasets: Digits ships inside ember; readers for the standard on-disk formats."""
from .digits import Digits  # noqa: F401
