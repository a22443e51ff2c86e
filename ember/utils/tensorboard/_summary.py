"""Summary protobufs built as PyTorch's writer builds them (tags kept as given, its scaling
and type rules), from tensorboardX's protobuf classes and helpers."""
import io
import wave

import numpy as np

from ..._tensor import Tensor
from ._convert import make_np, to_float
from ._tbx import tbx

_pb = tbx.proto.summary_pb2
Summary, SummaryMetadata = _pb.Summary, _pb.SummaryMetadata
TensorProto = tbx.proto.tensor_pb2.TensorProto
TensorShapeProto = tbx.proto.tensor_shape_pb2.TensorShapeProto


def scalar(tag, value, new_style=False, double_precision=False):
    v = to_float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    proto = (TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[v], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def _half_bits(a):
    # PyTorch stores each half value as the bit pattern of its float32 value, in half_val.
    return np.asarray(a, np.float32).reshape(-1).view(np.int32).tolist()


def _complex_parts(a):
    return np.stack([a.real, a.imag], -1).reshape(-1).tolist()


def _values(a):
    return a.reshape(-1).tolist()


# NumPy dtype name -> (TensorProto dtype, value field, conversion), PyTorch's table.
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "float32": ("DT_FLOAT", "float_val", _values),
    "float64": ("DT_DOUBLE", "double_val", _values),
    "int8": ("DT_INT8", "int_val", _values),
    "uint8": ("DT_UINT8", "uint32_val", _values),
    "int16": ("DT_INT16", "int_val", _values),
    "int32": ("DT_INT32", "int_val", _values),
    "int64": ("DT_INT64", "int64_val", _values),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", _values),
}


def tensor_proto(tag, tensor):
    is_bf16 = isinstance(tensor, Tensor) and tensor.dtype.np.kind == "V"
    a = make_np(tensor)
    if a.nbytes >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if is_bf16:
        kind = ("DT_BFLOAT16", "half_val", _half_bits)
    elif a.dtype.name in _TENSOR_TYPES:
        kind = _TENSOR_TYPES[a.dtype.name]
    else:
        raise ValueError(f"{tag} has unsupported tensor dtype {a.dtype}")
    dtype, field, convert = kind
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in a.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape, **{field: convert(a)})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def histogram(tag, values, bins, max_bins=None):
    hist = tbx.summary.make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = _pb.HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                              bucket_limit=make_np(bucket_limits).tolist(),
                              bucket=make_np(bucket_counts).tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def to_uint8_hwc(tensor, dataformats):
    """An image as HWC uint8: float images are taken as [0, 1] (scaled by 255 and clipped),
    uint8 ones as [0, 255], as PyTorch does."""
    a = tbx.utils.convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if a.dtype == np.uint8 else 255
    return (a.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    img = tbx.summary.make_image(to_uint8_hwc(tensor, dataformats), rescale=rescale)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    img = to_uint8_hwc(tensor_image, dataformats)
    img = tbx.summary.make_image(img, rescale=rescale, rois=make_np(tensor_boxes),
                                 labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def audio(tag, tensor, sample_rate=44100):
    a = make_np(tensor).squeeze()
    if np.abs(a).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        a = a.clip(-1, 1)
    if a.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (a * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    snd = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                        encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=snd)])


_HPARAMS = "hparams"
_TAGS = ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info")


def _hparams_summary(tag, **content):
    data = tbx.proto.plugin_hparams_pb2.HParamsPluginData(version=0, **content)
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=_HPARAMS, content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    from google.protobuf import struct_pb2  # (optional: protobuf, tensorboardX's dependency)
    api = tbx.proto.api_pb2
    plugin = tbx.proto.plugin_hparams_pb2
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    discrete = dict(discrete)
    for k, v in discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos = []
    ssi = plugin.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # NOTE: PyTorch tests int/float before bool, so True is logged as the number 1.0.
        if isinstance(v, (int, float)):
            field, dtype, v = "number_value", "DATA_TYPE_FLOAT64", float(v)
        elif isinstance(v, str):
            field, dtype = "string_value", "DATA_TYPE_STRING"
        elif isinstance(v, bool):
            field, dtype = "bool_value", "DATA_TYPE_BOOL"
        else:
            try:
                v = float(make_np(v).reshape(-1)[0])
            except (NotImplementedError, IndexError, TypeError, ValueError):
                raise ValueError("value should be one of int, float, str, bool, or "
                                 "torch.Tensor") from None
            field, dtype = "number_value", "DATA_TYPE_FLOAT64"
            discrete.pop(k, None)
        setattr(ssi.hparams[k], field, v)
        domain = None
        if k in discrete:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in discrete[k]])
        infos.append(api.HParamInfo(name=k, type=api.DataType.Value(dtype),
                                    domain_discrete=domain))
    metrics = [api.MetricInfo(name=api.MetricName(tag=k)) for k in metric_dict]
    exp = _hparams_summary(_TAGS[0], experiment=api.Experiment(hparam_infos=infos,
                                                                metric_infos=metrics))
    start = _hparams_summary(_TAGS[1], session_start_info=ssi)
    end = _hparams_summary(_TAGS[2], session_end_info=plugin.SessionEndInfo(
        status=api.Status.Value("STATUS_SUCCESS")))
    return exp, start, end


__all__ = ["scalar", "tensor_proto", "histogram", "histogram_raw", "image", "image_boxes",
           "audio", "hparams"]
