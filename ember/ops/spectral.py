"""Spectral helpers over ops/fft.py: the sample frequencies (fftfreq, rfftfreq), the shifts
(fftshift, ifftshift) and the short-time transforms (stft, istft; also Tensor methods).

stft and istft are composed of ember ops exactly as PyTorch composes them (frames by unfold,
window product, one r2c/c2c/c2r primitive, overlap-add by fold), so they differentiate
through every tensor argument for free.
"""
import functools
import warnings

import numpy as np

from .. import _runtime_settings
from .. import _dtype as dt
from .._creation import empty, ones, tensor
from .._inplace import write_out
from .._scalars import type_name
from .._signatures import Parser, checked
from .._signatures.table_nn import FUNCTIONAL
from .._signatures.table_torch import FUNCTIONS
from .._tensor import Tensor
from ._dims import wrap_dim
from ._elementwise import check_tensor
from .complex import view_as_real
from .conv import col2im_nd
from .fft import BY_N, BY_ROOT_N, NONE, fft_c2c, fft_c2r, fft_r2c
from .nn_resample import constant_pad_nd
from .padding import pad
from .registry import METHODS, export
from .complex import complex_from_parts
from .shape import roll


# ---------------------------------------------------------------------- frequencies
def _frequencies(name, k, n, d, out, dtype, device, requires_grad):
    dtype = dtype if dtype is not None else (out.dtype if out is not None else
                                             dt.get_default_dtype())
    if dtype.category == dt.COMPLEX:   # (PyTorch fills with arange, which has no complex kernel)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt.type_name(dtype)}'")
    if dtype.category != dt.FLOATING:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    # NOTE: PyTorch multiplies the arange by 1/(n*d) rounded to the tensor's dtype (then
    # computes in float32 for float16/bfloat16), not divides by n*d: the last bit follows.
    compute = np.float64 if dtype is dt.float64 else np.float32
    values = k.astype(compute) * compute(np.asarray(1.0 / (n * d)).astype(dtype.np))
    result = tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)
    return result if out is None else write_out(result, out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", k, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, out, dtype, device,
                        requires_grad)


