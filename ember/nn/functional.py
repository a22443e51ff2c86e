"""ember.nn.functional (torch.nn.functional): re-exports the functional modules."""
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
from ._functional.padding import *  # noqa: F401,F403
from ._functional.resample import *  # noqa: F401,F403
from ._functional.resample_grid import *  # noqa: F401,F403
from ._functional.distance import *  # noqa: F401,F403
