"""tensorboardX, imported once, when a writer is first asked for (never by `import ember` or
`import ember.utils.tensorboard`)."""
import sys

from ..._optional import missing_message

MISSING = missing_message("tensorboardX", "TensorBoard logging (SummaryWriter)")


def _load():
    # NOTE: tensorboardX's writer module runs `import torch` when it can, only to name torch's
    # Tensor in type hints; that costs seconds and we hand it NumPy arrays anyway, so torch is
    # hidden for the length of the import unless the program already has it (or has ember
    # standing in for it under `ember run`).
    hide = "torch" not in sys.modules
    if hide:
        sys.modules["torch"] = None
    try:
        import tensorboardX   # (optional: tensorboardX)
        from tensorboardX import embedding, summary, utils  # noqa: F401
        # The protobuf modules used through `tbx.proto.<name>` elsewhere.
        from tensorboardX.proto import (api_pb2, attr_value_pb2, event_pb2,  # noqa: F401
                                        graph_pb2, layout_pb2, node_def_pb2,
                                        plugin_hparams_pb2, summary_pb2, tensor_pb2,
                                        tensor_shape_pb2, versions_pb2)
    except ImportError as exc:
        # Missing tensorboardX itself, or its protobuf dependency ("google").
        top = (exc.name or "").split(".")[0]
        if top == "tensorboardX":
            raise ModuleNotFoundError(MISSING, name=top) from exc
        if top == "google":
            raise ModuleNotFoundError(missing_message("protobuf", "tensorboardX"),
                                      name=top) from exc
        raise
    finally:
        if hide and "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return tensorboardX


tbx = _load()
