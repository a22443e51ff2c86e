"""ember.utils.tensorboard (torch.utils.tensorboard): SummaryWriter on tensorboardX.

Needs tensorboardX (no TensorFlow, no torch), imported when a writer is first asked for:
`import ember.utils.tensorboard` always works, and `from ember.utils.tensorboard import
SummaryWriter` without tensorboardX raises an ImportError that says `pip install tensorboardX`.
"""
import importlib

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]


def __getattr__(name):
    if name in __all__:
        writer = importlib.import_module(".writer", __name__)  # imports tensorboardX
        names = {"FileWriter": writer.FileWriter, "SummaryWriter": writer.SummaryWriter,
                 "RecordWriter": writer.tbx.RecordWriter}
        globals().update(names)
        return names[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
