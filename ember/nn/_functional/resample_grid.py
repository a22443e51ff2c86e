"""grid_sample and affine_grid, composed of ember ops: the sample coordinates are ember
tensors (so the grid's gradient comes from autograd), the corner indices are detached
integers, and the input is read with one `gather` per corner (its gradient a scatter-add)."""
import warnings

from ... import _dtype as dt
from ..._creation import ones, zeros, zeros_like
from ..._ranges import linspace
from ..._signatures import checked
from ...ops.pointwise import fmod
from ...ops.rounding import floor, round as _round
from ...ops.select import where
from ...ops.shape import stack
from ._util import builtin_parser, functional_parser

__all__ = ["grid_sample", "affine_grid"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    """Clamp into [0, size - 1]; like PyTorch, the gradient is zero on and past the edges."""
    inside = (coord > 0) & (coord < size - 1)
    return where(inside, coord, coord.detach().clamp(0, size - 1))


def _reflect(coord, twice_low, twice_high):
    """Reflect into [twice_low / 2, twice_high / 2] as many times as needed."""
    if twice_low == twice_high:
        return zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - low).abs()
    extra = fmod(c, span)
    flips = floor(c.detach() / span)
    return where(fmod(flips, 2) == 0, extra + low, span - extra + low)


def _pad_coords(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


class _Reader:
    """Reads input values at integer coordinates (one tensor per spatial dim, x first),
    with zeros outside the input."""

    def __init__(self, input, out_shape):
        n, c = input.shape[:2]
        self.sizes = list(input.shape[2:])[::-1]      # x (width) first
        self.flat = input.reshape(n, c, -1)
        self.n, self.c = n, c
        self.out_shape = (n, c) + tuple(out_shape)

    def __call__(self, coords):
        lin, inside, stride = None, None, 1
        for ix, size in zip(coords, self.sizes):
            ok = (ix >= 0) & (ix < size)
            inside = ok if inside is None else inside & ok
            term = ix.clamp(0, size - 1) * stride
            lin = term if lin is None else lin + term
            stride *= size
        p = lin[0].numel()
        lin = lin.reshape(self.n, 1, p).expand(self.n, self.c, p)
        vals = self.flat.gather(2, lin)
        return vals.reshape(self.out_shape) * inside.unsqueeze(1).to(vals.dtype)


def _cubic_coeffs(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


# (torch's Python checks mode and padding_mode before its builtin's parser sees the types)
_GRID_SAMPLER = functional_parser("grid_sample")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample `input` (N, C, [D,] H, W) at the normalised locations `grid`
    (N, [D_out,] H_out, W_out, 2 or 3), x (width) first."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _GRID_SAMPLER.check((input, grid, mode, padding_mode, align_corners), {})
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    grid = grid.to(input.dtype)
    read = _Reader(input, grid.shape[1:-1])
    sizes = read.sizes
    raw = [_unnormalize(grid[..., d], sizes[d], align_corners) for d in range(nd)]
    if mode == "bicubic":
        return _bicubic(read, raw, sizes, padding_mode, align_corners)
    coords = [_pad_coords(c, s, padding_mode, align_corners) for c, s in zip(raw, sizes)]
    if mode == "nearest":
        # NOTE: round half to even, as C's nearbyint.
        return read([_round(c.detach()).to(dt.int64) for c in coords])
    lows = [floor(c.detach()) for c in coords]
    out = None
    for corner in range(1 << nd):
        idx, weight = [], None
        for d in range(nd):
            hi = (corner >> d) & 1
            idx.append(lows[d].to(dt.int64) + hi)
            w = coords[d] - lows[d] if hi else (lows[d] + 1) - coords[d]
            weight = w if weight is None else weight * w
        term = read(idx) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _bicubic(read, raw, sizes, padding_mode, align_corners):
    lows = [floor(c.detach()) for c in raw]
    cx, cy = (_cubic_coeffs(c - low) for c, low in zip(raw, lows))
    out = None
    for j in range(4):
        yj = _pad_coords(lows[1] + (j - 1), sizes[1], padding_mode, align_corners)
        row = None
        for i in range(4):
            xi = _pad_coords(lows[0] + (i - 1), sizes[0], padding_mode, align_corners)
            term = read([xi.detach().to(dt.int64), yj.detach().to(dt.int64)])
            term = term * cx[i].unsqueeze(1)
            row = term if row is None else row + term
        row = row * cy[j].unsqueeze(1)
        out = row if out is None else out + row
    return out


# torch.linspace behind its parser: affine_grid hands it the caller's sizes unchecked
_checked_linspace = checked(linspace, builtin_parser("linspace"), method=False)


def _base(n, align_corners, like):
    if n <= 1:
        return zeros(max(n, 1), dtype=like.dtype)
    steps = _checked_linspace(-1, 1, n, dtype=like.dtype)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, [D,] H, W, 2 or 3) of the affine maps `theta` for an output of
    `size` (N, C, [D,] H, W)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    # NOTE: a method call, as torch's: a dtype given for theta fails calling its bool
    # attribute (TypeError), not on a missing .dtype
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got "
                         f"torch.{str(theta.dtype).split('.')[-1]}")
    if len(size) == 4:
        want, nd = (2, 3), 2
    elif len(size) == 5:
        want, nd = (3, 4), 3
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if theta.dim() != 3 or tuple(theta.shape[1:]) != want:
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{want[0]}x"
                         f"{want[1]} for size {size}. Got {_torch_size(theta)}.")
    if min(size) <= 0:   # (messages print `size` as given: a tuple stays a tuple)
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    size = list(size)
    n = size[0]
    spatial = size[2:][::-1]                       # W, H[, D]: x first
    axes = [_base(s, align_corners, theta) for s in spatial]
    out_shape = tuple(size[2:])
    parts = []
    for d, ax in enumerate(axes):
        shape = [1] * nd
        shape[nd - 1 - d] = spatial[d]
        parts.append(ax.reshape(shape).expand(out_shape))
    parts.append(ones(out_shape, dtype=theta.dtype))
    base = stack(parts, -1).reshape(1, -1, nd + 1).expand(n, -1, nd + 1)
    grid = base @ theta.transpose(1, 2)
    return grid.reshape((n,) + out_shape + (nd,))


def _torch_size(t):
    return "torch.Size([" + ", ".join(map(str, t.shape)) + "])"


grid_sample.__ember_parser__ = _GRID_SAMPLER
