"""Activation modules: thin wrappers over nn.functional with PyTorch's reprs."""
from ... import _creation
from .. import functional as F
from .. import init as nn_init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish",
           "Hardshrink", "Softshrink", "Tanhshrink", "Threshold", "Softplus", "Softsign",
           "LogSigmoid", "GLU", "Softmax", "Softmin", "LogSoftmax", "Softmax2d"]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class _Inplace(Module):
    """A parameter-free activation with an optional `inplace` flag."""

    fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class ReLU(_Inplace):
    fn = staticmethod(F.relu)


class SiLU(_Inplace):
    fn = staticmethod(F.silu)


class Mish(_Inplace):
    fn = staticmethod(F.mish)


class Hardswish(_Inplace):
    fn = staticmethod(F.hardswish)

    def extra_repr(self):  # PyTorch shows no inplace flag for this one
        return ""


class Hardsigmoid(_Inplace):
    fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):  # PyTorch shows no inplace flag for this one
        return ""


class SELU(_Inplace):
    fn = staticmethod(F.selu)


class _Plain(Module):
    """A parameter-free activation with no options."""

    fn = None

    def forward(self, input):
        return type(self).fn(input)


class Sigmoid(_Plain):
    fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    fn = staticmethod(F.tanh)


class Tanhshrink(_Plain):
    fn = staticmethod(F.tanhshrink)


class Softsign(_Plain):
    fn = staticmethod(F.softsign)


class LogSigmoid(_Plain):
    fn = staticmethod(F.logsigmoid)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError("max_val must be greater than min_val")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{extra}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{extra}"


class ELU(Module):
    fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return type(self).fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{extra}"


class CELU(ELU):
    fn = staticmethod(F.celu)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{extra}"


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardshrink(Module):
    fn = staticmethod(F.hardshrink)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self).fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    fn = staticmethod(F.softshrink)


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{extra}"


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(Module):
    fn = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self).fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Softmax):
    fn = staticmethod(F.softmin)


class LogSoftmax(Softmax):
    fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
