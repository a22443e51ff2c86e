"""torch._dynamo.config: Dynamo's settings, with PyTorch's defaults. ember compiles nothing,
so they change nothing; setting one PyTorch does not have raises PyTorch's AttributeError."""
import sys
import types

from .. import _names

_DEFAULTS = {
    "suppress_errors": False, "cache_size_limit": 8, "recompile_limit": 8, "verbose": False,
    "capture_scalar_outputs": False, "automatic_dynamic_shapes": True, "optimize_ddp": True,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256,
    "assume_static_by_default": True, "capture_dynamic_output_shape_ops": False,
    "inline_inbuilt_nn_modules": True, "force_parameter_static_shapes": True,
    "replay_record_enabled": False, "guard_nn_modules": True, "error_on_recompile": False,
    "specialize_int": False, "specialize_float": False, "dynamic_shapes": True,
    "allow_unspec_int_on_nn_module": False, "cache_size_limit_warning": True,
    "skip_nnmodule_hook_guards": True, "raise_on_ctx_manager_usage": True,
    "use_lazy_graph_module": True, "compiled_autograd": False,
}


class _Config(types.ModuleType):
    """A module whose attributes are the known settings only (as PyTorch's ConfigModule)."""

    def __setattr__(self, name, value):
        if name.startswith("_") or name in _DEFAULTS:
            super().__setattr__(name, value)
            return
        raise AttributeError(f"{_names.MODULE}._dynamo.config.{name} does not exist")


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
