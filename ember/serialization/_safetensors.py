"""safetensors files: an 8-byte header length, a JSON header, then raw little-endian data.

Written and read here directly (the format is small and fixed), byte-compatible with the
safetensors package, bfloat16 included."""
import struct

import numpy as np

from .. import _dtype as dt
from .._tensor import _wrap

_CODES = {dt.float64: "F64", dt.float32: "F32", dt.float16: "F16", dt.bfloat16: "BF16",
          dt.int64: "I64", dt.int32: "I32", dt.int16: "I16", dt.int8: "I8", dt.uint8: "U8",
          dt.bool: "BOOL", dt.complex64: "C64"}
_DTYPES = {code: d for d, code in _CODES.items()}


def save_safetensors(tensors, filename, metadata=None):
    """Write a dict of name -> tensor (contiguous copies) to `filename`."""
    import json  # (not at module level: `import ember` stays lean)
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        array = np.ascontiguousarray(t.detach()._host())
        nbytes = array.nbytes
        header[name] = {"dtype": _CODES[t.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + nbytes]}
        chunks.append(array)
        offset += nbytes
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes
    with open(filename, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for array in chunks:
            f.write(memoryview(array.reshape(-1).view(np.uint8)) if array.size else b"")


def load_safetensors(filename, device="cpu"):
    """Read a safetensors file into a dict of name -> tensor."""
    import json  # (not at module level: `import ember` stays lean)
    with open(filename, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise RuntimeError(f"{filename} is not a safetensors file (too short)")
        (n,) = struct.unpack("<Q", raw)
        try:
            header = json.loads(f.read(n))
        except (ValueError, UnicodeDecodeError):
            raise RuntimeError(f"{filename} is not a safetensors file (bad header)") from None
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        d = _DTYPES[info["dtype"]]
        start, end = info["data_offsets"]
        if end > len(data):
            raise RuntimeError(f"{filename} is truncated: tensor {name!r} needs bytes "
                               f"{start}..{end} of {len(data)}")
        array = np.frombuffer(bytearray(data[start:end]), dtype=d.np).reshape(info["shape"])
        t = _wrap(array, d)
        out[name] = t if device == "cpu" else t.to(device)
    return out
