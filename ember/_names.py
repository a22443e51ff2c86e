"""The framework name that reprs and messages print: 'ember', or 'torch' once `ember run`
has mapped the program's `import torch` onto ember (ember/_alias.py's install()), so that a
program prints torch.Size([1, 4]) and torch.float32 as it does under PyTorch.

Readers look `MODULE` up at print time (one module attribute read), never copy it."""
MODULE = "ember"


def use_torch_names():
    global MODULE
    MODULE = "torch"
