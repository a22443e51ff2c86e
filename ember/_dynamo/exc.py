"""torch._dynamo.exc: the errors of graph capture."""

__all__ = ["TorchDynamoException", "Unsupported", "RecompileError", "FailOnRecompileLimitHit"]


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """Raised under `fullgraph=True` where the capture meets a graph break."""


class RecompileError(TorchDynamoException):
    pass


class FailOnRecompileLimitHit(TorchDynamoException):
    pass
