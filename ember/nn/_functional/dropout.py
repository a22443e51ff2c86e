"""Dropout family. Masks are drawn exactly as PyTorch's CPU kernel draws them
(`empty_like(input).bernoulli_(1 - p)`, or one draw per (sample, channel) for the feature
forms), so a seeded program drops the same elements as under PyTorch."""
import math
import warnings

from ... import _creation
from ...autograd.grad_mode import no_grad
from ...ops.functional_entry_points import check_dropout_p
from ...ops.random import dropout_mask_
from ._util import builtin_parser

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU: the value dropped units take


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _empty_like_layout(input):
    """empty_like that keeps a permuted-dense input's memory layout, as PyTorch's
    preserve_format does: the mask is drawn in memory order, so the layout decides which
    element gets which draw."""
    a = input._data
    if a.ndim < 2 or a.flags.c_contiguous:
        return _creation.empty_like(input)
    perm = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    if not a.transpose(perm).flags.c_contiguous:
        return _creation.empty_like(input)
    inverse = sorted(range(a.ndim), key=perm.__getitem__)
    return _creation.empty([a.shape[d] for d in perm], dtype=input.dtype,
                       device=input.device).permute(inverse)


def _noise(input, feature):
    if not feature:
        return _empty_like_layout(input)
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return _creation.empty(shape, dtype=input.dtype, device=input.device)


def _dropout_impl(input, p, training, inplace, feature=False, alpha=False):
    """PyTorch's `_dropout_impl`: scale kept units by 1/(1-p) (or, for alpha dropout, map
    dropped units to the SELU saturation value with an affine correction)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    with no_grad():
        if alpha:
            noise = _noise(input, feature).bernoulli_(1 - p)
            a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
            shift = noise.add(-1).mul_(_SELU_ALPHA_PRIME * a).add_(_SELU_ALPHA_PRIME * a * p)
            noise.mul_(a)
        else:
            noise = dropout_mask_(_noise(input, feature), 1 - p)
    if inplace:
        input.mul_(noise)
        return input.add_(shift) if alpha else input
    out = input * noise
    return out.add_(shift) if alpha else out


_KINDS = {"dropout": {}, "alpha_dropout": {"alpha": True},
          "feature_alpha_dropout": {"feature": True, "alpha": True}}
_PARSERS = {name + tail: builtin_parser(name + tail) for name in _KINDS for tail in ("", "_")}


def _through_builtin(name, input, p, training, inplace):
    """torch's F.<name> after its p check: `if inplace:` picks the builtin or its in-place
    form (a tensor's truth raises), whose parser sees the arguments before the kernel."""
    builtin = name + "_" if inplace else name
    _PARSERS[builtin].check((input, p, training), {})
    return _dropout_impl(input, p, training, builtin != name, **_KINDS[name])


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _through_builtin("dropout", input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _through_builtin("alpha_dropout", input, p, training, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _through_builtin("feature_alpha_dropout", input, p, training, inplace)


def _torch_form(name):
    def builtin(input, p, train):
        check_dropout_p(p)
        return _dropout_impl(input, p, train, False, **_KINDS[name])
    builtin.__name__ = builtin.__qualname__ = name
    return builtin


# torch.dropout, torch.alpha_dropout, torch.feature_alpha_dropout: the builtins (input, p,
# train) the functional forms hand their arguments to
TORCH_FORMS = {name: _torch_form(name) for name in _KINDS}


def _unbatched(input, inplace, fn):
    x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = fn(x)
    return result.squeeze_(0) if inplace else result.squeeze(0)


_FEATURE = {name: builtin_parser(name) for name in ("feature_dropout", "feature_dropout_")}


def _feature_dropout(input, p, training, inplace):
    """torch's F.dropout1d/2d/3d end: the feature_dropout builtin or its in-place form,
    whose parser sees the arguments before the kernel."""
    builtin = "feature_dropout_" if inplace else "feature_dropout"
    _FEATURE[builtin].check((input, p, training), {})
    return _dropout_impl(input, p, training, builtin != "feature_dropout", feature=True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")

    def run(x):
        return _feature_dropout(x, p, training, inplace)
    return run(input) if dim == 3 else _unbatched(input, inplace, run)


def _deprecated_rank(name, dim, spatial):
    warnings.warn(
        f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
        f"inputs with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (3, 4):
        _deprecated_rank("dropout2d", dim, 2)
    if dim == 3:
        # NOTE: PyTorch keeps treating 3D input as (N, C, L), not as an unbatched (C, H, W).
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (4, 5):
        _deprecated_rank("dropout3d", dim, 3)

    def run(x):
        return _feature_dropout(x, p, training, inplace)
    return run(input) if dim == 5 else _unbatched(input, inplace, run)
