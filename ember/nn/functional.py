"""ember.nn.functional (torch.nn.functional): re-exports the functional modules (F.pad from
the ops layer, whose padding stft needs too)."""
from ._functional.activation import *  # noqa: F401,F403
from ._functional.conv import *  # noqa: F401,F403
from ._functional.pooling import *  # noqa: F401,F403
from ._functional.linear import *  # noqa: F401,F403
from ._functional.loss import *  # noqa: F401,F403
from ._functional.normalization import *  # noqa: F401,F403
from ._functional.dropout import *  # noqa: F401,F403
from ._functional.embedding import *  # noqa: F401,F403
from ._functional.attention import *  # noqa: F401,F403
from ._functional.loss_extra import *  # noqa: F401,F403
from ..ops.padding import *  # noqa: F401,F403
from ._functional.resample import *  # noqa: F401,F403
from ._functional.resample_grid import *  # noqa: F401,F403
from ._functional.distance import *  # noqa: F401,F403
from ._functional.dispatch_helpers import *  # noqa: F401,F403
from ._functional.conv_tbc import *  # noqa: F401,F403
from ._functional.grouped_mm import *  # noqa: F401,F403
from ._functional.linear_cross_entropy import *  # noqa: F401,F403
from ._functional.fractional_pooling import *  # noqa: F401,F403
# Last: torch's top-level forms of these kernels (torch.batch_norm, torch.lstm, ...), which
# register in the op table and call this module's functions
from ._functional import torch_entry_points as _torch_entry_points  # noqa: F401
