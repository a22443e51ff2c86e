"""The model registry and weight enums (torchvision.models._api).

Weights never come from the network: `WeightsEnum.get_state_dict` reads the file torchvision
would have downloaded from ember.hub's cache (<hub dir>/checkpoints/<file name>) and raises an
error naming that path when it is missing.
"""
import fnmatch
import importlib
import inspect
import typing
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any, Callable

from ... import hub

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models", "register_model"]


@dataclass
class Weights:
    """A set of pretrained weights: where the file comes from, the preprocessing it expects
    (`transforms`, a constructor) and its metadata (categories, sizes, metrics)."""
    url: str
    transforms: Callable
    meta: dict

    def __eq__(self, other):
        # NOTE: a deep-copied functools.partial is not == to its original, and Enum compares
        # values when a member is copied or unpickled, so partials compare by their parts.
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        a, b = self.transforms, other.transforms
        if isinstance(a, partial) and isinstance(b, partial):
            return (a.func, a.args, a.keywords) == (b.func, b.args, b.keywords)
        return a == b


class WeightsEnum(Enum):
    """Base of the per-model weight enums (ResNet18_Weights, ...); members hold Weights."""

    @classmethod
    def verify(cls, obj):
        if obj is None:
            return obj
        if type(obj) is str:
            return cls[obj.replace(cls.__name__ + ".", "")]
        if not isinstance(obj, cls):
            raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                            f"received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        return hub.load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def get_weight(name):
    """The weight enum member named like "ResNet50_Weights.IMAGENET1K_V1"."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    base = importlib.import_module(__name__.rsplit(".", 1)[0])
    candidates = [base] + [m for _, m in inspect.getmembers(base, inspect.ismodule)
                           if getattr(m, "__file__", "").endswith("__init__.py")]
    for module in candidates:
        found = module.__dict__.get(enum_name)
        if isinstance(found, type) and issubclass(found, WeightsEnum):
            return found[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                     "retrieved.")


def get_model_weights(name):
    """The weights enum class of a builder (given as the function or its registered name)."""
    fn = get_model_builder(name) if isinstance(name, str) else name
    return _get_enum_from_fn(fn)


def _get_enum_from_fn(fn):
    params = inspect.signature(fn).parameters
    if "weights" not in params:
        raise ValueError("The method is missing the 'weights' argument.")
    ann = params["weights"].annotation
    choices = [ann] if isinstance(ann, type) else list(typing.get_args(ann))
    for t in choices:
        if isinstance(t, type) and issubclass(t, WeightsEnum):
            return t
    raise ValueError("The WeightsEnum class for the specific method couldn't be retrieved. "
                     "Make sure the typing info is correct.")


BUILTIN_MODELS = {}


def register_model(name=None):
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def _filters(patterns):
    return [patterns] if isinstance(patterns, str) else list(patterns)


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered models, optionally from one module and filtered by
    fnmatch patterns (`include` keeps the union of its matches, `exclude` then drops)."""
    names = {k for k, v in BUILTIN_MODELS.items()
             if module is None or v.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        names = set().union(*(fnmatch.filter(names, f) for f in _filters(include)))
    if exclude:
        for f in _filters(exclude):
            names -= set(fnmatch.filter(names, f))
    return sorted(names)


def get_model_builder(name):
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name: str, **config: Any):
    """Build the registered model `name` with the builder's keyword arguments."""
    return get_model_builder(name)(**config)

