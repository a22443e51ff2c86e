"""Known disagreements between ember and torch 2.13, each with its reason. The CI round fails
only on disagreements of targets not listed here."""

# Targets not fuzzed at all: they change global state, touch files or processes, take
# callables, or their results cannot be compared (addresses, uninitialised memory).
NOT_FUZZED = {
    # global state: seeds, threads, defaults, autocast, print options, determinism
    "torch.manual_seed", "torch.seed", "torch.set_rng_state", "torch.set_default_dtype",
    "torch.set_num_threads", "torch.set_num_interop_threads", "torch.set_printoptions",
    "torch.set_float32_matmul_precision", "torch.use_deterministic_algorithms",
    "torch.set_autocast_cache_enabled", "torch.set_autocast_dtype",
    "torch.set_autocast_enabled", "torch.clear_autocast_cache", "torch.set_autocast_cpu_dtype",
    "torch.set_autocast_cpu_enabled", "torch.set_autocast_gpu_dtype", "torch.set_anomaly_enabled",
    "torch.set_default_device", "torch.set_default_tensor_type", "torch.set_flush_denormal",
    "torch.set_deterministic_debug_mode", "torch.set_warn_always",
    # callables, futures and control flow: they call what they are given
    "torch.cond", "torch.while_loop", "torch.fork", "torch.wait",
    # files, compilation
    "torch.save", "torch.load", "torch.compile", "torch.from_file",
    # uninitialised memory: only the values differ, and they are garbage on both
    "torch.empty", "torch.empty_like", "torch.empty_strided", "Tensor.new_empty",
    "Tensor.new_empty_strided", "Tensor.resize_", "Tensor.resize_as_", "torch.resize_as_",
    # torch 2.13 itself crashes (segmentation fault) on some fuzzed arguments: lu_unpack
    # with pivots that do not match LU (empty ones); the op table checks it on valid ones
    "torch.lu_unpack", "op_db.lu_unpack",
    # addresses, storages, shared memory, hooks and callables
    "Tensor.data_ptr", "Tensor.const_data_ptr", "Tensor.storage", "Tensor.untyped_storage",
    "Tensor.share_memory_", "Tensor.pin_memory", "Tensor.register_hook",
    "Tensor.register_post_accumulate_grad_hook", "Tensor.apply_", "Tensor.map_",
    "Tensor.cuda", "Tensor.as_subclass",
}

