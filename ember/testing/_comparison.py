"""assert_close: PyTorch's comparison rules and messages.

Inputs are matched pairwise as PyTorch does (None, booleans, numbers, tensor-likes; sequences
and mappings recursively, the failing item named in the message). Tensors must agree in shape
and, unless switched off, device, dtype and strides; values are then promoted to a common
dtype and compared by |actual - expected| <= atol + rtol * |expected|. The mismatch statistics
are computed in the compared dtype, as PyTorch computes them, so the printed differences are
the same numbers.
"""
import cmath
import collections.abc
import warnings

import numpy as np

import ember

# (rtol, atol) per dtype; other dtypes (integers, bool) compare exactly.
_DTYPE_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5),
                     "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                     "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _ErrorMeta(Exception):
    """A failure to report: its type, message and the item (path) it occurred at."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              f"{''.join(str([item]) for item in self.id)}")
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """This pair kind cannot handle the inputs; the next kind is tried."""


def _tolerances(dtype_names, rtol, atol, id=(), precisions=None):
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                         f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    table = precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[table.get(name, (0.0, 0.0)) for name in dtype_names])
    return max(rtols), max(atols)


# ---------------------------------------------------------------------- messages
def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None else
               f"Greatest {kind} difference: {diff} at index {idx}")
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _tensor_msg(actual, expected, matches, rtol, atol):
    """Mismatch count and the greatest differences, computed as PyTorch does: integers in
    int64 (their relative difference a default-dtype true division), others in their dtype."""
    n = matches.size
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.ravel(), expected.ravel(), matches.ravel()
    if a.dtype.kind in "biu":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[m] = 0
        if abs_diff.dtype.kind in "iu":
            rel_diff = abs_diff.astype(ember.get_default_dtype().np) / \
                np.abs(e).astype(ember.get_default_dtype().np)
        else:
            rel_diff = abs_diff / np.abs(e)
    rel_diff[m] = 0

    def greatest(d):
        i = int(np.argmax(d)) if not np.isnan(d).any() else int(np.argmax(np.isnan(d)))
        return d[i].item(), np.unravel_index(i, matches.shape) if matches.shape else ()
    (abs_max, abs_idx), (rel_max, rel_idx) = greatest(abs_diff), greatest(rel_diff)
    def to_tuple(idx):
        return tuple(int(i) for i in idx)
    return _mismatch_msg("Tensor-likes", extra, abs_max, to_tuple(abs_idx), atol, rel_max,
                         to_tuple(rel_idx), rtol)


# ---------------------------------------------------------------------- pairs
def _none_pair(actual, expected, id, **options):
    if not (actual is None or expected is None):
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _ErrorMeta(AssertionError, f"None mismatch: {actual} is not {expected}", id)


def _bool_pair(actual, expected, id, **options):
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    if bool(actual) is not bool(expected):
        raise _ErrorMeta(AssertionError,
                         f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", id)


def _number_pair(actual, expected, id, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **options):
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol,
                             id)
    # NOTE: assert_close passes check_dtype on to numbers too: int 1 and float 1.0 differ.
    if check_dtype and type(actual) is not type(expected):
        raise _ErrorMeta(AssertionError, "The (d)types do not match: "
                         f"{type(actual)} != {type(expected)}.", id)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _ErrorMeta(AssertionError, _scalar_msg(actual, expected, rtol, atol), id)


def _as_tensor(x):
    if isinstance(x, ember.Tensor):
        return x
    try:
        return ember.as_tensor(x)
    except Exception:
        raise _Unsupported from None


def _tensor_pair(actual, expected, id, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **options):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype.name, expected.dtype.name], rtol, atol, id)

    def mismatch(attribute, a, b):
        raise _ErrorMeta(AssertionError, f"The values for attribute '{attribute}' do not "
                         f"match: {a} != {b}.", id)
    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    if actual.dtype != expected.dtype:
        common = ember.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    a, e = (np.asarray(t.detach().cpu().resolve_conj()._data) for t in (actual, expected))
    if a.dtype.name == "bfloat16":   # (compared in float32; differences kept in bfloat16)
        matches = _isclose(a.astype(np.float32), e.astype(np.float32), rtol, atol, equal_nan)
    else:
        matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.shape == ():
        msg = _scalar_msg(a.item(), e.item(), rtol, atol)
    else:
        msg = _tensor_msg(a, e, matches, rtol, atol)
    raise _ErrorMeta(AssertionError, msg, id)


def _isclose(a, e, rtol, atol, equal_nan):
    """torch.isclose: |a - e| <= atol + rtol * |e|, equal infinities close, nan by flag."""
    if a.dtype.kind in "biu" and rtol == 0 and atol == 0:
        return a == e
    with np.errstate(all="ignore"):
        close = a == e
        finite = np.isfinite(a) & np.isfinite(e)
        diff = np.abs(a.astype(np.result_type(a, np.float64)) - e)
        close |= finite & (diff <= atol + rtol * np.abs(e))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _compare(actual, expected, id, options):
    sequence, mapping = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(actual, sequence) and not isinstance(actual, str) and \
            isinstance(expected, sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, "The length of the sequences mismatch: "
                             f"{len(actual)} != {len(expected)}", id)
        for i in range(len(actual)):
            _compare(actual[i], expected[i], (*id, i), options)
        return
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, expected_keys = set(actual.keys()), set(expected.keys())
        if keys != expected_keys:
            raise _ErrorMeta(AssertionError, "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: "
                             f"{sorted(expected_keys - keys)}\nAdditional keys in the actual "
                             f"mapping: {sorted(keys - expected_keys)}", id)
        try:
            keys = sorted(keys)
        except Exception:
            pass
        for key in keys:
            _compare(actual[key], expected[key], (*id, key), options)
        return
    for pair in _PAIRS:
        try:
            return pair(actual, expected, id, **options)
        except _Unsupported:
            continue
    raise _ErrorMeta(TypeError, "No comparison pair was able to handle inputs of type "
                     f"{type(actual)} and {type(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that `actual` and `expected` are close (see torch.testing.assert_close)."""
    __tracebackhide__ = True
    try:
        _compare(actual, expected, (), dict(
            allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
            check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
            check_stride=check_stride))
    except _ErrorMeta as meta:
        raise meta.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since PyTorch 1.12: assert_close with looser default tolerances, no dtype
    check, and non-tensor inputs converted to the actual tensor's dtype."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype.name, expected.dtype.name], None, None,
                                 precisions={"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                                             "float64": (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
