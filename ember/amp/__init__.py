"""ember.amp (torch.amp): autocast regions and GradScaler."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd,  # noqa: F401
                            is_autocast_available)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler"]