# target name -> why its disagreements are accepted.
_GROUPS = [
    (
        "losses with a float32/bfloat16 intermediate (the log-sigmoid of multilabel_soft_margin "
        "and binary_cross_entropy_with_logits, kl_div's xlogy of the target, poisson_nll's "
        "exp/log of an integer or bool input in torch's default dtype): ember's kernels and "
        "torch's differ there by an ulp, and a float64 or complex operand promotes the loss, "
        "compared at that dtype's tolerance",
        ('F.multilabel_soft_margin_loss',
         'F.kl_div',
         'F.poisson_nll_loss',
         'torch.binary_cross_entropy_with_logits',
         'torch.kl_div',)),
    (
        "multi_margin_loss of an empty batch: torch's kernel returns uninitialised memory "
        "(a different value on each call, in the input's dtype even for integers)",
        ('F.multi_margin_loss',)),
    (
        "fft: torch's MKL rejects some n / empty configurations ember computes "
        "('Intel oneMKL DFTI ERROR: Inconsistent configuration parameters')",
        ('op_db.fft.fft',
         'op_db.fft.ifft',
         'op_db.fft.fft_complex',
         'op_db.fft.fft2_complex',
         'op_db.fft.ifft2_complex',
         'op_db.fft.irfft2_complex',
         'op_db.fft.hfft',
         'op_db.fft.hfft2_complex',
         'op_db.fft.irfft',
         'op_db.fft.irfft_complex',)),
    (
        "torch's float64 Bessel/Airy kernels are float32-accurate (see op_db/special.py); "
        "values differ beyond the fuzzer's float64 tolerance",
        ('op_db.special.airy_ai',
         'op_db.special.bessel_j0',
         'op_db.special.bessel_j1',
         'op_db.special.bessel_y0',
         'op_db.special.bessel_y1',)),
    (
        "torch's Python wrappers touch their arguments before the builtin's type check "
        "(`if reduce:` on a tensor: 'Boolean value of Tensor ... is ambiguous'; input.size(), "
        ".layout, .shape on a non-tensor: AttributeError; warnings.warn(stacklevel=tensor)); "
        "ember checks the types first and raises TypeError: both reject the call",
        ('op_db.einsum (sublist form)',)),
    (
        "lobpcg is an iterative solver from a random start: ember's iteration (NumPy-based "
        "Rayleigh-Ritz) is not PyTorch's, so results agree only to the solver tolerance and "
        "degenerate inputs fail inside the iteration with other errors",
        ('torch.lobpcg',)),
    (
        "mixed or integral dtypes torch's kernel refuses ('expected scalar type Half but found "
        "Int', 'kl_div: Integral inputs not supported', "
        "'Index put requires the source and destination dtypes match', "
        "cross/layer_norm/bmm operands of two dtypes); ember promotes or casts and "
        "computes (follow-up: bmm lives in ops/matmul)",
        ('F.bilinear',
         'Tensor.cross',
         'op_db.bmm',
         'op_db.layer_norm',
         'op_db.setitem',
         'op_db.searchsorted',)),
    (
        "shape edge cases: torch skips the dim check of an empty tensor (cummin), "
        "names 0-d cross/index_put/tensordot operands with other errors; ember "
        "raises where torch returns or the other way round (follow-up)",
        ('Tensor.cummin',
         'op_db.index_put',
         'op_db.repeat_interleave_counts',)),
    (
        "complex Python numbers: torch's scalar conversion fails with RuntimeError ('value "
        "cannot be converted to type double without overflow') or accepts 3+0j (arange); "
        "ember's float() of the complex raises TypeError or computes with the real part",
        ('torch.celu_',
         'torch.std_mean',
         'torch.arange',)),
    (
        "features ember does not have, refused with an error saying so: complex32 (chalf is "
        "complex64), uint64 results (hash_tensor), MKL-DNN tensors, "
        "DLPack capsules of other libraries",
        ('Tensor.chalf',
         'Tensor.hash_tensor',
         'torch.hash_tensor',
         'Tensor.to_mkldnn',
         'torch.from_dlpack',)),
    (
        "names: typename of a dtype is 'ember.dtype' (ember's public objects carry its module "
        "name, as their reprs do: ember.float32)",
        ('torch.typename',)),
    (
        "get_file_path joins its components to the directory that holds the package: each "
        "library's own install location",
        ('torch.get_file_path',)),
    (
        "DLPack has no bfloat16 code NumPy can export (torch's own exporter has one); ember's "
        "to_dlpack of a bfloat16 tensor raises NumPy's BufferError",
        ('torch.to_dlpack',)),
    (
        "torch's Python wrappers touch their arguments before any type check (`A.shape` on a "
        "dtype, `input.size()` on None: AttributeError); ember raises the parser's TypeError",
        ('op_db.batch_norm',)),
    (
        "torch quirks: unique_consecutive given return_inverse positionally returns an empty "
        "inverse; slice_inverse refuses complex outputs that require grad although it is "
        "not differentiated; max_pool1d reads a bad kernel_size/padding as another error",
        ('torch.unique_consecutive',
         'torch.slice_inverse',
         'torch.max_pool1d',)),
    (
        "strides of an empty tensor: torch.tensor() of a NumPy array copies its strides, and "
        "NumPy 2 gives every empty array zero strides; ember's tensors are NumPy arrays, and it "
        "reports torch's contiguous strides for every C-contiguous one (torch.zeros(0, 3)'s), "
        "as it cannot tell where an empty array came from",
        ('Tensor.stride',)),
    (
        "logit with eps above 0.5: the clamp bounds cross; torch's kernel and NumPy's clip "
        "resolve the crossed bounds differently",
        ('torch.logit',)),
]
ALLOWED = {name: reason for reason, names in _GROUPS for name in names}


