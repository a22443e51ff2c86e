"""ember.fft (torch.fft): discrete Fourier transforms with PyTorch's dtypes, norms and
gradients (ops/fft.py), sample frequencies and shifts (ops/spectral.py)."""
from .ops.fft import (fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn,  # noqa: F401
                      ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftn)
from .ops.spectral import fftfreq, fftshift, ifftshift, rfftfreq  # noqa: F401
from ._tensor import Tensor  # noqa: F401  (torch.fft re-exports it too)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "Tensor", "hfft2", "ihfft2", "hfftn", "ihfftn"]
