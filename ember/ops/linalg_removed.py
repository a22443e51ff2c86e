"""torch.eig, torch.lstsq, torch.solve and torch.symeig (and their Tensor methods): removed from
PyTorch in 1.9 but still present as callables that raise, saying what replaces them. ember keeps
them for the same reason: a program that calls one learns the replacement, not an
AttributeError."""
from .registry import export

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "

_EIG = (_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")

_LSTSQ = (_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about "
          "the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
          "residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking "
          "of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be "
          "replaced with:\nX = torch.linalg.lstsq(A, B).solution")

_SOLVE = (_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
          "with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
          "be replaced with:\nX = torch.linalg.solve(A, B)")

_SYMEIG = (_REMOVED + "The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
           "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
           "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
           "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


@export(method=False, name="eig")
def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_EIG)


@export(function=False, name="eig")
def eig_method(self, eigenvectors=False):
    raise RuntimeError(_EIG)


@export(method=False, name="lstsq")
def lstsq(input, A, *, out=None):
    raise RuntimeError(_LSTSQ)


@export(function=False, name="lstsq")
def lstsq_method(self, other):
    raise RuntimeError(_LSTSQ)


@export(method=False, name="solve")
def solve(input, A, *, out=None):
    raise RuntimeError(_SOLVE)


@export(function=False, name="solve")
def solve_method(self, other):
    raise RuntimeError(_SOLVE)


@export(method=False, name="symeig")
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_SYMEIG)


@export(function=False, name="symeig")
def symeig_method(self, eigenvectors=False):
    raise RuntimeError(_SYMEIG)


for _name, _method in (("eig", eig_method), ("lstsq", lstsq_method), ("solve", solve_method),
                       ("symeig", symeig_method)):
    _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"   # in TypeErrors
