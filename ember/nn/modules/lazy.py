"""LazyModuleMixin: modules whose parameter shapes are inferred at the first call."""
from ..parameter import UninitializedBuffer, UninitializedParameter


class LazyModuleMixin:
    cls_to_become = None

    def has_uninitialized_params(self):
        for p in list(self._parameters.values()) + list(self._buffers.values()):
            if isinstance(p, (UninitializedParameter, UninitializedBuffer)):
                return True
        return False

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad
            with no_grad():
                self.initialize_parameters(*args, **kwargs)
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
        from .module import Module
        # NOTE: the class may have just changed to cls_to_become, so no super() here.
        return Module.__call__(self, *args, **kwargs)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")
