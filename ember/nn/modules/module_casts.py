"""Module's device and dtype conversions (to, cpu, cuda, float, half, ...): each goes through
`_apply`, which replaces every parameter's and buffer's data in place of the old, keeping the
Parameter objects (optimizers holding them keep working), as PyTorch does."""
from ... import _dtype as dt
from ..._creation import empty_like
from ...autograd.grad_mode import no_grad
from ...ops.conversion import _parse_to


class DeviceDtypeMethods:
    """The conversion methods of nn.Module (a base class of it, kept in its own file)."""

    def _apply(self, fn, recurse=True):
        """Replace each parameter's and buffer's data by fn(data), keeping Parameter
        identity (so optimizers holding them keep working), as PyTorch does."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                if param._grad is not None:
                    param._grad.data = fn(param._grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        device, dtype, _ = _parse_to(args, dict(kwargs))
        if dtype is not None and not _inexact(dtype):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            target = dtype if (dtype is not None and _inexact(t.dtype)) else None
            return t.to(device=device, dtype=target)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def _float_cast(self, d):
        return self._apply(lambda t: t.to(d) if _inexact(t.dtype) else t)

    def float(self):
        return self._float_cast(dt.float32)

    def double(self):
        return self._float_cast(dt.float64)

    def half(self):
        return self._float_cast(dt.float16)

    def bfloat16(self):
        return self._float_cast(dt.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())


def _inexact(dtype):
    """The dtypes Module's casts convert (integer and bool buffers keep theirs)."""
    return dtype.is_floating_point or dtype.is_complex
