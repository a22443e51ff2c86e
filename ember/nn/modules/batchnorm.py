"""BatchNorm1d/2d/3d, their lazy forms, and SyncBatchNorm (plain batch norm without a
process group)."""
from ... import _dtype as dt
from ..._creation import empty, ones, tensor, zeros
from ...autograd.grad_mode import no_grad
from .._functional.normalization import batch_norm
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from ._parameters import reset_affine, set_parameters
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by batch and instance norm."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"device": device, "dtype": dtype}
        set_parameters(self, weight=Parameter(empty(num_features, **kw)) if affine else None,
                       bias=Parameter(empty(num_features, **kw)) if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kw))
            self.register_buffer("running_var", ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 tensor(0, dtype=dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self, self.affine)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        # Checkpoints older than version 2 have no num_batches_tracked: it starts at 0.
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else tensor(0, dtype=dt.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs, assign)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          use_batch, factor, self.eps)


def _dim_checker(allowed, message):
    def check(self, input):
        if input.dim() not in allowed:
            raise ValueError(message.format(input.dim()))
    return check


class BatchNorm1d(_BatchNorm):
    _check_input_dim = _dim_checker((2, 3), "expected 2D or 3D input (got {}D input)")


class BatchNorm2d(_BatchNorm):
    _check_input_dim = _dim_checker((4,), "expected 4D input (got {}D input)")


class BatchNorm3d(_BatchNorm):
    _check_input_dim = _dim_checker((5,), "expected 5D input (got {}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """num_features inferred from the first input's dim 1."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        Module.__init__(self)
        self.num_features = 0
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        set_parameters(self, weight=UninitializedParameter(dtype=dtype) if affine else None,
                       bias=UninitializedParameter(dtype=dtype) if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dt.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        self.num_features = input.shape[1]
        for name in ("weight", "bias", "running_mean", "running_var"):
            t = getattr(self, name)
            if t is not None:
                t.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics would be reduced across a process group; without
    distributed training it is exactly BatchNorm over the local batch."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replace every BatchNorm*D in `module` by a SyncBatchNorm holding the same
        parameters and buffers."""
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                   module.affine, module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return output
