"""Disagreements with torch that the differential fuzzer (tests/fuzz) found and ember fixed:
each call runs on torch and on ember; both must raise the same exception type or return the
same dtype, shape and values."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, call):
    try:
        out = call(lib)
    except Exception as exc:   # the exception's kind is what is compared
        for cls in type(exc).__mro__:
            if cls.__module__ == "builtins":
                return ("raise", cls.__name__)
    outs = out if isinstance(out, tuple) else (out,)
    return ("ok",) + tuple((str(o.dtype).split(".")[-1], tuple(o.shape),
                            np.asarray(o.detach().to(lib.complex128).tolist()).round(6).tolist())
                           for o in outs)


def _t(lib, values, dtype="float32"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


def _low_rank_batch(lib):
    """Four 3 x 5 matrices: random, zero, rank 2, random (float64)."""
    a = np.random.default_rng(0).standard_normal((4, 3, 5))
    a[1] = 0
    a[2, 2] = a[2, 0]
    return lib.tensor(a)


def _assigned(tensor, key, value):
    tensor[key] = value
    return tensor


CASES = {
    # addbmm/baddbmm read the batches' sizes (IndexError) before checking their rank
    "addbmm 1-d batch": lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(3), lib.ones(2, 3, 4)),
    "addbmm 0-d batch": lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(()), lib.ones(3)),
    "addbmm 2-d batch": lambda lib: lib.addbmm(lib.ones(()), lib.ones(2, 3), lib.ones(2, 3, 4)),
    "baddbmm 0-d batch1": lambda lib: lib.baddbmm(lib.ones(2, 3), lib.ones(()), lib.ones(3)),
    "baddbmm expand first": lambda lib: lib.baddbmm(lib.ones(3), lib.ones(2, 3),
                                                    lib.ones(2, 3, 4)),
    "baddbmm ok": lambda lib: lib.baddbmm(lib.ones(4), lib.ones(2, 3, 5), lib.ones(2, 5, 4)),
    "Tensor.addbmm_": lambda lib: lib.ones(2, 3).addbmm_(lib.ones(3), lib.ones(2, 3, 4)),
    # in-place abs cannot store |z| into a complex tensor
    "abs_ complex": lambda lib: lib.abs_(_t(lib, [1 + 1j], "complex64")),
    "absolute_ complex": lambda lib: _t(lib, [1 + 1j], "complex64").absolute_(),
    "abs_ real": lambda lib: lib.abs_(_t(lib, [-1.5])),
    # a NumPy integer diagonal is an int, not an int8 that wraps
    "tril uint8 diagonal": lambda lib: lib.tril(lib.ones(3, 3, dtype=lib.int16), np.uint8(3)),
    "triu int64 diagonal": lambda lib: lib.triu(lib.ones(3, 3), np.int64(-1)),
    # cummax/cummin of an empty tensor do not look at dim
    "cummax empty": lambda lib: lib.cummax(lib.ones(0, 3), 3),
    "cummin empty": lambda lib: lib.cummin(lib.ones(0, 3), -7),
    "cummax bad dim": lambda lib: lib.cummax(lib.ones(2, 3), 3),
    # ldexp with a complex exponent
    "ldexp complex": lambda lib: lib.ldexp(_t(lib, [1 + 1j], "complex128"),
                                           _t(lib, -0.3 - 0.03j, "complex64")),
    # matrix_norm wraps its dims (out of range is IndexError, not a silent modulo)
    "matrix_norm dim out of range": lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3),
                                                                        dim=(5, 0)),
    "matrix_norm same dims": lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), dim=(0, -2)),
    "nuclear_norm int dim": lambda lib: lib.nuclear_norm(lib.ones(2, 2, 2, 2), 3),
    # clamp: Number bounds never promote a floating input; complex bounds as torch reads them
    "clamp float16 complex64 bound": lambda lib: lib.clamp(_t(lib, [0, 1, 2], "float16"),
                                                           np.complex64(2j)),
    "clamp float complex max": lambda lib: lib.clamp(_t(lib, [0, 1, 2]), max=1 + 2j),
    "clamp float zero-imag min": lambda lib: lib.clamp(_t(lib, [0, 1, 2]), 1 + 0j),
    "clamp_min python complex": lambda lib: lib.clamp_min(_t(lib, [0, 1, 2]), 0j),
    "clamp_max numpy complex64": lambda lib: lib.clamp_max(_t(lib, [0, 1, 2]),
                                                           np.complex64(1 + 5j)),
    "clamp int complex bound": lambda lib: lib.clamp(_t(lib, [0, 1, 2], "int64"), 1 + 0j),
    "clamp int float bound": lambda lib: lib.clamp(_t(lib, [0, 1, 2], "int64"), 1.5),
    "clamp bool scalar": lambda lib: lib.clamp(_t(lib, [True, False], "bool"), True),
    "clamp bool scalars": lambda lib: lib.clamp(_t(lib, [True, False], "bool"), True, False),
    "clamp bool tensor min": lambda lib: lib.clamp(_t(lib, [True, False], "bool"),
                                                   _t(lib, True, "bool")),
    # var/std read correction as a double
    "std complex correction": lambda lib: lib.std(lib.ones(3), correction=1j),
    "var zero-imag correction": lambda lib: lib.var(_t(lib, [1, 2, 4]), correction=1 + 0j),
    # cross: no promotion, no bool kernel, a dimension of size 3 needed without dim
    "cross mixed dtypes": lambda lib: lib.cross(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.int32),
                                                dim=1),
    "linalg.cross float64 float32": lambda lib: lib.linalg.cross(
        lib.ones(3, dtype=lib.float64), lib.ones(3)),
    "cross bool": lambda lib: lib.cross(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool),
                                        dim=0),
    "cross no size-3 dim": lambda lib: lib.cross(lib.ones(2, 2), lib.ones(2, 2)),
    # the legacy cholesky returns an empty input before its rank check
    "cholesky empty 1-d": lambda lib: lib.cholesky(lib.ones(0)),
    "cholesky 1-d": lambda lib: lib.cholesky(lib.ones(3)),
    # lobpcg: PyTorch's Python code's checks, in its order
    "lobpcg non-tensor A": lambda lib: lib.lobpcg([1.0]),
    "lobpcg non-tensor B": lambda lib: lib.lobpcg(lib.eye(6), B=3),
    "lobpcg 1-d A": lambda lib: lib.lobpcg(lib.ones(3)),
    "lobpcg non-square A": lambda lib: lib.lobpcg(lib.ones(6, 5)),
    "lobpcg non-square A with grad": lambda lib: lib.lobpcg(
        lib.ones(1, 1, 1, 2, requires_grad=True)),
    "lobpcg too many pairs": lambda lib: lib.lobpcg(lib.eye(5), k=2),
    "lobpcg n not an int": lambda lib: lib.lobpcg(lib.eye(9), n=1.5),
    "lobpcg bad ortho params": lambda lib: lib.lobpcg(lib.eye(9), ortho_iparams=[1]),
    # mT/mH of a 0-d tensor: deprecated identity in PyTorch 2.13
    "mT 0-d": lambda lib: lib.tensor(2.0).mT,
    "mH 1-d": lambda lib: lib.ones(3).mH,
    "adjoint 1-d": lambda lib: lib.ones(3).adjoint(),
    # complex(): shapes that do not broadcast are a RuntimeError (fft's complex samples)
    "complex no broadcast": lambda lib: lib.complex(lib.ones(4, 3), lib.ones(0)),
    # triangular_solve / cholesky_solve / cholesky_inverse: PyTorch's checks, in its order
    "triangular_solve 1-d b": lambda lib: lib.triangular_solve(lib.ones(3), lib.eye(3)),
    "triangular_solve dtypes": lambda lib: lib.triangular_solve(
        lib.ones(3, 2, dtype=lib.float64), lib.eye(3)),
    "triangular_solve non-square": lambda lib: lib.triangular_solve(lib.ones(2, 2),
                                                                    lib.ones(2, 3)),
    "triangular_solve sizes": lambda lib: lib.triangular_solve(lib.ones(2, 2), lib.eye(3)),
    "triangular_solve batches": lambda lib: lib.triangular_solve(lib.ones(2, 3, 1),
                                                                 lib.eye(3).expand(4, 3, 3)),
    "triangular_solve int": lambda lib: lib.triangular_solve(
        lib.ones(3, 1, dtype=lib.int64), lib.eye(3, dtype=lib.int64)),
    "triangular_solve ok": lambda lib: lib.triangular_solve(lib.ones(2, 3, 1),
                                                            lib.eye(3) * 2)[0],
    "cholesky_solve 0-d b": lambda lib: lib.cholesky_solve(lib.ones(()), lib.eye(3)),
    "cholesky_solve 1-d u": lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(3)),
    "cholesky_solve half": lambda lib: lib.cholesky_solve(
        lib.ones(3, 1, dtype=lib.float16), lib.eye(3, dtype=lib.float16)),
    "cholesky_inverse non-square": lambda lib: lib.cholesky_inverse(lib.ones(2, 3)),
    "cholesky_inverse 1-d": lambda lib: lib.cholesky_inverse(lib.ones(3)),
    "cholesky_inverse int": lambda lib: lib.cholesky_inverse(lib.eye(3, dtype=lib.int64)),
    "solve_triangular sizes": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3), lib.ones(2, 3), upper=True),
    "solve_triangular right sizes": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3), lib.ones(3, 2), upper=True, left=False),
    "solve_triangular batches": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3).expand(2, 3, 3), lib.ones(4, 3, 1), upper=False),
    # torch.norm hands its calls to linalg.vector_norm/matrix_norm, with their checks
    "norm non-tensor": lambda lib: lib.norm([1.0, 2.0]),
    "norm tensor order": lambda lib: lib.norm(lib.ones(3), lib.tensor(2.0)),
    "norm keepdim dtype": lambda lib: lib.norm(lib.ones(3), 2, 0, lib.float32),
    "norm fro dims": lambda lib: lib.norm(lib.ones(2, 3, 4), "fro", (0, 2)),
    "norm nuc one dim": lambda lib: lib.norm(lib.ones(3, 4), "nuc", 0),
    "norm complex order": lambda lib: lib.norm(lib.ones(3), 1j),
    "norm 0-d dim": lambda lib: lib.norm(lib.tensor(-2.0), 2, 0),
    "vector_norm narrowing dtype": lambda lib: lib.linalg.vector_norm(
        lib.ones(3, dtype=lib.float64), dtype=lib.float32),
    "vector_norm complex dtype of real": lambda lib: lib.linalg.vector_norm(
        lib.ones(3), dtype=lib.complex64),
    "vector_norm real dtype of complex": lambda lib: lib.linalg.vector_norm(
        lib.ones(3, dtype=lib.complex64), dtype=lib.float64),
    "vector_norm int dtype": lambda lib: lib.linalg.vector_norm(lib.ones(3), dtype=lib.int64),
    "vector_norm complex to complex128": lambda lib: lib.linalg.vector_norm(
        lib.ones(3, dtype=lib.complex64), dtype=lib.complex128),
    "matrix_norm one dim": lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), dim=(0,),
                                                              dtype=lib.int64),
    # unique/unique_consecutive: boolean_dispatch's truth tests, the builtin's parser, then
    # the kernel's dtype and dim checks, in PyTorch's order
    "unique tensor flag": lambda lib: lib.unique(lib.ones(3), return_counts=lib.ones(3)),
    "unique one-element tensor flag": lambda lib: lib.unique(lib.ones(3),
                                                             return_counts=lib.ones(1)),
    "unique int flag": lambda lib: lib.unique(lib.ones(3), return_inverse=1, dim=0),
    "unique float dim": lambda lib: lib.unique(lib.ones(3), dim=1.5),
    "unique complex": lambda lib: lib.unique(lib.ones(3, dtype=lib.complex64), dim=5),
    "unique 0-d dim": lambda lib: lib.unique(lib.tensor(1.0), dim=0),
    "unique unselected empty dim": lambda lib: lib.unique(lib.ones(0, 3), dim=1),
    "unique_consecutive numpy bool": lambda lib: lib.unique_consecutive(
        lib.ones(3), return_inverse=np.bool_(True)),
    "unique_consecutive empty dim": lambda lib: lib.unique_consecutive(
        lib.ones(0, 3), return_inverse=True, return_counts=True, dim=0),
    "unique_consecutive empty 1-d": lambda lib: lib.unique_consecutive(lib.ones(0), dim=0),
    "unique_consecutive dim": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1], [1, 1], [2, 0]]), return_counts=True, dim=0),
    # cdist: compute_mode first, then the builtin's argument types, then the kernel's checks
    "cdist bool x1": lambda lib: lib.cdist(True, lib.ones(2, 3)),
    "cdist complex p": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(1, 3), 1j),
    "cdist bad mode first": lambda lib: lib.cdist(None, lib.ones(2, 3), 2.0, "bogus"),
    "cdist 0-d tensor p": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(1, 3) * 2,
                                                lib.tensor(1.0)),
    # min/max/amin/amax/aminmax/median/mode/kthvalue: dtype coverage as PyTorch's kernels
    "max complex": lambda lib: lib.ones(2, 3, dtype=lib.complex64).max(),
    "min complex dim": lambda lib: lib.ones(2, 3, dtype=lib.complex64).min(0),
    "max complex empty dim": lambda lib: lib.ones(0, 3, dtype=lib.complex64).max(0),
    "amax complex": lambda lib: lib.ones(2, 3, dtype=lib.complex128).amax(),
    "aminmax complex": lambda lib: lib.ones(3, dtype=lib.complex64).aminmax(),
    "aminmax 0-d bad dim": lambda lib: lib.tensor(1.0).aminmax(dim=3),
    "median int empty": lambda lib: lib.ones(0, dtype=lib.int64).median(),
    "nanmedian int32 empty": lambda lib: lib.ones(0, dtype=lib.int32).nanmedian(),
    "median bool empty": lambda lib: lib.ones(0, dtype=lib.bool).median(),
    "median bool": lambda lib: lib.ones(3, dtype=lib.bool).median(),
    "median complex dim": lambda lib: lib.ones(3, dtype=lib.complex64).median(0),
    "mode complex": lambda lib: lib.ones(3, dtype=lib.complex64).mode(),
    "mode complex 0-d": lambda lib: lib.tensor(1j).mode(),
    "kthvalue bool": lambda lib: lib.ones(3, dtype=lib.bool).kthvalue(1),
    "kthvalue empty dim": lambda lib: lib.ones(2, 0).kthvalue(1),
    # bernoulli's dtype dispatch before its range check; cauchy_'s dtype message
    "bernoulli int input": lambda lib: lib.bernoulli(lib.tensor([0, 1, 5])),
    "bernoulli complex input": lambda lib: lib.bernoulli(lib.zeros(3, dtype=lib.complex128)),
    "bernoulli_ int p": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0, 1, 1])),
    "bernoulli empty int": lambda lib: lib.bernoulli(lib.zeros(0, dtype=lib.int32)),
    "cauchy_ int": lambda lib: lib.zeros(3, dtype=lib.int16).cauchy_(),
    # index_select/index_add/index_copy/index_fill: PyTorch's check order
    "index_select 2-d float index": lambda lib: lib.index_select(lib.ones(3), 0, lib.ones(2, 2)),
    "index_select scalar many": lambda lib: lib.index_select(lib.tensor(1.0), 0,
                                                             lib.tensor([0, 0, 0])),
    "index_select empty dim": lambda lib: lib.index_select(lib.ones(0, 3), 0, lib.tensor([0])),
    "index_add 3-d float index": lambda lib: lib.ones(4).index_add(0, lib.ones(2, 3, 4),
                                                                   lib.ones(2)),
    "index_copy 2-d index": lambda lib: lib.ones(3, 4).index_copy(0, lib.ones(1, 3),
                                                                  lib.ones(3, 4)),
    "index_copy scalar source": lambda lib: lib.ones(3).index_copy(
        0, lib.tensor([0, 1, 2]), lib.tensor(2.0, dtype=lib.float64)),
    "index_copy slice shapes": lambda lib: lib.tensor(1.0).index_copy(
        0, lib.tensor([0]), lib.ones(2, 3)),
    "index_copy count": lambda lib: lib.ones(3, 4).index_copy(0, lib.tensor([0, 1]),
                                                              lib.ones(3, 4)),
    "index_fill tensor value rank": lambda lib: lib.ones(3).index_fill(
        0, lib.tensor([0], dtype=lib.int32), lib.ones(2)),
    "index_fill dim first": lambda lib: lib.ones(2, 3).index_fill(3, lib.ones(0, 3,
                                                                           dtype=lib.int64), -4),
    # logaddexp of complex tensors (NumPy has none)
    "logaddexp complex": lambda lib: lib.logaddexp(
        lib.tensor([1 + 2j, -3 + 0.5j, float("-inf") + 1j, 0j]),
        lib.tensor([3 - 1j, 2 + 2j, float("-inf") + 0j, -1 + 4j])),
    "logaddexp complex and real": lambda lib: lib.logaddexp(
        lib.tensor([1 + 2j], dtype=lib.complex128), lib.tensor([0.5, -2.0])),
    # flatten of a 0-d tensor checks its dims; splits by 0 sections; split of a 0-d tensor
    "flatten 0-d bad dim": lambda lib: lib.flatten(lib.tensor(1.0), -4),
    "flatten 0-d": lambda lib: lib.tensor(1.0).flatten(-1, 0),
    "vsplit zero sections": lambda lib: lib.ones(4, 2).vsplit(0),
    "hsplit zero sections": lambda lib: lib.ones(3).hsplit(0),
    "split_with_sizes 0-d": lambda lib: lib.tensor(1.0).split_with_sizes([1]),
    # einsum: operand types after unpacking a list, repeated subscripts of unequal sizes
    "einsum int operand": lambda lib: lib.einsum("ij,jk->ik", -3, lib.ones(4, 2)),
    "einsum empty operand list": lambda lib: lib.einsum("bogus", []),
    "einsum list operands": lambda lib: lib.einsum("ij,jk->ik", [lib.ones(2, 3),
                                                                  lib.ones(3, 2)]),
    "einsum repeated subscript sizes": lambda lib: lib.einsum("ii", lib.ones(1, 3)),
    # x.ipu()/xpu()/mtia(): the parser's checks and the device lookup come first
    "ipu list device": lambda lib: lib.ones(2).ipu([1]),
    "xpu tensor non_blocking": lambda lib: lib.ones(2).xpu(non_blocking=lib.ones(2)),
    "mtia cpu device": lambda lib: lib.ones(2).mtia("cpu"),
    "xpu index device": lambda lib: lib.ones(2).xpu(0),
    "xpu": lambda lib: lib.ones(2).xpu(),
    # set_: PyTorch's five overloads, the Tensor one with a geometry too
    "set_ tensor bool": lambda lib: lib.zeros(2).set_(lib.ones(3), True),
    "set_ offset without size": lambda lib: lib.zeros(2).set_(lib.ones(3), 1),
    "set_ size keyword only": lambda lib: lib.zeros(2).set_(lib.ones(3), size=(2,)),
    "set_ int source": lambda lib: lib.zeros(2).set_(1),
    "set_ tensor geometry": lambda lib: lib.zeros(2).set_(lib.arange(6.0), 1, (2, 2), (2, 1)),
    "set_ other dtype geometry": lambda lib: lib.zeros(2).set_(
        lib.ones(3, dtype=lib.float64), 1, (2,)),
    "set_ other dtype": lambda lib: lib.zeros(2).set_(lib.ones(3, dtype=lib.float64)),
    # stft/istft: PyTorch's Python code (int(n_fft // 2), input.dim()) and Tensor.istft
    # through torch.istft's parser
    "stft tensor n_fft": lambda lib: lib.stft(lib.ones(16), lib.ones(3), return_complex=True),
    "stft non-tensor centred": lambda lib: lib.stft([1.0, 2.0], 4, return_complex=True),
    "stft align_to_window first": lambda lib: lib.stft(3, 4, align_to_window=True),
    "Tensor.istft tensor n_fft": lambda lib: lib.ones(3, 4, dtype=lib.complex64).istft(
        lib.ones(2)),
    # complex normal_/uniform_ fill the real view, on PyTorch's random stream
    "randn complex64": lambda lib: (lib.manual_seed(3), lib.randn(4, 5, dtype=lib.complex64))[1],
    "normal_ complex128": lambda lib: (lib.manual_seed(1),
                                       lib.zeros(20, dtype=lib.complex128).normal_(2, 3))[1],
    "rand complex64": lambda lib: (lib.manual_seed(2), lib.rand(3, dtype=lib.complex64))[1],
    # svd_lowrank/pca_lowrank: A.shape first, a float32 sketch for integer A, a bool q
    "pca_lowrank non-tensor": lambda lib: lib.pca_lowrank(lib.uint8),
    "svd_lowrank int input": lambda lib: lib.svd_lowrank(lib.ones(3, 2, dtype=lib.int16)),
    "svd_lowrank bool q": lambda lib: lib.svd_lowrank(lib.ones(4, 3), True)[1],
    # tensordot: PyTorch's Python code reads dims first, then its builtin's checks; a
    # contracted dimension of size 1 broadcasts
    "tensordot dims unpack": lambda lib: lib.tensordot(lib.ones(2), lib.ones(2), [0, 1, 2]),
    "tensordot dims tensor rows": lambda lib: lib.tensordot(lib.ones(2), lib.ones(2),
                                                            lib.ones(3, 1)),
    "tensordot non-tensor": lambda lib: lib.tensordot(None, lib.ones(2), ([0], [0])),
    "tensordot int dim lists": lambda lib: lib.tensordot(lib.ones(2), lib.ones(2), (0, 0)),
    "tensordot dtype before dims": lambda lib: lib.tensordot(
        lib.ones(2), lib.ones(2, dtype=lib.float64), ([3], [0])),
    "tensordot size-1 broadcast": lambda lib: lib.tensordot(
        lib.arange(6.0).reshape(2, 3), lib.arange(4.0).reshape(1, 4), ([1], [0])),
    "tensordot size-1 broadcast other": lambda lib: lib.tensordot(
        lib.arange(2.0).reshape(2, 1), lib.arange(12.0).reshape(3, 4), ([1], [0])),
    # torch.lu: get_infos's truth test, then _lu_with_info's parser, then the kernel
    "lu tensor get_infos": lambda lib: lib.lu(None, get_infos=lib.ones(2, 3)),
    "lu str pivot": lambda lib: lib.ones(3, 3).lu("sum"),
    "lu non-tensor": lambda lib: lib.lu(3),
    # broadcast_tensors(), logcumsumexp's dim first, cummax of complex, unflatten's sizes
    "broadcast_tensors none": lambda lib: lib.broadcast_tensors(),
    "logcumsumexp int bad dim": lambda lib: lib.logcumsumexp(lib.ones(3, dtype=lib.int64), 3),
    "cummax complex": lambda lib: lib.cummax(lib.ones(3, dtype=lib.complex64), 0),
    "cummax complex 0-d": lambda lib: lib.cummax(lib.tensor(1j), 0),
    "unflatten float sizes": lambda lib: lib.unflatten(lib.ones(6), 5, [2.0, 3.0]),
    "unflatten empty sizes": lambda lib: lib.ones(6).unflatten(0, ()),
    # expand_copy of an empty size; histc's complex bounds read as doubles
    "expand_copy empty size": lambda lib: lib.expand_copy(lib.ones(2, 3), ()),
    "expand_copy 0-d empty size": lambda lib: lib.expand_copy(lib.tensor(1.0), ()),
    "histc complex max": lambda lib: lib.ones(3).histc(max=1.5 - 0.5j),
    "histc zero-imag max": lambda lib: lib.ones(3).histc(bins=3, max=2 + 0j),
    # the deprecated non-inplace resize: the Python product of the sizes as given
    "resize tensor size": lambda lib: lib.ones(2, 3).resize(lib.ones(3)),
    "resize float size": lambda lib: lib.ones(2, 3).resize(2, 3.0),
    "resize count": lambda lib: lib.ones(2, 3).resize(4, 2),
    "resize ok": lambda lib: lib.ones(2, 3).resize(3, 2),
    "resize_as": lambda lib: lib.ones(2, 3).resize_as(lib.ones(3, 2)),
    # split with a tensor split_size: int() of it first, as PyTorch's Python method
    "split inf tensor size": lambda lib: lib.ones(0, 3).split(lib.tensor([float("inf")])),
    "split negative tensor size": lambda lib: lib.split(lib.ones(0, 3), lib.tensor(-1.0)),
    "split float tensor size": lambda lib: lib.ones(5).split(lib.tensor(2.7)),
    # gradient: spacing length, uint8, then dims (wrapped, not taken modulo; no repeats)
    "gradient dim out of range": lambda lib: lib.gradient(lib.ones(2, 3), dim=3),
    "gradient repeated dim": lambda lib: lib.gradient(lib.ones(4), dim=[0, 0]),
    "gradient uint8": lambda lib: lib.gradient(lib.ones(4, dtype=lib.uint8), dim=1),
    "gradient spacing None": lambda lib: lib.gradient(lib.arange(4.0) ** 2, spacing=None),
    "gradient spacing length": lambda lib: lib.gradient(lib.ones(4), spacing=(1.0, 2.0),
                                                        dim=3),
    # map2_: requires_grad first, then both dtypes, then broadcasting
    "map2_ grad before dtype": lambda lib: lib.ones(3).map2_(
        lib.ones(3, dtype=lib.float64, requires_grad=True), lib.ones(3), max),
    "map2_ y dtype before x shape": lambda lib: lib.ones(2, 3, 4).map2_(
        lib.ones(2, 3), lib.ones(3, 3, dtype=lib.bfloat16), max),
    # norm_except_dim composed as PyTorch's (its errors and dtypes)
    "norm_except_dim dim out of range": lambda lib: lib.norm_except_dim(lib.ones(3, 1), 2, 2),
    "norm_except_dim int": lambda lib: lib.norm_except_dim(lib.ones(4, dtype=lib.int64)),
    "norm_except_dim 0-d": lambda lib: lib.norm_except_dim(lib.tensor(2.0)),
    "norm_except_dim empty": lambda lib: lib.norm_except_dim(lib.ones(0, 3)),
    "norm_except_dim middle": lambda lib: lib.norm_except_dim(
        lib.arange(24.0).reshape(2, 3, 4), 3, 1),
    "meshgrid tensor indexing": lambda lib: lib.meshgrid(indexing=lib.ones(2)),
    # nanmean's integral dtype=, searchsorted's 0-d boundaries, torch.split of a non-tensor
    "nanmean int dtype": lambda lib: lib.nanmean(lib.ones(3), dtype=lib.int64),
    "searchsorted 0-d boundaries": lambda lib: lib.searchsorted(lib.tensor(1.0), lib.ones(3)),
    "split non-tensor": lambda lib: lib.split(3, 1),
    # F.embedding: torch's Python steps (padding_idx compared with 0, the renorm) before its
    # builtin's parser; torch.embedding is the builtin (weight first)
    "embedding tensor padding_idx": lambda lib: lib.nn.functional.embedding(
        lib.ones(3, dtype=lib.int64), lib.ones(4, 2), lib.ones(2)),
    "embedding non-tensor input max_norm": lambda lib: lib.nn.functional.embedding(
        np.float32(3.0), lib.ones(4, 2), max_norm=1.0),
    "embedding 3-d weight max_norm": lambda lib: lib.nn.functional.embedding(
        lib.ones(2, dtype=lib.int64), lib.ones(2, 3, 4), max_norm=1.0),
    "embedding 1-d weight": lambda lib: lib.nn.functional.embedding(
        lib.ones(2, dtype=lib.int64), lib.ones(4)),
    "embedding weight first": lambda lib: lib.embedding(
        lib.arange(8.0).reshape(4, 2), lib.tensor([3, 1])),
    "embedding bf16 indices": lambda lib: lib.embedding(lib.ones(4, 2),
                                                        lib.ones(3, dtype=lib.bfloat16)),
    "embedding_renorm_ float indices": lambda lib: lib.embedding_renorm_(
        lib.ones(3, 2), lib.ones(1), 1.0, 2.0),
    "embedding max_norm": lambda lib: lib.nn.functional.embedding(
        lib.tensor([0, 2]), lib.arange(8.0).reshape(4, 2), max_norm=1.5),
    # F.fold/F.unfold: torch's _pair (an iterable becomes a tuple), the builtin's parser, the
    # sizes' lengths, their bounds, then the input's shape
    "fold empty output_size": lambda lib: lib.nn.functional.fold(lib.ones(3, 1), (), (1, 1)),
    "fold empty tensor kernel": lambda lib: lib.nn.functional.fold(
        lib.ones(3, 1), np.int32(1), lib.ones(0, 3, dtype=lib.int32)),
    "fold zero kernel": lambda lib: lib.nn.functional.fold(lib.ones(4, 4), (2, 2), (0, 1)),
    "fold zero stride": lambda lib: lib.nn.functional.fold(lib.ones(4, 4), (2, 2), 1, stride=0),
    "fold negative blocks": lambda lib: lib.nn.functional.fold(lib.ones(9, 1), 1, 3),
    "fold empty input": lambda lib: lib.nn.functional.fold(lib.ones(4, 0), 2, 1),
    "fold ok": lambda lib: lib.nn.functional.fold(lib.arange(8.0).reshape(1, 4, 2), (2, 3), 2),
    "unfold empty kernel": lambda lib: lib.nn.functional.unfold(lib.ones(2, 1, 3), []),
    "unfold 2-d input": lambda lib: lib.nn.functional.unfold(lib.ones(2, 3), 1),
    "unfold empty plane": lambda lib: lib.nn.functional.unfold(lib.ones(2, 0, 3), 1),
    "unfold negative padding": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3), 1,
                                                                    padding=-1),
    # cosine_similarity: a floating common dtype, eps >= 0, integral operands cast to it
    "cosine_similarity complex": lambda lib: lib.cosine_similarity(
        lib.ones(3, dtype=lib.complex64), lib.ones(2, 3, dtype=lib.bfloat16)),
    "cosine_similarity int operands": lambda lib: lib.cosine_similarity(
        lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
    "cosine_similarity negative eps": lambda lib: lib.nn.functional.cosine_similarity(
        lib.ones(()), lib.ones(4, dtype=lib.int8), -2, -3),
    "cosine_similarity int and float": lambda lib: lib.cosine_similarity(
        lib.arange(6.0).reshape(2, 3), lib.arange(3, dtype=lib.int16)),
    "cosine_similarity half and int": lambda lib: lib.cosine_similarity(
        lib.ones(3, dtype=lib.float16), lib.arange(6).reshape(2, 3)),
    "cosine_similarity complex eps": lambda lib: lib.cosine_similarity(
        lib.ones(3, 3), lib.ones(3, 3, dtype=lib.float64), eps=np.complex128(3 + 0j)),
    # softplus takes Scalars: the kernel's dtype check, then their conversion
    "softplus complex threshold": lambda lib: lib.nn.functional.softplus(
        lib.ones(3), threshold=1.5 - 0.5j),
    "softplus half complex beta": lambda lib: lib.nn.functional.softplus(
        lib.ones(3, dtype=lib.float16), 1.5 - 0.5j),
    "softplus int complex beta": lambda lib: lib.nn.functional.softplus(
        lib.ones(3, dtype=lib.int16), 1.5 - 0.5j),
    "softplus real complex beta": lambda lib: lib.nn.functional.softplus(
        lib.arange(3.0), 2 + 0j, True),
    # copy_ takes a Number (as a 0-d tensor of its own kind); a source with more dims never
    # fits; float to uint8 wraps; module_load copies through it
    "copy_ int": lambda lib: lib.ones(3).copy_(-3),
    "copy_ complex into bool": lambda lib: lib.ones(3, dtype=lib.bool).copy_(1.5 - 0.5j),
    "copy_ float into int": lambda lib: lib.ones(3, dtype=lib.int32).copy_(2.7),
    "copy_ str": lambda lib: lib.ones(3).copy_("a"),
    "copy_ more dims": lambda lib: lib.ones(3).copy_(lib.ones(1, 3)),
    "copy_ into 0-d": lambda lib: lib.ones(()).copy_(lib.ones(1)),
    "copy_ negative into uint8": lambda lib: lib.zeros(1, 3, dtype=lib.uint8).copy_(
        lib.tensor([3.5, 1.8, -3.8], dtype=lib.bfloat16)),
    "module_load number": lambda lib: lib.ones(2, 3, dtype=lib.float16).module_load(
        np.int64(2)),
    # affine_grid calls theta.is_floating_point() as torch does
    "affine_grid dtype theta": lambda lib: lib.nn.functional.affine_grid(lib.int16, (), False),
    "affine_grid int theta": lambda lib: lib.nn.functional.affine_grid(
        lib.ones(1, 2, 3, dtype=lib.int32), (1, 1, 2, 2), False),
    # rms_norm: normalized_shape non-empty, the weight's shape, the input's rank (ValueError),
    # its trailing shape, its dtype; the result in the input's dtype
    "rms_norm empty shape": lambda lib: lib.rms_norm(lib.ones(3), []),
    "rms_norm weight shape": lambda lib: lib.rms_norm(lib.ones(3, 1), (1, 1, 1), lib.ones(2)),
    "rms_norm rank": lambda lib: lib.nn.functional.rms_norm(lib.ones(3, 1), (1, 1, 1)),
    "rms_norm int": lambda lib: lib.rms_norm(lib.ones(3, 2, dtype=lib.int64), (2,)),
    "rms_norm double weight": lambda lib: lib.rms_norm(
        lib.arange(6.0).reshape(3, 2), (2,), lib.tensor([0.5, 2.0], dtype=lib.float64)),
    # leaky_relu/elu: torch's `if inplace:`, the builtin's parser (a Number), the kernel's
    # dtype check, then the Scalar's conversion (float for float32 and half)
    "leaky_relu complex slope": lambda lib: lib.nn.functional.leaky_relu(lib.ones(3),
                                                                         1.5 - 0.5j),
    "leaky_relu int complex slope": lambda lib: lib.nn.functional.leaky_relu(
        lib.ones((), dtype=lib.int16), 1.5 - 0.5j),
    "leaky_relu_ real complex slope": lambda lib: lib.nn.functional.leaky_relu_(-lib.ones(2),
                                                                                2 + 0j),
    "elu tensor inplace": lambda lib: lib.nn.functional.elu(lib.ones(3, 1), 1.0,
                                                            lib.ones(0, 3)),
    "elu complex alpha": lambda lib: lib.nn.functional.elu(-lib.ones(2, dtype=lib.float16),
                                                           1.5 - 0.5j),
    "elu_ complex alpha": lambda lib: lib.nn.functional.elu_(-lib.ones(2), 2 + 1j),
    # topk: k's range, then bool and complex refused; a 0-d input is its own top element
    "topk bool": lambda lib: lib.topk(lib.ones(3, 4, dtype=lib.bool), 2),
    "topk bool k out of range": lambda lib: lib.topk(lib.ones(3, dtype=lib.bool), 10),
    "topk complex": lambda lib: lib.topk(lib.ones(3, dtype=lib.complex64), 1),
    "topk 0-d k=0": lambda lib: lib.topk(lib.tensor(2.5), 0),
    # chain_matmul: one or more matrices, each 2-D (a single one included)
    "chain_matmul vector": lambda lib: lib.chain_matmul(lib.ones(3)),
    "chain_matmul vector end": lambda lib: lib.chain_matmul(lib.ones(3, 3), lib.ones(3)),
    "chain_matmul none": lambda lib: lib.chain_matmul(),
    "chain_matmul one": lambda lib: lib.chain_matmul(lib.arange(6.0).reshape(2, 3)),
    # dropouts: F's p check (ValueError) before the input's type, then `if inplace:`, then the
    # builtin, whose own p check is a RuntimeError
    "alpha_dropout int p": lambda lib: lib.nn.functional.alpha_dropout(1, -4),
    "alpha_dropout tensor inplace": lambda lib: lib.nn.functional.alpha_dropout(
        lib.ones(()), training=False, inplace=lib.ones(2, 3)),
    "feature_alpha_dropout list": lambda lib: lib.nn.functional.feature_alpha_dropout(
        [], lib.ones(2, 3)),
    "dropout non-tensor": lambda lib: lib.nn.functional.dropout(3, 0.5),
    "torch.dropout p": lambda lib: lib.dropout(lib.ones(3), -1.16, True),
    "torch.alpha_dropout p": lambda lib: lib.alpha_dropout(lib.ones(3), 2, False),
    "torch.dropout_ p": lambda lib: lib.dropout_(lib.ones(3), np.int16(2), False),
    "torch.feature_alpha_dropout_ p": lambda lib: lib.feature_alpha_dropout_(
        lib.ones(2, 3), 1.5, True),
    "torch.dropout eval": lambda lib: lib.dropout(lib.arange(3.0), 0.5, False),
    # gather of an empty index: only the dim is checked; diff's n may be a NumPy integer
    "gather empty float index": lambda lib: lib.gather(lib.ones(2, 3, 4), -3, lib.ones(0)),
    "gather empty index other rank": lambda lib: lib.gather(lib.ones(1, 2), 0,
                                                            lib.ones(0, 4, dtype=lib.int64)),
    "gather empty index bad dim": lambda lib: lib.gather(lib.ones(2, 3), 5, lib.ones(0)),
    "diff numpy n": lambda lib: lib.diff(lib.arange(6.0).reshape(2, 3), np.int64(1)),
    "diff 0-d numpy n": lambda lib: lib.diff(lib.tensor(True), np.int16(3)),
    # narrow: a start tensor (0-d integral), a 0-d input, the length, the dim, the start's
    # range; narrow_copy asserts a dim past the end and takes a negative length as overflow
    "narrow 1-d start tensor": lambda lib: lib.ones(3, 3).narrow(-4, lib.ones(1), 0),
    "narrow float start tensor": lambda lib: lib.narrow(lib.ones(3, 4), 1, lib.tensor(1.0), 2),
    "narrow int start tensor": lambda lib: lib.arange(9.0).reshape(3, 3).narrow(
        0, lib.tensor(1), 1),
    "narrow 0-d": lambda lib: lib.narrow(lib.ones((), dtype=lib.int32), -1, 0, 0),
    "narrow length first": lambda lib: lib.ones(1, 1, 1, 2).narrow(3, 3, -2),
    "narrow_copy dim past end": lambda lib: lib.narrow_copy(lib.ones(3, 4), 3, -3, 2),
    "narrow_copy negative length": lambda lib: lib.narrow_copy(lib.ones(3, 4), 0, 1, -1),
    "narrow_copy ok": lambda lib: lib.narrow_copy(lib.arange(12.0).reshape(3, 4), -1, -3, 2),
    # addmm: input's dtype against mat2's, then mat1's, before any shape
    "addmm bool input beta 0": lambda lib: lib.addmm(
        lib.ones(1, 5, dtype=lib.bool), lib.ones(3, 4, dtype=lib.float64),
        lib.ones(4, 5, dtype=lib.float64), beta=0),
    "addmm half input": lambda lib: lib.addmm(lib.ones(3, 5, dtype=lib.float16),
                                              lib.ones(3, 4), lib.ones(4, 5)),
    "addmm mat1 dtype before shapes": lambda lib: lib.addmm(
        lib.ones(3, 5), lib.ones(3, 4, dtype=lib.float64), lib.ones(5, 5)),
    # scatter: an empty index is checked for nothing but the dim (and src's dtype); src's
    # rank and a 0-d src's one element are checked
    "scatter_add empty float index": lambda lib: lib.scatter_add(
        lib.ones(0, dtype=lib.int64), 0, lib.ones(0, 4, dtype=lib.complex128),
        lib.ones(1, 4, dtype=lib.int64)),
    "scatter_reduce empty index rank": lambda lib: lib.scatter_reduce(
        lib.arange(3.0), 0, lib.ones(0, 4, dtype=lib.int64), lib.ones(1, 4), "sum"),
    "scatter empty index bad dim": lambda lib: lib.scatter(
        lib.ones(3), 2, lib.ones(0, dtype=lib.int64), lib.ones(1)),
    "scatter src rank": lambda lib: lib.scatter(lib.ones(3, 4), 0,
                                                lib.zeros(2, 4, dtype=lib.int64), lib.ones(())),
    "scatter_reduce 0-d src size": lambda lib: lib.scatter_reduce(
        lib.ones(4, dtype=lib.float64), 0, lib.zeros(6, dtype=lib.int64),
        lib.ones((), dtype=lib.float64), "mean"),
    "scatter_add src fewer dims": lambda lib: lib.scatter_add(
        lib.ones(3, 4, dtype=lib.int64), 0, lib.zeros(2, 4, dtype=lib.int64),
        lib.ones(4, dtype=lib.int64)),
    # broadcast_shapes: torch's reference steps (a str is a sequence; sizes compared as given)
    "broadcast_shapes str": lambda lib: lib.broadcast_shapes("mean"),
    "broadcast_shapes negative": lambda lib: lib.broadcast_shapes(-3, None),
    "broadcast_shapes numpy size": lambda lib: lib.broadcast_shapes([np.int64(2)], (2,)),
    "broadcast_shapes tensors": lambda lib: lib.broadcast_shapes([lib.ones(4), lib.ones(4)]),
    "broadcast_shapes float size": lambda lib: lib.broadcast_shapes([2.0], (1,)),
    "broadcast_shapes mismatch": lambda lib: lib.broadcast_shapes((2, 3), (4,)),
    # index_add/index_reduce: the dim against the source's rank; a 0-d source's shape
    "index_add dim past source": lambda lib: lib.index_add(
        lib.ones(2, 3, 4, dtype=lib.float64), -1, lib.zeros(5, dtype=lib.int64),
        lib.ones(2, 3, dtype=lib.float64), alpha=2),
    "index_reduce dim past source": lambda lib: lib.ones(1, 3).index_reduce(
        1, lib.zeros(3, dtype=lib.int64), lib.ones(1), "prod"),
    "index_add 0-d source": lambda lib: lib.index_add(lib.ones(2, 3), -2,
                                                      lib.tensor(0), lib.tensor(1.0)),
    # index_put: the indices (dtype, count) before the values' dtype
    "index_put float index": lambda lib: lib.index_put(
        lib.ones(3, 4), (lib.ones(0, 3),), lib.ones(4, dtype=lib.float64), True),
    "index_put_ too many indices": lambda lib: lib.ones((), dtype=lib.float64).index_put_(
        (lib.zeros(1, dtype=lib.int64), lib.zeros(1, dtype=lib.int64)), lib.ones(())),
    # batch_norm: F's steps (training's truth, the batch size, eps) before the builtin's
    # parser; torch.batch_norm has none of them; an empty input skips the channel checks
    "batch_norm negative eps": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(3, 1), lib.uint8, 2, eps=-0.91),
    "batch_norm training eps": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(2, 1, 3, dtype=lib.int64), None, lib.float16, training=True, eps=-4),
    "batch_norm tensor training": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(3), None, None, training=lib.ones(1, 3)),
    "torch.batch_norm one value": lambda lib: lib.batch_norm(
        lib.ones(1, 3), None, None, None, None, True, 0.1, 1e-5, False),
    "batch_norm empty input": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(0, 3, dtype=lib.float16), lib.ones(1, dtype=lib.float64), None),
    # take_along_dim without a dim is a plain gather of the flattened input
    "take_along_dim flat negative": lambda lib: lib.take_along_dim(
        lib.arange(12.0).reshape(3, 4), lib.tensor([-1])),
    "take_along_dim flat empty float": lambda lib: lib.take_along_dim(lib.ones(()),
                                                                      lib.ones(0)),
    "take_along_dim flat int32": lambda lib: lib.arange(6.0).take_along_dim(
        lib.tensor([4, 1], dtype=lib.int32)),
    "take_along_dim dim negative": lambda lib: lib.take_along_dim(
        lib.arange(12.0).reshape(3, 4), lib.tensor([[-1]]), 1),
    "take_along_dim dim int32": lambda lib: lib.take_along_dim(
        lib.ones(3, 4), lib.ones(1, 2, dtype=lib.int32), 1),
    # repeat/tile: the result's sizes must be non-negative (not each repeat)
    "repeat negative of empty dim": lambda lib: lib.ones(0, 3).repeat(-3, True),
    "repeat negative": lambda lib: lib.ones(0, 3).repeat(2, -3),
    "repeat negative new dim": lambda lib: lib.ones(0, 3).repeat(-2, 0, 0),
    "tile negative of empty dim": lambda lib: lib.tile(lib.ones(0, 3), [-2, 4]),
    # rrelu: torch's `if inplace:` before its builtin's parser
    "rrelu tensor inplace": lambda lib: lib.nn.functional.rrelu(
        lib.ones((), dtype=lib.int8), -2.29, "mean", inplace=lib.ones(2, 1, 3)),
    "rrelu str upper": lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.1, "mean"),
    # a 0-d tensor's dims wrap as a 1-d one's (diagonal); constant_pad_nd of no padding;
    # cov's NumPy integer correction; baddbmm's input dtype against batch1's
    "diagonal 0-d same dims": lambda lib: lib.diagonal(lib.tensor(1.0), 0, 0, -1),
    "diagonal_copy 0-d same dims": lambda lib: lib.diagonal_copy(lib.tensor(1.0), 0, 0, -1),
    "constant_pad_nd 0-d": lambda lib: lib.constant_pad_nd(lib.tensor(1.5, dtype=lib.float16),
                                                          ()),
    "cov numpy correction": lambda lib: lib.arange(6.0).reshape(3, 2).cov(
        correction=np.uint8(1)),
    "baddbmm half input": lambda lib: lib.baddbmm(
        lib.ones(2, 3, 2, dtype=lib.float16), lib.ones(2, 3, 4, dtype=lib.float64),
        lib.ones(2, 4, 2, dtype=lib.float64)),
    "baddbmm batch shape first": lambda lib: lib.baddbmm(
        lib.ones(3, 2, dtype=lib.int64), lib.ones(2, 3, 4), lib.ones(2, 5, 2)),
    # unique/unique_consecutive: the flags' truth before the input's type
    "unique tensor flag": lambda lib: lib.unique(5, True, lib.ones(2, 3)),
    "unique_consecutive tensor flag": lambda lib: lib.unique_consecutive(5, lib.ones(2, 3)),
    "unique non-tensor": lambda lib: lib.unique(5),
    # tensor_split: a tensor's dtype and rank before the dim
    "tensor_split 2-d tensor bad dim": lambda lib: lib.tensor_split(
        lib.ones(4), lib.ones(0, 3, dtype=lib.int64), -2),
    "tensor_split uint8 tensor bad dim": lambda lib: lib.tensor_split(
        lib.ones(3, 1), lib.ones(1, 3, dtype=lib.uint8), 3),
    # the methods' deprecated (alpha, other) overload takes a number for other, and a 0-d
    # tensor alpha is read through item()
    "sub_ deprecated number other": lambda lib: lib.arange(4).sub_(
        lib.tensor(2, dtype=lib.int16), 3),
    "add deprecated number other": lambda lib: lib.arange(4.0).add(2, 3),
    "sub_ tensor alpha cast": lambda lib: lib.ones(1, 2, dtype=lib.uint8).sub_(
        lib.tensor(2.0), lib.tensor(1 + 1j)),
    "add tensor alpha": lambda lib: lib.arange(4.0).add(3, alpha=lib.tensor(2)),
    "add float tensor alpha int input": lambda lib: lib.arange(4).add(3, alpha=lib.tensor(2.0)),
    # an int list takes one-element integer or bool tensors; a SymInt list's conversion
    # refuses bool ones (RuntimeError), element by element
    "hsplit bool index tensor": lambda lib: lib.ones(2, 3, 4).hsplit(lib.tensor([True])),
    "dsplit 2-d index tensor": lambda lib: lib.ones(2, 3, 4).dsplit(lib.tensor([[1]])),
    "hsplit 0-d sections tensor": lambda lib: lib.ones(2, 3, 4).hsplit(lib.tensor(1)),
    "hsplit uint8 index tensor": lambda lib: lib.ones(3).hsplit(
        lib.tensor([1], dtype=lib.uint8)),
    "vsplit 0-d uint8 sections": lambda lib: lib.vsplit(
        lib.ones(2, 3), lib.tensor(1, dtype=lib.uint8)),
    "vsplit 1-d tensor": lambda lib: lib.vsplit(lib.ones(2, 3), lib.tensor([1])),
    "reshape bool tensor first": lambda lib: lib.ones(2, 3).reshape(
        lib.tensor(True), lib.ones(3, 3)),
    "reshape bad tensor before bool": lambda lib: lib.ones(2, 3).reshape(
        2, lib.ones(3, 3), lib.tensor(True)),
    "reshape float tensor element": lambda lib: lib.ones(2, 3).reshape(2, lib.tensor([1.0]), 3),
    "view lone bool tensor": lambda lib: lib.ones(1).view(lib.tensor([True])),
    "expand bool element": lambda lib: lib.ones(1).expand((2, lib.tensor([True]))),
    "broadcast_to bool tensor": lambda lib: lib.ones(1).broadcast_to((lib.tensor([True]),)),
    "flip bool tensor element": lambda lib: lib.ones(2, 3).flip((0, lib.tensor([True]))),
    "reshape int tensor elements": lambda lib: lib.ones(2, 3).reshape(
        lib.tensor([3]), lib.tensor(2, dtype=lib.uint8)),
    # the Scalars of nn builtins that torch's hand-written stubs call float take any Number:
    # a complex one fails converting to a double unless its imaginary part is 0
    "softshrink complex lambd": lambda lib: lib.nn.functional.softshrink(lib.ones(2), 1 + 1j),
    "softshrink zero-imag lambd": lambda lib: lib.nn.functional.softshrink(
        lib.tensor([0.2, 2.0]), 1 + 0j),
    "hardtanh_ complex max_val": lambda lib: lib.nn.functional.hardtanh_(
        lib.ones(2), max_val=1.5 - 0.5j),
    "hardtanh_ zero-imag max_val": lambda lib: lib.nn.functional.hardtanh_(
        lib.tensor([0.5, 3.0]), max_val=2 + 0j),
    "hardtanh_ tensor min_val": lambda lib: lib.nn.functional.hardtanh_(
        lib.tensor([0.25, 3.0]), lib.tensor(0.5)),
    "hardtanh_ int input tensor bound": lambda lib: lib.nn.functional.hardtanh_(
        lib.tensor([-3, 1, 5], dtype=lib.int32), lib.tensor(-2), 2 + 0j),
    # index_put/setitem: the value's shape is checked before the indices' bounds;
    # accumulate with a 0-d index adds; an empty tuple of indices fails in torch's kernel
    "index_put accumulate 0-d index": lambda lib: lib.index_put(
        lib.arange(12.0).reshape(3, 4), (lib.tensor(1),), lib.tensor(5.0), True),
    "index_put_ 0-d index accumulate": lambda lib: lib.arange(12.0).reshape(3, 4).index_put_(
        (lib.tensor(-1),), lib.tensor([1.0, 2, 3, 4]), True),
    "index_put accumulate shape before bounds": lambda lib: lib.index_put(
        lib.zeros(1), (lib.tensor([0, 1, 2]),), lib.ones(3, 4), True),
    "index_put shape before bounds": lambda lib: lib.index_put(
        lib.zeros(3), (lib.tensor([0, 1, 5]),), lib.ones(3, 3)),
    "index_put_ two indices shape before bounds": lambda lib: lib.zeros(2, 3).index_put_(
        (lib.tensor([0, 1, 5]), lib.tensor([1])), lib.ones(2), True),
    "index_put leading one not stripped": lambda lib: lib.index_put(
        lib.zeros(3), (lib.tensor([0, 1, 5]),), lib.ones(1, 3), True),
    "index_put out of bounds": lambda lib: lib.index_put(
        lib.zeros(3), (lib.tensor([0, 1, 5]),), lib.ones(3), True),
    "setitem shape before bounds": lambda lib: _assigned(lib.zeros(3), lib.tensor([0, 5]),
                                                         lib.ones(3)),
    "setitem leading ones stripped": lambda lib: _assigned(lib.zeros(3), lib.tensor([0, 1]),
                                                           lib.ones(1, 1, 2)),
    "index_put no indices": lambda lib: lib.index_put(lib.zeros(4), [], lib.ones(4)),
    "index_put_ no indices accumulate": lambda lib: lib.zeros(4).index_put_(
        (), lib.ones(4), True),
    "index_put no indices bad shape": lambda lib: lib.index_put(lib.zeros(4), [], lib.ones(3)),
    # torch.split/Tensor.split are Python: tensor.split(...) on whatever they are given, then
    # the builtin split (an int) or split_with_sizes, whose parser checks before the op
    "split of a str": lambda lib: lib.split("bogus", (-2, 0, -2)),
    "split of an int": lambda lib: lib.split(3, 1),
    "split 0-d tensor sizes": lambda lib: lib.ones(()).split(lib.ones(1, 3), (-2,)),
    "split 0-d str sizes": lambda lib: lib.ones((), dtype=lib.int32).split("none", [1]),
    "split bool dim": lambda lib: lib.split(lib.ones(0, 3), [4, 3, -1], False),
    "split str dim": lambda lib: lib.split(lib.ones(()), (), "mean"),
    "split numpy size": lambda lib: lib.split(lib.ones(1, 2), np.uint8(3)),
    "split bool size": lambda lib: lib.ones(0, 2).split(True, 0),
    "split tensor element in sizes": lambda lib: lib.split(lib.ones(3, 3), [lib.ones(3, 1)], 3),
    "split_with_sizes None dim": lambda lib: lib.ones(()).split([1], dim=None),
    "split int tensor size": lambda lib: lib.arange(5).split(lib.tensor(2)),
    # torch.fft's builtins check their arguments' types first; s and dim take a lone int
    "fft tensor n": lambda lib: lib.fft.fft(lib.ones(3, 1), n=lib.ones(0)),
    "ifft int norm": lambda lib: lib.fft.ifft(lib.ones(0, dtype=lib.int32), 3, 0, -2),
    "rfft dtype dim": lambda lib: lib.fft.rfft(lib.ones(()), 3, lib.int32, "ortho"),
    "hfftn tensor dim": lambda lib: lib.fft.hfftn(lib.ones(()), dim=lib.ones(1, 2)),
    "rfft2 tensor s": lambda lib: lib.fft.rfft2(lib.ones(2, 1, 3), s=lib.ones(3, 3)),
    "irfft bool n": lambda lib: lib.fft.irfft(lib.ones(3), n=False),
    "fft2 None dim": lambda lib: lib.fft.fft2(lib.ones(2, 2), dim=None),
    "amax None dim": lambda lib: lib.amax(lib.ones(2, 2), None),
    "irfftn int s": lambda lib: lib.fft.irfftn(lib.ones(1, 3), s=1, norm="ortho"),
    "fftn tensor s int dim": lambda lib: lib.fft.fftn(lib.ones(2, 3), s=lib.tensor(4), dim=1),
    # F.pad's mode is the builtin's str; conv's fixed-size lists with a default take no None
    "pad tuple mode": lambda lib: lib.nn.functional.pad(lib.ones(4), (4,), (-2, 3), 0.0),
    "pad tensor mode": lambda lib: lib.nn.functional.pad(lib.ones(0, 3), [-2], lib.ones(4)),
    "pad None mode": lambda lib: lib.nn.functional.pad(lib.ones(1, 4), (1, 1), mode=None),
    "conv1d None dilation": lambda lib: lib.nn.functional.conv1d(
        lib.ones(1, 1, 1, 2), lib.ones(0), lib.ones(1), dilation=None),
    "conv_transpose3d None output_padding": lambda lib: lib.nn.functional.conv_transpose3d(
        lib.ones(1), lib.ones(1, 1, 1, 2), output_padding=None),
    "max_pool1d None stride": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 1, 4), 2,
                                                                       None),
    # stft: the native call's parser checks the arguments after the centring pad
    "stft float win_length": lambda lib: lib.ones(2, 3).stft(3, win_length=0.79,
                                                             window=(4, 3)),
    "stft bool n_fft": lambda lib: lib.ones(3, 1).stft(True, window=lib.ones(())),
    "stft tensor n_fft": lambda lib: lib.stft(lib.ones(4, dtype=lib.float16), lib.ones(())),
    "stft int pad_mode": lambda lib: lib.ones(1, 3).stft(2, pad_mode=1, return_complex=True),
    "stft float hop_length": lambda lib: lib.stft(lib.ones(8), 4, 1.5, return_complex=True),
    # the builtins built on split take what their own parsers took for an int
    "split_copy numpy size": lambda lib: lib.split_copy(lib.ones(0, 3), np.int32(1)),
    "unsafe_split numpy size bad dim": lambda lib: lib.unsafe_split(lib.ones(2, 3),
                                                                    np.int8(3), 3),
    "chunk 0-d tensor chunks": lambda lib: lib.ones(3, 1).chunk(
        lib.tensor(2, dtype=lib.int16)),
    "chunk 0-d tensor chunks empty": lambda lib: lib.ones(0, 1).chunk(
        lib.tensor(2, dtype=lib.int16)),
    # the stubs' gaps, filled from the ATen schemas and the docstrings: defaults that take
    # no None, the conversions' keyword-only memory_format, new_tensor's keyword-only dtype
    "hardtanh_ None min_val": lambda lib: lib.nn.functional.hardtanh_(lib.ones(4), None),
    "softplus None beta": lambda lib: lib.nn.functional.softplus(lib.ones(2), None),
    "one_hot None num_classes": lambda lib: lib.nn.functional.one_hot(lib.ones((), dtype=lib.int16),
                                                                      None),
    "one_hot default num_classes": lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2])),
    "cfloat positional": lambda lib: lib.ones(1).cfloat(lib.ones(3, 3)),
    "cdouble positional": lambda lib: lib.ones(1).cdouble(True),
    "half memory_format": lambda lib: lib.ones(2, 2).t().half(
        memory_format=lib.contiguous_format),
    "float bad memory_format": lambda lib: lib.ones(1).float(memory_format=1),
    "new_tensor positional dtype": lambda lib: lib.ones(1).new_tensor(lib.ones(3), lib.float16),
    "new_tensor keyword dtype": lambda lib: lib.ones(1).new_tensor([1, 2], dtype=lib.float16),
    # Tensor.type: a non-type, non-str, non-dtype is a TypeError; a class names itself
    "type complex": lambda lib: lib.ones(1).type(1.5 - 0.5j),
    "type tensor": lambda lib: lib.ones(1).type(lib.ones(1)),
    "type numpy class": lambda lib: lib.ones(1).type(np.float32),
    "type Tensor class": lambda lib: lib.ones(1, dtype=lib.int32).type(lib.Tensor),
    "type legacy class": lambda lib: lib.ones(1).type(lib.DoubleTensor),
    # get_autocast_dtype's device_type is a str
    "get_autocast_dtype int": lambda lib: lib.get_autocast_dtype(1),
    "get_autocast_dtype None": lambda lib: lib.get_autocast_dtype(None),
    # clamp with a Tensor and a Number bound: the Scalar overload reads a 0-d tensor
    "clamp 0-d tensor min float max": lambda lib: lib.clamp(
        lib.arange(5.0, dtype=lib.float64), lib.tensor(0.5, dtype=lib.float64), 2.91),
    "clamp_ bool int bound 0-d tensor": lambda lib: lib.tensor([True, False]).clamp_(
        5, lib.tensor(3, dtype=lib.uint8)),
    "clamp complex bound 0-d tensor": lambda lib: lib.clamp(
        lib.ones(2, 3, dtype=lib.int64), np.complex128(2 + 0j), lib.tensor(1, dtype=lib.uint8)),
    "clamp int input 0-d float max": lambda lib: lib.clamp(lib.arange(5), 1, lib.tensor(3.5)),
    "clamp 1-d tensor and number": lambda lib: lib.clamp(lib.arange(5.0), lib.tensor([1.0]), 3),
    # a 0-d tensor's dims 0 and -1 are the same dim; roll of an empty tensor reads no dim;
    # solve/lstsq name a B without enough dimensions
    "flip 0-d repeated dim": lambda lib: lib.flip(lib.tensor(1), (0, -1)),
    "squeeze repeated dims": lambda lib: lib.ones(3, 1).squeeze((-1, 0, -1)),
    "squeeze 0-d repeated dims": lambda lib: lib.ones(()).squeeze((0, -1)),
    "sum 0-d repeated dims": lambda lib: lib.sum(lib.tensor(1.0), (0, -1)),
    "sum 0-d dim": lambda lib: lib.sum(lib.tensor(1.0), (-1,), keepdim=True),
    "roll empty bad dim": lambda lib: lib.ones(0, 3).roll(-2, [2]),
    "roll empty two dims": lambda lib: lib.ones(0, 3).roll([1, 2], [0, 7]),
    "roll empty misaligned": lambda lib: lib.ones(0, 3).roll([1], [0, 7]),
    "solve 0-d B": lambda lib: lib.linalg.solve(lib.eye(3), lib.tensor(1.0)),
    "lstsq 0-d B": lambda lib: lib.linalg.lstsq(lib.ones(5, 3, dtype=lib.float64),
                                               lib.tensor(1.0, dtype=lib.float64)),
    # addr computes in the three operands' common dtype (a 0-d input counts in full)
    "addr float16 and int16 vectors": lambda lib: lib.addr(
        lib.tensor([1.0, 2, 3, 4], dtype=lib.float64), lib.tensor([0.1, 0.2, 0.3],
                                                                  dtype=lib.float16),
        lib.tensor([1, 2, 3, 4], dtype=lib.int16), beta=2.0),
    "addr 0-d complex input float32 vectors": lambda lib: lib.addr(
        lib.tensor(1.5 - 2.25j, dtype=lib.complex128), lib.tensor([0.123, -2.71, 3.3]),
        lib.tensor([1.7, -0.3, 2.9, 3.1]), beta=2.0),
    # a 0-d tensor that requires grad is no Number to the parser
    "renorm grad maxnorm": lambda lib: lib.renorm(lib.ones(2, 2), 1, 0,
                                                  lib.tensor(1.0, requires_grad=True)),
    "norm grad ord": lambda lib: lib.ones(2, 2).norm(lib.tensor(2.0, requires_grad=True)),
    "pinverse grad rcond": lambda lib: lib.ones(2, 2).pinverse(
        lib.tensor(0.1, requires_grad=True)),
    "baddbmm grad alpha": lambda lib: lib.baddbmm(
        lib.ones(2, 3, 4), lib.ones(2, 3, 5), lib.ones(2, 5, 4),
        alpha=lib.tensor(2.0, requires_grad=True)),
    "add grad 0-d other": lambda lib: lib.add(lib.ones(2), lib.tensor(2.0, requires_grad=True)),
    # instance_norm: torch's Python steps (use_input_stats' truth, input.size()), then the
    # builtin's parser
    "instance_norm str running_mean": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(2, 3, 4, dtype=lib.int32), "none"),
    "instance_norm None use_input_stats": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(1, 3), use_input_stats=None),
    "instance_norm float use_input_stats": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(2, 1, 3), use_input_stats=-0.18),
    "instance_norm list eps": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(2, 3, 4, dtype=lib.int32), eps=[]),
    "instance_norm non-tensor input": lambda lib: lib.nn.functional.instance_norm((1, 2)),
    "instance_norm no running stats": lambda lib: lib.nn.functional.instance_norm(
        lib.ones(2, 3, 4), use_input_stats=False),
    "instance_norm ok": lambda lib: lib.nn.functional.instance_norm(
        lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4)),
    # torch.rrelu/instance_norm/group_norm/layer_norm are the builtins, not the F forms:
    # their own parameters, in their own order
    "torch.rrelu inplace keyword": lambda lib: lib.rrelu(lib.ones(2), inplace=True),
    "torch.rrelu eval": lambda lib: lib.rrelu(lib.arange(-3.0, 3), 0.1, 0.3),
    "torch.instance_norm builtin order": lambda lib: lib.instance_norm(
        lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4),
        lib.tensor([1.0, 2, 3], dtype=lib.float64), lib.tensor([0.5, 0, 1], dtype=lib.float64),
        None, None, True, 0.1, 1e-5, False),
    "torch.group_norm cudnn flag": lambda lib: lib.group_norm(
        lib.arange(24.0, dtype=lib.float64).reshape(2, 4, 3), 2,
        lib.arange(4.0, dtype=lib.float64), None, 1e-5, True),
    "torch.layer_norm cudnn flag": lambda lib: lib.layer_norm(
        lib.arange(24.0, dtype=lib.float64).reshape(2, 4, 3), (3,), None,
        lib.ones(3, dtype=lib.float64), 1e-5, True),
    "torch.layer_norm too many": lambda lib: lib.layer_norm(lib.ones(2, 3), (3,), None, None,
                                                            1e-5, True, 4),
    # F.dropout1d/2d/3d end in the feature_dropout builtin, whose parser checks `train`
    "dropout1d dtype training": lambda lib: lib.nn.functional.dropout1d(
        lib.ones(2, 3, dtype=lib.int32), training=lib.int16),
    "dropout3d int training": lambda lib: lib.nn.functional.dropout3d(
        lib.ones(4, dtype=lib.int64), training=1),
    "dropout2d str training": lambda lib: lib.nn.functional.dropout2d(
        lib.ones(1, 1, 1, 2, dtype=lib.complex128), True, "mean"),
    "dropout2d eval": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 2, 2), 0.5, False),
    # size/stride's no-argument overload takes None only; quantile's q is a Tensor or float
    "size bool dim": lambda lib: lib.ones(2).size(False),
    "size None dim": lambda lib: lib.tensor(lib.ones(2, 3).size(None)),
    "stride tensor dim": lambda lib: lib.ones(2).stride(lib.ones(())),
    "quantile complex q": lambda lib: lib.ones(3).quantile(1.5 - 0.5j),
    "nanquantile complex q empty": lambda lib: lib.ones(0).nanquantile(1.5 - 0.5j),
    "quantile float q": lambda lib: lib.arange(5.0).quantile(0.3),
    # histogram's int bins take a NumPy integer; lowrank reads A.shape first; cdist returns
    # an empty or column-less result in x1's dtype before comparing the dtypes
    "histogram numpy bins": lambda lib: lib.histogram(lib.arange(6.0), np.int64(3)),
    "histogram numpy zero bins": lambda lib: lib.arange(6.0).histogram(np.int32(0)),
    "pca_lowrank numpy scalar": lambda lib: lib.pca_lowrank(np.complex128(2 + 0j), 2),
    "svd_lowrank list": lambda lib: lib.svd_lowrank([1, 2]),
    "pca_lowrank 1-d": lambda lib: lib.pca_lowrank(lib.ones(3)),
    "cdist empty x2 other dtype": lambda lib: lib.cdist(lib.ones(1, 3),
                                                        lib.ones(0, 3, dtype=lib.float64)),
    "cdist no columns": lambda lib: lib.cdist(lib.ones(1, 0), lib.ones(2, 0, dtype=lib.float64)),
    "cdist mixed dtypes": lambda lib: lib.cdist(lib.ones(1, 3),
                                                lib.ones(2, 3, dtype=lib.float64)),
    "cdist half": lambda lib: lib.cdist(lib.ones(3, 3, dtype=lib.float16),
                                        lib.ones(1, 3, dtype=lib.float16)),
    "cdist batch mismatch": lambda lib: lib.cdist(lib.ones(2, 1, 3), lib.ones(0, 2, 3)),
    # vander's N as the parser took it; permute's dims compared one by one; the int lists of
    # gradient and frobenius_norm take a lone NumPy integer or 0-d tensor
    "linalg.vander 0-d tensor N": lambda lib: lib.linalg.vander(
        lib.tensor([1, 2, 3, 4]), N=lib.tensor(0, dtype=lib.int32)),
    "vander 0-d uint8 N": lambda lib: lib.vander(lib.ones(1), lib.tensor(2, dtype=lib.uint8)),
    "vander numpy N": lambda lib: lib.vander(lib.tensor([1.0, 2, 3]), np.int64(2), True),
    "permute repeat before range": lambda lib: lib.ones(2, 3, 4).permute(2, -1, 4),
    "permute_copy repeat before range": lambda lib: lib.permute_copy(lib.ones(2, 3, 4),
                                                                     (2, -1, 4)),
    "gradient 0-d tensor dim": lambda lib: lib.gradient(lib.arange(4.0) ** 2,
                                                        dim=lib.tensor(0, dtype=lib.int32))[0],
    "frobenius_norm numpy dim": lambda lib: lib.frobenius_norm(
        lib.ones(1, 3, dtype=lib.float64), np.uint8(0), True),
    # the errors of torch's kernels, in their order
    "normal broadcast": lambda lib: lib.normal(lib.ones(2, 3), lib.ones(0, 3, dtype=lib.float64)),
    "unfold negative size": lambda lib: lib.ones(3, 4, dtype=lib.int8).unfold(1, -3, 1),
    "binomial bool prob": lambda lib: lib.binomial(lib.ones(0), lib.ones(0, 3, dtype=lib.bool)),
    "linalg.norm three dims": lambda lib: lib.linalg.norm(lib.ones(2, 3, dtype=lib.float64),
                                                          None, dim=(-1, -2, 1)),
    "linalg.norm str ord one dim": lambda lib: lib.linalg.norm(
        lib.ones(2, 3, dtype=lib.float64), "fro", dim=(0,)),
    # an empty result runs no kernel: no zero-divisor error, no sampler's dtype check (the
    # leaf check still comes first)
    "fmod empty by zero": lambda lib: lib.ones(0, 3, dtype=lib.int32).fmod(lib.tensor(0)),
    "floor divide empty by zero": lambda lib: lib.ones(0, 3, dtype=lib.int32).div(
        lib.tensor(0), rounding_mode="floor"),
    "remainder by zero": lambda lib: lib.ones(2, dtype=lib.int32).remainder(0),
    "exponential_ empty complex": lambda lib: lib.ones(0, 3, dtype=lib.complex128).exponential_(),
    "log_normal_ empty bool": lambda lib: lib.ones(0, 3, dtype=lib.bool).log_normal_(),
    "normal_ empty int": lambda lib: lib.ones(0, dtype=lib.int64).normal_(),
    "exponential_ int": lambda lib: lib.ones(2, dtype=lib.int64).exponential_(),
    "exponential_ empty leaf": lambda lib: lib.ones(0, requires_grad=True).exponential_(),
    # an advanced index's bounds are checked by the kernel, which an empty result never runs
    "getitem empty result out of bounds": lambda lib: lib.ones(0, 3)[:, lib.tensor([1, 5])],
    "getitem sliced-away dim out of bounds": lambda lib: lib.ones(1, 1, 1, 2)[
        lib.tensor([[0, 0], [0, 0]]), 1:, lib.tensor([[2, 2], [1, 0]])],
    "getitem out of bounds": lambda lib: lib.ones(2, 3)[:, lib.tensor([1, 5])],
    "getitem empty dim non-empty result": lambda lib: lib.ones(0, 3)[lib.tensor([1])],
    # lerp's real kernel reads a Number weight as a double
    "lerp complex weight": lambda lib: lib.lerp(lib.ones(3, 4, dtype=lib.float64),
                                                lib.ones(3, 4, dtype=lib.float64), 1.5 - 0.5j),
    "lerp zero-imag weight": lambda lib: lib.lerp(lib.zeros(2), lib.ones(2), 0.5 + 0j),
    "lerp int complex weight": lambda lib: lib.lerp(lib.zeros(2, dtype=lib.int32),
                                                    lib.ones(2, dtype=lib.int32), 1.5 - 0.5j),
    # all/any reduce nothing over an empty dim list
    "all empty dim list": lambda lib: lib.all(lib.tensor([[0, 1.5], [2, 0]]), dim=[]),
    "any empty dim tuple keepdim": lambda lib: lib.any(lib.tensor([[0, 1.5], [2, 0]]), dim=(),
                                                       keepdim=True),
    # a SymInt's conversion refuses a bool tensor; scalar_tensor reads a complex as its
    # real type; sym_constrain_range_for_size's max above 2
    "select bool tensor index": lambda lib: lib.select(lib.ones(2, 3), 0, lib.tensor([True])),
    "select int tensor index": lambda lib: lib.select(lib.arange(6.0).reshape(2, 3), 0,
                                                      lib.tensor([1])),
    "scalar_tensor zero-imag complex": lambda lib: lib.scalar_tensor(np.complex128(1 + 0j),
                                                                     dtype=lib.float16),
    "scalar_tensor complex": lambda lib: lib.scalar_tensor(1 + 1j),
    "scalar_tensor complex dtype": lambda lib: lib.scalar_tensor(1 + 1j, dtype=lib.complex64),
    "sym_constrain_range_for_size max": lambda lib: lib.tensor(
        lib.sym_constrain_range_for_size(1, max=2) or 0),
    # histc's range (the data's when min == max) must be finite; lstm_cell's two hidden
    # states; addmv/addbmm compare the input's dtype after the product's checks
    "histc infinite data": lambda lib: lib.histc(lib.tensor([1.0, float("-inf"), 2.0]), bins=5),
    "histc nan data": lambda lib: lib.histc(lib.tensor([float("nan")])),
    "histc infinite bounds": lambda lib: lib.histc(lib.tensor([1.0, 2.0]), bins=4,
                                                   min=float("inf"), max=float("inf")),
    "histc finite": lambda lib: lib.histc(lib.tensor([1.0, 2.0, 2.5]), bins=4),
    "lstm_cell no hidden states": lambda lib: lib.lstm_cell(
        lib.ones(2, 3), (), lib.ones(16, 3), lib.ones(16, 4)),
    "lstm_cell one hidden state": lambda lib: lib.lstm_cell(
        lib.ones(2, 3), (lib.ones(2, 4),), lib.ones(16, 3), lib.ones(16, 4)),
    "addmv int input": lambda lib: lib.addmv(lib.ones(3, dtype=lib.int16), lib.ones(3, 4),
                                             lib.ones(4)),
    "addmv ok": lambda lib: lib.addmv(lib.ones(3), lib.arange(12.0).reshape(3, 4), lib.ones(4),
                                      beta=2),
    "addbmm int input": lambda lib: lib.addbmm(lib.ones(2, dtype=lib.int16), lib.ones(2, 3, 4),
                                               lib.ones(2, 4, 2)),
    # autograd records no integer or bool result of a differentiable reduction
    "sum int dtype of grad input": lambda lib: lib.ones(2, requires_grad=True).sum(
        dtype=lib.int64),
    "nansum bool dtype of grad input": lambda lib: lib.ones(2, requires_grad=True).nansum(
        dtype=lib.bool),
    "cumsum int8 dtype of complex grad input": lambda lib: lib.ones(
        2, dtype=lib.complex64, requires_grad=True).cumsum(0, dtype=lib.int8),
    "prod int dtype of grad input": lambda lib: lib.ones(2, requires_grad=True).prod(
        dtype=lib.int32),
    "sum bad dim before dtype": lambda lib: lib.ones(2, requires_grad=True).sum(
        5, dtype=lib.int64),
    "sum int dtype no grad": lambda lib: lib.ones(2).sum(dtype=lib.int64),
    # median, nan_to_num and slice_inverse differentiate real outputs only: a complex one
    # is refused after the kernel ran
    "median empty complex grad": lambda lib: lib.ones(0, 3, dtype=lib.complex64,
                                                      requires_grad=True).median(),
    "median complex grad kernel first": lambda lib: lib.ones(2, 3, dtype=lib.complex64,
                                                             requires_grad=True).median(),
    "nan_to_num complex grad": lambda lib: lib.nan_to_num(
        lib.ones((), dtype=lib.complex128, requires_grad=True), 1.5, 7.0, -7.0),
    "nan_to_num complex": lambda lib: lib.nan_to_num(lib.ones((), dtype=lib.complex128), 1.5),
    "slice_inverse complex input grad src": lambda lib: lib.ones(
        2, 3, 4, dtype=lib.complex64).slice_inverse(lib.ones((), requires_grad=True), -1),
    "slice_inverse real grad": lambda lib: lib.ones(2, 3, requires_grad=True).slice_inverse(
        lib.ones(2, 3), 0),
    # to_sparse_csr/csc check a given dense_dim's range before the input's rank
    "to_sparse_csc 1-d dense_dim": lambda lib: lib.ones(3, dtype=lib.int8).to_sparse_csc(1),
    "to_sparse_csr 1-d dense_dim 0": lambda lib: lib.ones(1).to_sparse_csr(0),
    "to_sparse_csr 1-d": lambda lib: lib.ones(1).to_sparse_csr(),
    "to_sparse_csr dense_dim 1": lambda lib: lib.arange(24.0).reshape(2, 3, 4).to_sparse_csr(
        1).to_dense(),
    # solve_triangular copies B into A's dtype; tensorinv slices the sizes at ind first
    "solve_triangular float64 B": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3) * 2, lib.ones(3, 1, dtype=lib.float64), upper=True),
    "solve_triangular int B complex A": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3, dtype=lib.complex64), lib.ones(3, 1, dtype=lib.int64), upper=True,
        unitriangular=True),
    "solve_triangular int A": lambda lib: lib.linalg.solve_triangular(
        lib.eye(3, dtype=lib.int64), lib.ones(3, 1), upper=True),
    "tensorinv 0-d": lambda lib: lib.linalg.tensorinv(lib.tensor(1.0)),
    "tensorinv ind past rank": lambda lib: lib.linalg.tensorinv(lib.ones(2, 2), 3),
    "tensorinv ok": lambda lib: lib.linalg.tensorinv(lib.eye(4).reshape(4, 2, 2) * 2, 1),
    # a fixed-size int list (std's int[1] dim) takes no varargs; a tensor is no device
    "std int varargs": lambda lib: lib.ones(2, 3, dtype=lib.int32).std(1, np.int32(2)),
    "var int varargs": lambda lib: lib.ones(2, 3).var(1, 2),
    "var dim unbiased": lambda lib: lib.arange(24.0).reshape(2, 3, 4).var(0, True),
    "is_pinned tensor device": lambda lib: lib.ones(3, 1).is_pinned(
        lib.tensor(0, dtype=lib.int32)),
    # an in-place pointwise op checks its output's shape, then the cast, before it looks for
    # a kernel for the dtype (TensorIterator's order)
    "gcd_ float shape": lambda lib: lib.zeros(3, dtype=lib.float64).gcd_(
        lib.zeros(3, 3, dtype=lib.float64)),
    "lcm_ float cast": lambda lib: lib.lcm_(lib.zeros(2, 3, dtype=lib.uint8), lib.zeros(2, 3)),
    "bitwise_xor_ float shape": lambda lib: lib.zeros(()).bitwise_xor_(lib.zeros(0, 3)),
    "bitwise_and_ complex cast": lambda lib: lib.zeros(1, dtype=lib.float64).bitwise_and_(
        lib.zeros(1, dtype=lib.complex64)),
    "bitwise_or_ float no kernel": lambda lib: lib.zeros(3).bitwise_or_(lib.zeros(3)),
    "atan2_ complex shape": lambda lib: lib.zeros(3, dtype=lib.complex64).atan2_(
        lib.zeros(2, 3, dtype=lib.complex64)),
    "add_ int shape before cast": lambda lib: lib.zeros(3, dtype=lib.int64).add_(
        lib.zeros(2, 3)),
    "ge_ complex shape": lambda lib: lib.zeros(3, dtype=lib.complex64).ge_(
        lib.zeros(2, 3, dtype=lib.complex64)),
    "igamma int broadcast": lambda lib: lib.zeros(2, 3, dtype=lib.int32).igamma(
        lib.zeros(0, 3, dtype=lib.bool)),
    "igamma_ int shape": lambda lib: lib.zeros(1, dtype=lib.int64).igamma_(
        lib.zeros(0, dtype=lib.bool)),
    "nextafter_ complex cast": lambda lib: lib.zeros(4).nextafter_(
        lib.zeros(1, dtype=lib.complex128)),
    "nextafter complex broadcast": lambda lib: lib.zeros(3).nextafter(
        lib.zeros(4, dtype=lib.complex128)),
    # a 0-d index (or src) beside a 1-d input stands for one element of one dim
    "scatter_reduce 0-d index": lambda lib: lib.zeros(4, dtype=lib.float64).scatter_reduce(
        0, lib.tensor(1), lib.arange(6.0, dtype=lib.float64) + 3, "mean", include_self=False),
    "scatter 0-d index": lambda lib: lib.zeros(4).scatter(0, lib.tensor(2), lib.arange(6.0) + 5),
    "scatter_add 0-d index and src": lambda lib: lib.zeros(3).scatter_add(
        0, lib.tensor(1), lib.tensor(3.0)),
    "scatter_reduce 0-d src": lambda lib: lib.arange(4.0).scatter_reduce(
        0, lib.tensor(1), lib.tensor(9.0), "prod"),
    # clamp refuses complex values after its loop's broadcast and in-place output checks
    "clamp_ complex bound shape": lambda lib: lib.zeros(3, dtype=lib.float64).clamp_(
        lib.zeros((), dtype=lib.int32), lib.zeros(3, 1, dtype=lib.complex128)),
    "clamp_ complex bound cast": lambda lib: lib.zeros(2, 3).clamp_(
        lib.zeros(2, 3, dtype=lib.complex64)),
    "clamp_min complex broadcast": lambda lib: lib.zeros(3, 3, dtype=lib.int64).clamp_min(
        lib.zeros(2, 3, 4, dtype=lib.complex128)),
    "clamp_min_ complex input broadcast": lambda lib: lib.zeros(
        2, 1, 3, dtype=lib.complex64).clamp_min_(lib.zeros(2, 3, 4, dtype=lib.complex64)),
    "clamp_ complex input first": lambda lib: lib.zeros((), dtype=lib.complex128).clamp_(
        lib.zeros(1, dtype=lib.int64), lib.zeros(2, 3, dtype=lib.float64)),
    "clamp complex input before broadcast": lambda lib: lib.clamp(
        lib.zeros(3, 3, dtype=lib.complex128), max=lib.zeros(0, 3, dtype=lib.int32)),
    "clamp_max_ complex number first": lambda lib: lib.zeros(
        0, 3, dtype=lib.int64).clamp_max_(1.5 - 0.5j),
    "clip_ complex number cast": lambda lib: lib.zeros(2, dtype=lib.uint8).clip_(1.5 - 0.5j),
    "clamp complex input": lambda lib: lib.zeros(3, dtype=lib.complex64).clamp(0, 1),
    "copysign complex broadcast": lambda lib: lib.zeros(0, 3, dtype=lib.int16).copysign(
        lib.zeros(3, 3, dtype=lib.complex64)),
    "copysign_ complex cast": lambda lib: lib.zeros(3).copysign_(
        lib.zeros(3, dtype=lib.complex64)),
    "xlogy_ complex shape": lambda lib: lib.zeros(3).xlogy_(lib.zeros(2, 3, dtype=lib.complex64)),
    # torch's Python F.hardswish tests `inplace` first; F.grid_sample checks its modes before
    # the builtin's parser; multilabel_margin_loss refuses an empty vector
    "hardswish tensor inplace": lambda lib: lib.nn.functional.hardswish(False, lib.zeros(0)),
    "grid_sample bad mode first": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(0), lib.zeros(3, 1), "none", align_corners=lib.float16),
    "grid_sample bad padding first": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(()), "bogus", padding_mode=lib.zeros(3, 1)),
    "grid_sample grid type": lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 3, 3),
                                                                      "x"),
    "multilabel_margin_loss empty": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(0), lib.zeros(0, dtype=lib.long)),
    # matrix_rank's and pinv's tensor tolerances: one per matrix, broadcast against the batch
    "matrix_rank empty with tensor atol": lambda lib: lib.linalg.matrix_rank(
        lib.ones(0, 3), atol=lib.ones(2, 3)),
    "matrix_rank atol per matrix": lambda lib: lib.linalg.matrix_rank(
        _low_rank_batch(lib), atol=lib.tensor([0.1, 0.1, 0.1, 100.0])),
    "matrix_rank atol broadcast": lambda lib: lib.linalg.matrix_rank(
        _low_rank_batch(lib), atol=lib.tensor([[0.1], [3.0]])),
    "matrix_rank rtol per matrix": lambda lib: lib.linalg.matrix_rank(
        _low_rank_batch(lib), rtol=lib.tensor([0.0, 0.5, 0.9, 1e-7])),
    "pinv atol per matrix": lambda lib: lib.linalg.pinv(
        _low_rank_batch(lib), atol=lib.tensor([0.1, 0.1, 0.1, 100.0])),
    "pinv rtol broadcast": lambda lib: lib.linalg.pinv(
        _low_rank_batch(lib)[0], rtol=lib.tensor([0.1, 0.9])),
    # ldl_solve checks B against LD (dtype, then sizes) before the pivots
    "ldl_solve B dtype before its rank": lambda lib: lib.linalg.ldl_solve(
        lib.ones(2, 4, 4, dtype=lib.float64), lib.zeros(4, dtype=lib.int64),
        lib.ones(4, dtype=lib.int64)),
    "ldl_solve B rank before pivots": lambda lib: lib.linalg.ldl_solve(
        lib.ones(2, 4, 4, dtype=lib.float64), lib.zeros(2, 4), lib.ones(4, dtype=lib.float64)),
    "ldl_solve pivots shape before dtype": lambda lib: lib.linalg.ldl_solve(
        lib.ones(2, 4, 4, dtype=lib.float64), lib.zeros(4),
        lib.ones(4, 1, dtype=lib.float64)),
    # a list index inside a tuple key: its tensors are read through __index__
    "getitem list of tensors": lambda lib: lib.arange(12.0).reshape(4, 3)[
        :, [lib.tensor(2), lib.tensor([1]), lib.tensor(True), 0]],
    "getitem list of long tensors": lambda lib: lib.arange(12.0).reshape(4, 3)[
        :, [lib.tensor([1, 2]), lib.tensor([0])]],
    "getitem list of float tensors": lambda lib: lib.arange(12.0).reshape(4, 3)[
        :, [lib.tensor(1.0), 2]],
    "getitem ragged list": lambda lib: lib.arange(12.0).reshape(4, 3)[:, [[1, 2], [0]]],
    # torch.unflatten wraps the dim first; Tensor.unflatten (Python in torch) tests sizes first
    "unflatten dim before sizes": lambda lib: lib.unflatten(lib.ones(4), 3, ()),
    "Tensor.unflatten sizes before dim": lambda lib: lib.ones(4).unflatten(3, ()),
    "Tensor.unflatten None sizes": lambda lib: lib.ones(0).unflatten(lib.float32, None),
    "hardsigmoid tensor inplace": lambda lib: lib.nn.functional.hardsigmoid(
        lib.ones(3, 3, dtype=lib.int16), lib.ones(2, 3)),
    "floor_divide_ complex shape": lambda lib: lib.ones(()).floor_divide_(
        lib.ones(1, 3, dtype=lib.complex64)),
    "floor_divide_ complex number cast": lambda lib: lib.ones(
        2, 3, dtype=lib.int8).floor_divide_(1.5 - 0.5j),
    "div floor complex broadcast": lambda lib: lib.div(lib.ones(2, 3, dtype=lib.complex128),
                                                       lib.ones(4), rounding_mode="floor"),
    # histc: bins and range before the dtype; histogram: range's length and the dtype before
    # the weight; histogramdd: the dtype, then one bin count per dim
    "histc bins before dtype": lambda lib: lib.ones(0, 3, dtype=lib.int64).histc(-3, max=0.2),
    "histc range before dtype": lambda lib: lib.ones(3, 3, dtype=lib.int8).histc(min=2),
    "histogram range length before dtype": lambda lib: lib.ones(
        3, 3, dtype=lib.complex128).histogram(range=(-2, 0, 4)),
    "histogram dtype before weight": lambda lib: lib.histogram(
        lib.ones(2, 3, dtype=lib.bfloat16), weight=lib.ones(1, 3, dtype=lib.int64)),
    "histogramdd bins per dim": lambda lib: lib.histogramdd(lib.ones(2, 3, 4), []),
    "histogramdd dtype": lambda lib: lib.histogramdd(lib.ones(5, 2, dtype=lib.int64), [3, 2]),
    "histogramdd counts": lambda lib: lib.histogramdd(
        lib.arange(10.0).reshape(5, 2), [3, 2])[0],
    # a negative size other than -1 for a size-1 dim (NumPy's ValueError leaked)
    "broadcast_to negative size": lambda lib: lib.ones(1).broadcast_to([-2]),
    "expand negative size of a size-1 dim": lambda lib: lib.ones(1, 3).expand(3, -2, 3),
    "expand negative size of another dim": lambda lib: lib.ones(2, 3).expand(-3, 3),
    # lerp's 0-d tensor weight takes part in type promotion
    "lerp 0-d float32 weight of 0-d halves": lambda lib: lib.lerp(
        lib.ones((), dtype=lib.float16), lib.full((), 3.0, dtype=lib.float16), lib.tensor(0.25)),
    "lerp complex 0-d weight": lambda lib: lib.lerp(lib.ones(3), lib.full((3,), 3.0),
                                                    lib.tensor(0.5j)),
    "lerp float64 0-d weight of half vectors": lambda lib: lib.lerp(
        lib.ones(3, dtype=lib.float16), lib.full((3,), 3.0, dtype=lib.float16),
        lib.tensor(0.5, dtype=lib.float64)),
    # randint_like's tensor `high` is a CPU scalar
    "randint_like 1-d high": lambda lib: lib.randint_like(lib.zeros(3), lib.tensor([5])),
    "randint_like 0-d high": lambda lib: lib.randint_like(lib.zeros(3), lib.tensor(1)),
    # handle_torch_function tries exact Tensors too: their default calls the function
    "handle_torch_function not callable": lambda lib: lib.overrides.handle_torch_function(
        -4, (lib.ones(3),), 1),
    "handle_torch_function plain tensors": lambda lib: lib.overrides.handle_torch_function(
        lib.add, (lib.ones(3), lib.ones(3)), lib.ones(3), 2),
    # a strided mask: PyTorch has no sparse_mask kernel for it
    "sparse_mask strided mask": lambda lib: lib.zeros(2, 2).sparse_mask(lib.zeros(2, 2)),
    "sparse_mask 0-d strided": lambda lib: lib.zeros(()).sparse_mask(lib.zeros(1, 1, 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_agrees_with_torch(name):
    call = CASES[name]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")   # (deprecation notes of torch.nuclear_norm and co.)
        assert _outcome(ember, call) == _outcome(torch, call)


@pytest.mark.parametrize("name", ["gcd_ float shape", "lcm_ float cast",
                                  "add_ int shape before cast", "bitwise_xor_ float shape"])
def test_inplace_output_errors_say_what_torch_says(name):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            CASES[name](lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _doubled(lib):
    return lib.ones(2, requires_grad=True) * 2


# Tensor.backward checks in PyTorch's order: the gradients' types, then retain_graph and
# create_graph as its engine binding reads them (an unsigned char through __index__), then the
# roots and `inputs`
BACKWARD_CASES = {
    "string gradient": lambda lib: lib.ones(2, 3, dtype=lib.bfloat16).backward("sum"),
    "tensor create_graph": lambda lib: lib.ones(1, 3).backward(
        create_graph=lib.ones(2, 3, dtype=lib.bool)),
    "None create_graph": lambda lib: lib.ones(()).backward(create_graph=None),
    "tensor retain_graph before inputs": lambda lib: lib.ones(3, 1).backward(
        retain_graph=lib.ones(2, 1, 3, dtype=lib.int8), inputs=[lib.ones(2)]),
    "negative retain_graph": lambda lib: lib.ones(3).backward(retain_graph=-4),
    "retain_graph past a byte": lambda lib: lib.ones(3).backward(retain_graph=300),
    "int retain_graph": lambda lib: _doubled(lib).sum().backward(retain_graph=2),
    "one-element int tensor flag": lambda lib: _doubled(lib).sum().backward(
        retain_graph=lib.tensor([1])),
    "float tensor flag": lambda lib: _doubled(lib).sum().backward(retain_graph=lib.tensor(1.0)),
    "inputs that need no grad": lambda lib: _doubled(lib).sum().backward(inputs=[lib.ones(2)]),
    "root and inputs that need no grad": lambda lib: lib.ones(2).sum().backward(
        inputs=[lib.ones(2)]),
    "int root": lambda lib: lib.ones(4, dtype=lib.int64).backward(),
    "gradient of another shape": lambda lib: _doubled(lib).sum().backward(lib.ones(3)),
}


@pytest.mark.parametrize("name", list(BACKWARD_CASES))
def test_backward_argument_errors_say_what_torch_says(name):
    outcomes = []
    for lib in (ember, torch):
        try:
            BACKWARD_CASES[name](lib)
            outcomes.append("returned")
        except Exception as exc:   # the type and the message are what is compared
            outcomes.append((type(exc).__name__, str(exc).replace("torch.", "")))
    assert outcomes[0] == outcomes[1]


_COMPLEX_DET_LOSSES = {
    "logdet": lambda lib, a: (lambda r: r.real.sum() * 2 + r.imag.sum() * 3)(lib.logdet(a)),
    "slogdet sign and logabsdet": lambda lib, a: (lambda s: (s[0] * lib.tensor(
        [1 + 2j, 3 - 1j], dtype=s[0].dtype)).real.sum() + s[1].sum() * 0.5)(
            lib.linalg.slogdet(a)),
    "slogdet sign alone": lambda lib, a: lib.linalg.slogdet(a)[0].imag.sum(),
}


@pytest.mark.parametrize("name", list(_COMPLEX_DET_LOSSES))
def test_complex_determinant_values_and_gradients_match_torch(name):
    # logdet of a complex matrix is the complex log of its determinant; slogdet's sign carries
    # a gradient (its angle's) for complex input
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a).requires_grad_()
        loss = _COMPLEX_DET_LOSSES[name](lib, x)
        loss.backward()
        results.append((loss.item(), np.asarray(x.grad.tolist())))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)
