"""ExportableModule: a module that carries its own export arguments, as PyTorch's."""
import abc

from ..nn.modules.module import Module


class ExportableModule(Module, abc.ABC):
    """Abstract interface for ONNX exportable modules: implement `example_arguments` (and,
    if wanted, `input_names`, `output_names`, `dynamic_shapes`); `to_onnx()` or
    `ember.onnx.export(module)` then export it with them."""

    @abc.abstractmethod
    def example_arguments(self):
        """(args, kwargs or None) to run forward on while exporting."""

    def input_names(self):
        return None

    def output_names(self):
        return None

    def dynamic_shapes(self):
        return None

    def to_onnx(self, **kwargs):
        """ember.onnx.export(self, **kwargs): the ONNXProgram."""
        from . import export   # (cycle: ember.onnx imports this module)
        result = export(self, **kwargs)
        if result is None:
            raise AssertionError("result must be non-None")
        return result
