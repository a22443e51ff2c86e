"""ember.optim (torch.optim): optimizers and learning-rate schedulers."""
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
