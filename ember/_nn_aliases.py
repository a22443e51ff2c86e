"""Top-level functions and Tensor methods that PyTorch exposes outside torch.nn.functional
(torch.softmax, Tensor.log_softmax, torch.conv2d, ...), bound to the nn implementations."""
from . import _tensor
from .nn import functional as F
from .nn._functional import loss, loss_extra
from .nn._functional.dropout import TORCH_FORMS
from .nn._functional.embedding import torch_embedding
from .ops import softmax_ops


def softmax(input, dim, dtype=None):
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return F.log_softmax(input, dim, dtype=dtype)


# NOTE: the methods are the definitions and F.softmax calls them, as in PyTorch, so that
# F.softmax(non_tensor, 0) is the same AttributeError as there.
def _tensor_softmax(self, dim, dtype=None):
    return softmax_ops.softmax(self if dtype is None else self.to(dtype), dim)


def _tensor_log_softmax(self, dim, dtype=None):
    return softmax_ops.log_softmax(self if dtype is None else self.to(dtype), dim)


def _tensor_hardshrink(self, lambd=0.5):
    return F.hardshrink(self, lambd)


# The builtins whose F forms take their arguments in another order, or other ones (torch's
# F functions call them).
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if generator is not None:
        raise NotImplementedError("ember's rrelu draws from the global generator only")
    return F.rrelu(input, lower, upper, training)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


# Same signature in torch.* as in torch.nn.functional.*.
SAME_AS_FUNCTIONAL = ("conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
                      "conv_transpose2d",
                      "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d",
                      "avg_pool1d", "adaptive_avg_pool1d",
                      "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cosine_similarity",
                      "pairwise_distance", "pdist", "prelu", "selu", "celu",
                      "threshold", "hardshrink", "bilinear", "pixel_shuffle")


def install(namespace):
    for fn in (softmax, log_softmax, rrelu, instance_norm, group_norm, layer_norm):
        namespace[fn.__name__] = fn
    namespace.update(TORCH_FORMS)
    # torch.embedding is the builtin F.embedding calls: (weight, indices, padding_idx=-1, ...)
    namespace["embedding"] = torch_embedding
    # torch.adaptive_max_pool1d is the builtin F.adaptive_max_pool1d_with_indices calls: it
    # returns (values, indices)
    namespace.setdefault("adaptive_max_pool1d", F.adaptive_max_pool1d_with_indices)
    # torch.<loss> (kl_div, hinge_embedding_loss, ...): the builtins their F forms call (an
    # enum reduction, none by default)
    for name, fn in {**loss.BUILTINS, **loss_extra.BUILTINS}.items():
        namespace.setdefault(name, fn)
    for name in SAME_AS_FUNCTIONAL:
        if name not in namespace and hasattr(F, name):
            namespace[name] = getattr(F, name)
    T = _tensor.Tensor
    T.softmax = _tensor_softmax
    T.log_softmax = _tensor_log_softmax
    T.hardshrink = _tensor_hardshrink
    for name in ("prelu", "selu", "celu", "rrelu"):
        if not hasattr(T, name) and hasattr(F, name):
            setattr(T, name, getattr(F, name))
