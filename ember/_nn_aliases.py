"""Top-level functions and Tensor methods that PyTorch exposes outside torch.nn.functional
(torch.softmax, Tensor.log_softmax, torch.conv2d, ...), bound to the nn implementations."""
from . import _tensor
from .nn import functional as F


def softmax(input, dim, dtype=None):
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return F.log_softmax(input, dim, dtype=dtype)


# NOTE: the methods are the definitions and F.softmax calls them, as in PyTorch, so that
# F.softmax(non_tensor, 0) is the same AttributeError as there.
def _tensor_softmax(self, dim, dtype=None):
    from .ops import softmax_ops
    return softmax_ops.softmax(self if dtype is None else self.to(dtype), dim)


def _tensor_log_softmax(self, dim, dtype=None):
    from .ops import softmax_ops
    return softmax_ops.log_softmax(self if dtype is None else self.to(dtype), dim)


def _tensor_hardshrink(self, lambd=0.5):
    return F.hardshrink(self, lambd)


# Same signature in torch.* as in torch.nn.functional.*.
SAME_AS_FUNCTIONAL = ("conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
                      "conv_transpose2d",
                      "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d",
                      "avg_pool1d", "adaptive_avg_pool1d",
                      "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cosine_similarity",
                      "pairwise_distance", "pdist", "prelu", "selu", "celu", "rrelu",
                      "threshold", "hardshrink", "layer_norm", "group_norm",
                      "instance_norm", "bilinear",
                      "pixel_shuffle")


def install(namespace):
    namespace["softmax"] = softmax
    namespace["log_softmax"] = log_softmax
    from .nn._functional.dropout import TORCH_FORMS
    namespace.update(TORCH_FORMS)
    # torch.embedding is the builtin F.embedding calls: (weight, indices, padding_idx=-1, ...)
    from .nn._functional.embedding import torch_embedding
    namespace["embedding"] = torch_embedding
    # torch.adaptive_max_pool1d is the builtin F.adaptive_max_pool1d_with_indices calls: it
    # returns (values, indices)
    namespace.setdefault("adaptive_max_pool1d", F.adaptive_max_pool1d_with_indices)
    # torch.<loss> (kl_div, hinge_embedding_loss, ...): the builtins their F forms call (an
    # enum reduction, none by default)
    from .nn._functional import loss, loss_extra
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