# Classes of disagreement that come from one known design difference each, not from a bug of
# one op. A disagreement is (torch's outcome, ember's outcome); an outcome is ("ok", value) or
# ("raise", exception). Each class: name -> (predicate, reason).
def _raised(outcome, *kinds):
    return outcome[0] == "raise" and (not kinds or _builtin(outcome[1]) in kinds)


def _builtin(exc):
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(exc).__name__


_PARSER_WORDS = ("must be", "invalid combination of arguments", "takes no arguments",
                 "positional argument", "missing", "got an unexpected keyword",
                 "received an invalid", "failed to unpack", "takes 0 positional")


def _parser_error(outcome):
    return _raised(outcome, "TypeError") and any(w in str(outcome[1]) for w in _PARSER_WORDS)


CLASSES = {
    "argument parser": (
        lambda t, e: _parser_error(t) and e[0] == "raise",
        "torch's generated argument parser type-checks every argument before the op runs; "
        "ember checks an argument where it uses it, so when a call has a wrongly typed "
        "argument and another error, ember may report the other error first (both raise)."),
    "lenient argument": (
        lambda t, e: _parser_error(t) and e[0] == "ok",
        "ember accepts an argument of a kind torch's parser rejects (a 0-d tensor, NumPy "
        "scalar, float or list where torch wants an int, bool or tuple) and computes with it; "
        "no valid torch program changes behaviour."),
    "check order": (
        lambda t, e: _raised(t, "RuntimeError", "IndexError", "NotImplementedError",
                             "ValueError") and
        _raised(e, "RuntimeError", "IndexError", "NotImplementedError", "ValueError") and
        ("NotImplementedError" in (_builtin(t[1]), _builtin(e[1])) or
         "Dimension" in str(t[1]) or "must be" in str(e[1]) or "Expected" in str(e[1])),
        "a call with two errors (a shape or dimension error and an unsupported dtype or "
        "index type): torch's TensorIterator/kernel checks one first, ember the other; "
        "both raise, with a correct message for one of the two errors."),
    "negative size": (
        lambda t, e: t[0] == "ok" and any(s < 0 for s in getattr(t[1], "shape", ())),
        "torch returns a tensor with a negative dimension (an empty tensor expanded to a new "
        "leading size -2: shape [-2, 0]); a NumPy array cannot have one, and ember raises the "
        "error torch gives for the non-empty case."),
    "complex32 view": (
        lambda t, e: t[0] == "ok" and _raised(e, "RuntimeError") and
        "gives ComplexHalf, which ember lacks" in str(e[1]),
        "ember has no complex32: view_as_complex of a float16 tensor, whose view torch gives "
        "as complex32, is refused with an error saying so."),
    "dtype coverage": (
        lambda t, e: _raised(t, "NotImplementedError") and e[0] == "ok",
        "torch's CPU kernel is not compiled for this dtype (\"... not implemented for "
        "'ComplexFloat'\"); ember's NumPy kernel computes it."),
}


# Classes of disagreement between two results: name -> (predicate on the comparison's
# reason, reason).
RESULT_CLASSES = {
    "complex32": (
        lambda why: why.endswith("dtype complex64 != torch complex32"),
        "ember has no complex32: a float16 operand with a complex one gives complex64 where "
        "torch gives complex32 (ComplexHalf), as chalf does."),
}


def classify_result(why):
    """The RESULT_CLASSES name that explains a disagreement of two results, or None."""
    for name, (predicate, _) in RESULT_CLASSES.items():
        if predicate(why):
            return name
    return None


def classify(torch_outcome, ember_outcome):
    """The CLASSES name that explains this disagreement, or None."""
    for name, (predicate, _) in CLASSES.items():
        if predicate(torch_outcome, ember_outcome):
            return name
    return None
