"""nn.utils: gradient clipping, parameter/vector conversion, parametrizations, fusion, and
the legacy weight_norm / spectral_norm hooks."""
from . import parametrizations, parametrize  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: F401
                     fuse_linear_bn_eval, fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from . import rnn  # noqa: F401
from .module_setup import (convert_conv2d_weight_memory_format,  # noqa: F401
                           convert_conv3d_weight_memory_format, skip_init)
