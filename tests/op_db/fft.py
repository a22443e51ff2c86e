"""Op-table entries for ember.fft (ops/fft.py): one entry per transform on real input and one
on complex input (built from real and imaginary float arrays, so float64 gradcheck and
gradgradcheck cover complex128 in both components). Complex results are compared through
view_as_real; NumPy's fft is the independent reference where it has the function."""
import numpy as np

from . import OpInfo, Sample, make_array

ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
REAL_INPUT = ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn",
              "ifftn", "rfftn", "ihfftn", "irfft", "hfft", "irfft2", "hfft2", "irfftn",
              "hfftn")
COMPLEX_INPUT = ("fft", "ifft", "irfft", "hfft", "fft2", "ifft2", "irfft2", "hfft2", "fftn",
                 "ifftn", "irfftn", "hfftn")


def _as_real(m, y):
    if y.is_complex():
        return m.view_as_real(y.resolve_conj())
    return y


def _np_as_real(y):
    return np.stack([y.real, y.imag], -1) if np.iscomplexobj(y) else y


def _call(m, name, x, kwargs):
    return _as_real(m, getattr(m.fft, name)(x, **kwargs))


def _numpy_ref(name):
    """np.fft's function with torch's argument names (dim -> axis/axes)."""
    fn = getattr(np.fft, name, None)
    if fn is None or name in ("hfft2", "ihfft2", "hfftn", "ihfftn"):
        return None

    def ref(*arrays, **kwargs):
        x = arrays[0] if len(arrays) == 1 else arrays[0] + 1j * arrays[1]
        if x.dtype.kind in "iu":
            x = x.astype(np.float32)
        k = dict(kwargs)
        if name in ONE_D:
            if "dim" in k:
                k["axis"] = k.pop("dim")
        else:
            if "dim" in k:
                d = k.pop("dim")
                k["axes"] = (d,) if isinstance(d, int) else d
            elif name.endswith("2"):
                k["axes"] = (-2, -1)
            elif "s" in k:
                k["axes"] = tuple(range(-len(k["s"]), 0))
        return _np_as_real(fn(x, **k))
    return ref


def _kwarg_sets(name):
    if name in ONE_D:
        return [((5,), {}), ((3, 4), {"n": 7}), ((4, 3), {"n": 3, "dim": 0, "norm": "ortho"}),
                ((2, 5), {"norm": "forward"}), ((3, 8), {"noncontiguous": True})]
    if name.endswith("2"):
        return [((3, 4), {}), ((2, 3, 4), {"s": (3, 5), "norm": "ortho"}),
                ((3, 4, 2), {"dim": (0, 1), "norm": "forward"})]
    return [((3, 4), {}), ((2, 3, 4), {"dim": (0, 2), "norm": "forward"}),
            ((3, 4), {"s": (2, 5), "norm": "ortho"}), ((2, 3, 4), {"dim": 1}),
            ((3, 8), {"noncontiguous": True})]


def _array(rng, shape, dtype, noncontiguous):
    return make_array(rng, shape, dtype, noncontiguous=noncontiguous)


def _samples(name, parts):
    def samples(rng, dtype):
        out = []
        for shape, kwargs in _kwarg_sets(name):
            kwargs = dict(kwargs)
            nc = kwargs.pop("noncontiguous", False)
            if nc:
                shape = shape[:-1] + (shape[-1] // 2,)
            out.append(Sample(tuple(_array(rng, shape, dtype, nc) for _ in range(parts)),
                              kwargs))
        return out
    return samples


def _real_entry(name):
    return OpInfo(f"fft.{name}", lambda m, x, **k: _call(m, name, x, k), _numpy_ref(name),
                  _samples(name, 1), dtypes=("int64", "float32", "float64"), atol=1e-4,
                  rtol=1e-5)


def _complex_entry(name):
    return OpInfo(f"fft.{name}_complex",
                  lambda m, re, im, **k: _call(m, name, m.complex(re, im), k),
                  _numpy_ref(name), _samples(name, 2), dtypes=("float32", "float64"),
                  atol=1e-4, rtol=1e-5)


OPS = [_real_entry(n) for n in REAL_INPUT] + [_complex_entry(n) for n in COMPLEX_INPUT]
