"""Questions a tensor answers about itself, as methods and (where torch has them) functions:
is_nonzero, is_conj, is_neg, is_inference, is_signed, is_same_size, const_data_ptr."""
from .registry import METHODS, check_tensor, export


def _query(method):
    """Tensor.<name>() and torch.<name>(input), the latter checking its argument."""
    name = method.__name__

    def function(input):
        check_tensor(name, input)
        return method(input)
    function.__name__ = function.__qualname__ = name
    export(function, method=False)
    METHODS[name] = method
    return method


# NOTE: ember's conj() and neg() materialise their results, so no tensor carries PyTorch's
# lazy conjugate or negative bit.
@_query
def is_conj(self):
    return False


@_query
def is_neg(self):
    return False


# NOTE: ember's inference_mode only switches recording off; it does not mark the tensors
# made inside it, so none reads as an inference tensor (PyTorch's would answer True).
@_query
def is_inference(self):
    return False


@export(method=False)  # (Tensor.is_signed is a method of the class itself)
def is_signed(input):
    check_tensor("is_signed", input)
    return input.dtype.is_signed


@export(method=False)
def is_same_size(input, other):
    check_tensor("is_same_size", input)
    check_tensor("is_same_size", other, "other", 2)
    return input._data.shape == other._data.shape


def _is_same_size_method(self, other):
    check_tensor("is_same_size", other, "other", 1)
    return self._data.shape == other._data.shape


METHODS["is_same_size"] = _is_same_size_method


def is_nonzero(self):
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self._data.reshape(-1)[0])


def const_data_ptr(self):
    return self.data_ptr()


METHODS.update({"is_nonzero": is_nonzero, "const_data_ptr": const_data_ptr})
