"""JitScalarType: PyTorch's scalar types by number, with their names, dtypes and ONNX types."""
import enum

from .. import _dtype
from .errors import OnnxExporterError

# member: (scalar name, C++ name, ember dtype name or None where ember has no such dtype,
#          TensorProtoDataType member name)
_TABLE = {
    "UINT8": ("Byte", "uint8_t", "uint8", "UINT8"),
    "INT8": ("Char", "int8_t", "int8", "INT8"),
    "INT16": ("Short", "int16_t", "int16", "INT16"),
    "INT": ("Int", "int", "int32", "INT32"),
    "INT64": ("Long", "int64_t", "int64", "INT64"),
    "HALF": ("Half", "half", "float16", "FLOAT16"),
    "FLOAT": ("Float", "float", "float32", "FLOAT"),
    "DOUBLE": ("Double", "double", "float64", "DOUBLE"),
    "COMPLEX32": ("ComplexHalf", "complex32", None, "UNDEFINED"),
    "COMPLEX64": ("ComplexFloat", "complex64", "complex64", "COMPLEX64"),
    "COMPLEX128": ("ComplexDouble", "complex128", "complex128", "COMPLEX128"),
    "BOOL": ("Bool", "bool", "bool", "BOOL"),
    "QINT8": ("QInt8", "qint8", None, "INT8"),
    "QUINT8": ("QUInt8", "quint8", None, "UINT8"),
    "QINT32": ("QInt32", "qint32", None, "INT32"),
    "BFLOAT16": ("BFloat16", "bfloat16", "bfloat16", "BFLOAT16"),
    "FLOAT8E5M2": ("Float8E5M2", "float8_e5m2", None, "FLOAT8E5M2"),
    "FLOAT8E4M3FN": ("Float8E4M3FN", "float8_e4m3fn", None, "FLOAT8E4M3FN"),
    "FLOAT8E5M2FNUZ": ("Float8E5M2FNUZ", "float8_e5m2fnuz", None, "FLOAT8E5M2FNUZ"),
    "FLOAT8E4M3FNUZ": ("Float8E4M3FNUZ", "float8_e4m3fnuz", None, "FLOAT8E4M3FNUZ"),
}


class JitScalarType(enum.IntEnum):
    """Scalar types as PyTorch numbers them (its c10::ScalarType order)."""

    UINT8 = 0
    INT8 = 1
    INT16 = 2
    INT = 3
    INT64 = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    COMPLEX32 = 8
    COMPLEX64 = 9
    COMPLEX128 = 10
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    FLOAT8E5M2 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E5M2FNUZ = 18
    FLOAT8E4M3FNUZ = 19
    UNDEFINED = 20

    @classmethod
    def from_dtype(cls, dtype):
        if not isinstance(dtype, _dtype.dtype):
            raise OnnxExporterError(f"Unknown dtype: {dtype}")
        for name, row in _TABLE.items():
            if row[2] == dtype.name:
                return cls[name]
        raise OnnxExporterError(f"Unknown dtype: {dtype}")

    @classmethod
    def from_onnx_type(cls, onnx_type):
        # (several scalar types share an ONNX type: the last listed answers, as PyTorch's)
        found = {row[3]: cls[name] for name, row in _TABLE.items()}
        from . import TensorProtoDataType   # (cycle: ember.onnx imports this module)
        try:
            key = TensorProtoDataType(int(onnx_type)).name
        except ValueError:
            raise OnnxExporterError(f"Unknown onnx_type: {onnx_type}") from None
        if key not in found:
            raise OnnxExporterError(f"Unknown onnx_type: {onnx_type}")
        return found[key]

    def scalar_name(self):
        return _TABLE[self.name][0]

    def torch_name(self):
        return _TABLE[self.name][1]

    def dtype(self):
        name = _TABLE[self.name][2]
        if name is None:
            raise TypeError(f"ember has no dtype for {self.name} (torch.{self.torch_name()})")
        return getattr(_dtype, name)

    def onnx_type(self):
        from . import TensorProtoDataType   # (cycle: as above)
        return TensorProtoDataType[_TABLE[self.name][3]]

    def onnx_compatible(self):
        return _TABLE[self.name][3] != "UNDEFINED" and self.name != "UNDEFINED"


JitScalarType.__module__ = "ember.onnx"
