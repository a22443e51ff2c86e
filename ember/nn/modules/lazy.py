"""LazyModuleMixin: modules whose parameter shapes are inferred at the first call."""
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter
from .module import Module

_UNINITIALIZED = (UninitializedParameter, UninitializedBuffer)


class LazyModuleMixin:
    cls_to_become = None

    def has_uninitialized_params(self):
        for p in list(self._parameters.values()) + list(self._buffers.values()):
            if isinstance(p, _UNINITIALIZED):
                return True
        return False

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # PyTorch keeps uninitialized entries as they are (they print <UninitializedParameter>).
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            if isinstance(t, _UNINITIALIZED) and prefix + name in destination:
                destination[prefix + name] = t

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # A checkpoint fixes the shapes: materialize to them, then load as usual.
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            value = state_dict.get(prefix + name)
            if isinstance(t, _UNINITIALIZED) and value is not None and \
                    not isinstance(value, _UNINITIALIZED):
                t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            with no_grad():
                self.initialize_parameters(*args, **kwargs)
        # Still lazy here even when a checkpoint already materialized every parameter.
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
        # NOTE: the class may have just changed to cls_to_become, so no super() here.
        return Module.__call__(self, *args, **kwargs)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")
