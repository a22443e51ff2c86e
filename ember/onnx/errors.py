"""The exceptions of ember.onnx, with PyTorch's names, bases and messages."""

__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "SymbolicValueError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter. This is the base class for all exporter errors."""


OnnxExporterError.__module__ = "ember.onnx"


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator is unsupported by the exporter."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        else:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   "supported")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """Errors around a value of the exported graph (ember names the op that made it)."""

    def __init__(self, msg, value):
        super().__init__(f"{msg}  [Caused by the value '{value}'.]")
