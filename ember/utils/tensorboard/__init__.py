"""ember.utils.tensorboard (torch.utils.tensorboard): SummaryWriter on tensorboardX.

Needs the `tensorboard` extra (tensorboardX, no TensorFlow, no torch); without it, importing
this package raises an ImportError naming the extra to install.
"""
from ._tbx import tbx as _tbx
from .writer import FileWriter, SummaryWriter

RecordWriter = _tbx.RecordWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