def _shift(input, dim, half):
    check_tensor("fft_fftshift", input)
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [wrap_dim(d, input.dim()) for d in dims]
    if not dims:
        return input.clone()
    return roll(input, [half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    return _shift(input, dim, lambda n: (n + 1) // 2)


# ---------------------------------------------------------------------- stft / istft
_warned = set()


def _warn_once(key, message):
    # PyTorch's TORCH_WARN_ONCE: once per process, whatever the warnings filters say later.
    if key not in _warned or _runtime_settings.is_warn_always_enabled():
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _opt(value):
    return "None" if value is None else str(int(value))


def _window_text(window):
    return "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"


def _type_text(x):
    return f"{x.device.type.upper()}{dt.type_name(x.dtype)}Type"


def _sizes(x):
    return "[" + ", ".join(str(s) for s in x.shape) + "]"


# torch.stft is Python: it pads a centred signal, then calls the native stft, whose argument
# parser checks the call.
_STFT = Parser("stft", (
    "Tensor input, int n_fft, int? hop_length = None, int? win_length = None, Tensor? window "
    "= None, bool center = True, str pad_mode = \"reflect\", bool normalized = False, bool? "
    "onesided = None, bool? return_complex = None, bool? align_to_window = None",
    "Tensor input, int n_fft, int? hop_length = None, int? win_length = None, Tensor? window "
    "= None, bool normalized = False, bool? onesided = None, bool? return_complex = None, "
    "bool? align_to_window = None"))


_NO_STFT_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
_REAL_STFT_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format.")


@export
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    input = _stft_signal(input, n_fft, center, pad_mode, align_to_window)
    _STFT.check((input, n_fft, hop_length, win_length, window, normalized, onesided,
                 return_complex, align_to_window), {})   # (the native call's parser)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once("stft", _NO_STFT_WINDOW)
    elif window.device != input.device:
        raise RuntimeError("stft input and window must be on the same device but got self on "
                           f"{input.device} and window on {window.device}")
    prefix = (f"stft({input.type()}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
              f"win_length={win}, window={_window_text(window)}, "
              f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
              f"return_complex={_opt(return_complex)}, "
              f"align_to_window={_opt(align_to_window)}) : ")
    if return_complex is None:
        return_complex = _complex_by_default(input, window)
    elif not return_complex:
        _warn_once("stft_real", _REAL_STFT_DEPRECATED)
    _check_stft_sizes(prefix, input, n_fft, hop, win, window)
    x = input.unsqueeze(0) if input.dim() == 1 else input
    frames = _stft_frames(x, n_fft, hop, win, window, align_to_window)
    out = _stft_fft(frames, normalized, onesided).transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    if return_complex:
        return out
    return view_as_real(out)


def _stft_signal(input, n_fft, center, pad_mode, align_to_window):
    """torch.stft's Python part: its argument checks, then the centred signal padded by
    n_fft // 2 on each side."""
    # (PyTorch's Python code: the align_to_window rule, then input.dim() when centring)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center and not isinstance(input, Tensor):
        raise AttributeError(f"'{type_name(input)}' object has no attribute 'dim'")
    check_tensor("stft", input)
    if not center:
        return input
    signal_dim = input.dim()
    extended = [1] * (3 - signal_dim) + list(input.shape)
    half = int(n_fft // 2)   # (int(): a tensor n_fft fails here, as in PyTorch)
    input = _checked_pad()(input.view(extended), [half, half], pad_mode)
    return input.view(input.shape[-signal_dim:])


@functools.lru_cache(maxsize=None)
def _checked_pad():
    """F.pad behind its builtin's parser, as torch.stft calls it: a pad_mode that is not a str
    is the parser's TypeError before the mode is looked up."""
    torch_name, signatures, _ = FUNCTIONAL["pad"]
    return checked(pad, Parser(torch_name, signatures, keyword_positions=True), method=False)


def _complex_by_default(input, window):
    """return_complex when not given: True for a complex input or window, else PyTorch's
    error (a real input must say return_complex)."""
    if input.dtype.category == dt.COMPLEX or (window is not None and
                                              window.dtype.category == dt.COMPLEX):
        return True
    raise RuntimeError("stft requires the return_complex parameter be given for real inputs, "
                       "and will further require that return_complex=True in a future PyTorch "
                       "release.")


def _check_stft_sizes(prefix, input, n_fft, hop, win, window):
    """The native stft's checks of the input's dtype and shape and of the frame sizes."""
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError(prefix + "expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(prefix + "expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(prefix + f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(prefix + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(prefix + f"expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + f"expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size "
                           f"{_sizes(window)}")


def _stft_frames(x, n_fft, hop, win, window, align_to_window):
    """The windowed frames of the (channel, length) signal: (channel, n_frames, n_fft)."""
    if align_to_window:
        # The window (not the n_fft frame around it) starts at t * hop_length.
        frames = x.unfold(-1, win, hop)
        if window is not None:
            frames = frames * window
        left = (n_fft - win) // 2
        return _pad_last(frames, left, n_fft - win - left)
    frames = x.unfold(-1, n_fft, hop)
    if window is not None or win < n_fft:
        frames = frames * _full_window(window, win, n_fft, x)
    return frames


def _stft_fft(frames, normalized, onesided):
    """The frames' spectra (channel, n_frames, n_freq): one-sided by default for real frames."""
    complex_fft = frames.dtype.category == dt.COMPLEX
    sided = not complex_fft if onesided is None else onesided
    mode = BY_ROOT_N if normalized else NONE
    if frames.dtype in (dt.float16, dt.bfloat16):   # (the native kernel's own check)
        raise RuntimeError("MKL FFT doesn't support tensors of type: "
                           f"{dt.type_name(frames.dtype)}")
    if not complex_fft:
        return fft_r2c(frames, (2,), mode, sided)
    if sided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    return fft_c2c(frames, (2,), mode, True)


def _pad_last(x, left, right):
    if left == 0 and right == 0:
        return x
    return constant_pad_nd(x, (left, right))


def _full_window(window, win, n_fft, like):
    """The window centred in n_fft points (ones over win_length points when None)."""
    if window is None:
        window = ones(win, dtype=like.dtype, device=like.device)
    left = (n_fft - win) // 2
    return _pad_last(window, left, n_fft - win - left)


def _overlap_add(frames, length, hop):
    """Sum of (channel, n_frames, n_fft) frames placed hop apart: (channel, length); F.fold's
    col2im over a 1 x length image, the frames as its columns."""
    if frames.dtype.category == dt.COMPLEX:
        return complex_from_parts(_overlap_add(frames.real, length, hop),
                                  _overlap_add(frames.imag, length, hop))
    channels, _, n_fft = frames.shape
    cols = frames.transpose(1, 2)
    y = col2im_nd(cols, (channels, 1, 1, length), (1, n_fft), (1, hop), ((0, 0), (0, 0)),
                  (1, 1))
    return y.reshape(channels, length)


_NO_ISTFT_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
_ISTFT_PADDED = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings.")


@export(method=False)
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    check_tensor("istft", input)
    if window is None:
        _warn_once("istft", _NO_ISTFT_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    prefix = (f"istft({_type_text(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
              f"win_length={win}, window={_window_text(window)}, center={int(center)}, "
              f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
              f"length={_opt(length)}, return_complex={int(return_complex)}) ")
    sided = _check_istft_input(prefix, input, n_fft, hop, win, window, onesided)
    w = _full_window(window, win, n_fft, _real_like(input))
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = _istft_frames(x.transpose(1, 2), n_fft, window, normalized, sided, return_complex)
    n_frames = input.shape[-1]
    signal_length = n_fft + hop * (n_frames - 1)
    y = _overlap_add(x * w.view(1, 1, n_fft), signal_length, hop)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), signal_length, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = signal_length - n_fft // 2 if center else signal_length
    y = _normalize_by_envelope(prefix, y[:, start:end], envelope[:, start:end])
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > signal_length:
        _warn_once("istft_length", _ISTFT_PADDED)
        y = _pad_last(y, 0, end - signal_length)
    return y


def _check_istft_input(prefix, input, n_fft, hop, win, window, onesided):
    """The native istft's checks of the input, the frame sizes and the window; returns
    whether the input holds one-sided spectra."""
    if input.dtype.category != dt.COMPLEX:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError(prefix + ": input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(prefix + ": expected a tensor with 3 or 4 dimensions, but got "
                           f"{input.dim() + 1}")
    fft_size = input.shape[-2]
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(prefix + ": expected the frequency dimension (3rd to the last) of "
                           "the input tensor to match n_fft / 2 + 1 when onesided=True, but "
                           f"got {fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(prefix + ": expected the frequency dimension (3rd to the last) of "
                           "the input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(prefix + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(prefix + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + ": Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    return sided


def _istft_frames(x, n_fft, window, normalized, sided, return_complex):
    """The (channel, n_frames, fft_size) spectra back to frames: (channel, n_frames, n_fft)."""
    mode = BY_ROOT_N if normalized else BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        return fft_c2c(x, (2,), mode, False)
    if window is not None and window.dtype.category == dt.COMPLEX:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if not sided:
        x = x.narrow(-1, 0, n_fft // 2 + 1)
    return fft_c2r(x, (2,), mode, n_fft)


def _normalize_by_envelope(prefix, y, envelope):
    """The overlap-added signal divided by the overlap-added squared window, which must not
    vanish anywhere (else the window cannot be inverted)."""
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(prefix + "window overlap add min: 1\n[ CPUBoolType{} ]")
    return y / envelope


def _istft_method(self, *args, **kwargs):
    """Tensor.istft: PyTorch's Python method hands its arguments to torch.istft, whose
    argument parser checks them."""
    return _checked_istft()(self, *args, **kwargs)


@functools.lru_cache(maxsize=None)
def _checked_istft():
    return checked(istft, Parser("istft", FUNCTIONS["istft"]), method=False)


_istft_method.__name__ = "istft"
_istft_method.__qualname__ = "Tensor.istft"
METHODS["istft"] = _istft_method


def _real_like(input):
    """A probe tensor with the input's real dtype and device (the default window's type)."""
    return empty(0, dtype=input.dtype.to_real(), device=input.device)

