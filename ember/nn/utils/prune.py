"""ember.nn.utils.prune (torch.nn.utils.prune): masks that zero parts of a parameter.

Pruning parameter `name` of a module moves the parameter to `name + "_orig"`, keeps the mask
as the buffer `name + "_mask"`, and makes `name` a plain attribute equal to orig * mask,
recomputed before every forward by the pruning method (a forward pre-hook). Pruning the same
parameter again combines the methods in a PruningContainer: each new mask is computed only on
what the earlier masks left. `remove` makes the pruned values permanent.

The random methods draw with `rand_like`/`rand`, as PyTorch's do, so a seeded run prunes
the same entries.
"""
import abc
import numbers
from collections.abc import Iterable

from ..._constants import contiguous_format
from ..._creation import ones_like, zeros_like
from ...ops.random_factories import rand, rand_like
from ...ops.reduction import norm
from ...ops.rounding import abs as _abs
from ...ops.sorting import topk
from ...ops.statistics import kthvalue
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask",
           "identity", "random_unstructured", "l1_unstructured", "random_structured",
           "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(abc.ABC):
    """A way of computing a mask; also the forward pre-hook that applies it.

    `_tensor_name` (the pruned parameter's name) is set when the method is applied; as in
    PyTorch, a method never applied has no such attribute."""

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abc.abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for `t`, given the mask earlier pruning left (`default_mask`)."""

    def apply_mask(self, module):
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with `cls(*args, **kwargs)` (joined to earlier pruning)."""
        method = _joined_method(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            # (order matters for named_parameters/state_dict: `<name>_orig` goes last)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:   # put the parameter back as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask this method computes for it (nothing is registered)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: `name` becomes a parameter holding orig * mask."""
        assert self._tensor_name is not None, (
            f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        name = self._tensor_name
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _joined_method(cls, module, name, args, kwargs):
    """A new `cls` method for `name`, in a PruningContainer with the method already pruning
    it (whose hook is taken off the module: the container's replaces it)."""
    earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    assert len(earlier) <= 1, (
        f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
        "Use a PruningContainer.")
    for key, _ in earlier:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if earlier:
        old = earlier[0][1]
        container = old if isinstance(old, PruningContainer) else PruningContainer(old)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """Successive pruning methods of one parameter; the last computes the new mask on the
    entries (or channels) the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            region = default_mask == 1   # only the entries still unpruned
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            # only the channels with some entry still unpruned
            kept = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            region = tuple(kept if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            region = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[region], default_mask=default_mask[region])
        new_mask[region] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _EntryPruning(BasePruningMethod):
    """Unstructured pruning of `amount` entries (a count, or a fraction of the tensor):
    subclasses choose which (`_chosen`, flat indices)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        count = _prune_count(self.amount, size)
        _check_amount_fits(self.amount, size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if count != 0:
            mask.view(-1)[self._chosen(t, count)] = 0
        return mask


class RandomUnstructured(_EntryPruning):
    """Prunes `amount` entries (a count, or a fraction of the tensor) chosen at random."""

    def _chosen(self, t, count):
        return topk(rand_like(t).view(-1), k=count).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_EntryPruning):
    """Prunes the `amount` entries of smallest absolute value."""

    def _chosen(self, t, count):
        return topk(_abs(t).view(-1), k=count, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _ChannelPruning(BasePruningMethod):
    """Structured pruning of `amount` whole channels along `dim`: subclasses choose the
    channels kept (`_kept`, a boolean mask or indices)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _prune_count(self.amount, channels)
        _check_amount_fits(self.amount, channels)
        if count == 0:
            return default_mask
        mask = zeros_like(t)
        region = [slice(None)] * t.dim()
        region[self.dim] = self._kept(t, channels, count)
        mask[tuple(region)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_ChannelPruning):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    def _kept(self, t, channels, count):
        draws = rand(channels)
        return draws > kthvalue(draws, k=count).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_ChannelPruning):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _kept(self, t, channels, count):
        dim = self.dim + t.dim() if self.dim < 0 else self.dim
        norms = norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        return topk(norms, k=channels - count, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _check_amount_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={size}")


def _prune_count(amount, size):
    """How many of `size` units to prune: an integer amount is a count, a float a fraction
    (rounded half to even, as Python's round)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


def _check_structured(t):
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {t.shape} with {len(t.shape)} dims")


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def identity(module, name):
    """Prune nothing, but reparametrise `name` as `name_orig` * `name_mask` (all ones)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs of `parameters` together: `pruning_method` (an
    unstructured one) chooses among all their entries at once."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((module, name),
                                                         getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask",
                                                 ones_like(getattr(module, name)))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`.'
                        f" Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + size].view_as(param))
        start += size


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask=mask)
    return module


def remove(module, name):
    """Make the pruning of `name` permanent and take its hook off the module."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module):
    """Whether `module` or any submodule has a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
