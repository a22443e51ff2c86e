"""ember.vision.models (torchvision.models): classification models whose parameter names,
shapes and initialisation order match torchvision's, and weight enums that load the files
torchvision downloads from ember.hub's cache (offline)."""
from ._api import (Weights, WeightsEnum, get_model, get_model_builder,  # noqa: F401
                   get_model_weights, get_weight, list_models)
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .efficientnet import *  # noqa: F401,F403
from .googlenet import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .vision_transformer import *  # noqa: F401,F403
