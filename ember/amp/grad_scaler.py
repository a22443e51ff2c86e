"""GradScaler: dynamic loss scaling for float16 training, with PyTorch's state machine.

`scale(loss)` multiplies by the scale, `step(opt)` unscales the gradients (once per
optimizer per iteration), skips the step when any gradient is inf/NaN, and `update()` backs
the scale off after a skipped step or grows it after `growth_interval` clean ones.
On 'cpu' it is enabled (as in PyTorch 2.13); on 'cuda' without a GPU it disables itself
with PyTorch's warning, and every method passes through.
"""
import warnings
from collections import defaultdict
from enum import Enum

from .. import _dtype as dt
from .. import cuda
from .._creation import full
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available."
                              "  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None            # created by the first scale(), on its device
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init(self, dev):
        self._scale = full((), self._init_scale, dtype=dt.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dt.int32, device=dev)

    def scale(self, outputs):
        """`outputs * scale` (a Tensor, or an iterable of Tensors rebuilt with its type)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)) or hasattr(val, "__iter__"):
                out = [apply_scale(v) for v in val]
                return type(val)(out) if isinstance(val, (list, tuple)) else iter(out)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Multiply every gradient by inv_scale in place; found_inf becomes 1 if any is not
        finite (per device)."""
        per_device = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = str(grad.device)
                    flag = per_device.get(dev)
                    if flag is None:
                        flag = per_device[dev] = found_inf.to(grad.device).clone()
                    if not bool(grad.isfinite().all()):
                        flag.fill_(1.0)
                    grad.mul_(inv_scale.to(grad.device))
        return per_device

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale (once per iteration)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # NOTE: the reciprocal in float64, then float32, as PyTorch does (exact for powers of 2)
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=dt.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale if needed, then `optimizer.step()` unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back off after an inf/NaN step, grow after growth_interval clean steps, or set
        `new_scale`; then start a new iteration."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found = [f.item() for s in self._per_optimizer_states.values()
                     for f in s["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(found):
                scale.mul_(self._backoff_factor)
                tracker.fill_(0)
            else:
                successful = int(tracker.item()) + 1
                if successful == self._growth_interval:
                    new = scale * self._growth_factor
                    # NOTE: growth stops at the largest finite float32, as in PyTorch's kernel
                    if bool(new.isfinite()):
                        scale.copy_(new)
                    tracker.fill_(0)
                else:
                    tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ------------------------------------------------------------------ accessors
    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else \
                int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
