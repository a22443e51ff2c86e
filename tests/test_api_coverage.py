"""torch 2.13's public callables per module against ember's (issue 23): each test fails when
ember lacks a name that is neither present nor listed below with the reason it is left out,
and when a listed name has since appeared (so the list stays true). Coverage per module is
printed (pytest -s). Modules join by adding a row to MODULES."""
import importlib
import types

import pytest

_REEXPORTED = "a torch class imported into the module (available as ember.{0}), not its API"
_CUDA_ATTENTION = "selects or queries PyTorch's CUDA attention kernels"

# module -> {name deliberately left out: why}
MODULES = {
    "linalg": {},
    "distributions": {},
    "distributions.transforms": {},
    "distributions.constraints": {},
    "distributions.constraint_registry": {},
    "distributions.kl": {n: _REEXPORTED.format("distributions." + n) for n in (
        "Binomial", "Cauchy", "ContinuousBernoulli", "Distribution", "ExponentialFamily",
        "Geometric", "Gumbel", "HalfNormal", "LowRankMultivariateNormal", "Pareto",
        "TransformedDistribution")} | {"Tensor": _REEXPORTED.format("Tensor")},
    "nn": {},
    "nn.functional": {},
    "nn.init": {},
    "nn.utils": {},
    "nn.utils.rnn": {
        "PackedSequence_": "the namedtuple base of PackedSequence, internal to the module",
        "bind": "a module-internal helper (not in its __all__)",
        "copy_method_params": "a module-internal helper (not in its __all__)"},
    "nn.utils.parametrize": {
        "Module": _REEXPORTED.format("nn.Module"),
        "OpaqueBase": "TorchScript opaque-object machinery imported into the module",
        "get_swap_module_params_on_conversion": "imported into the module from torch.__future__",
        "is_opaque_reference_type": "TorchScript opaque-object machinery imported into it",
        "is_traceable_wrapper_subclass": "torch.utils._python_dispatch's tensor-subclass test, "
                                         "imported into the module"},
    "nn.utils.parametrizations": {"Tensor": _REEXPORTED.format("Tensor")},
    "nn.parallel": {},
    "optim": {},
    "optim.lr_scheduler": {},
    "optim.swa_utils": {},
    "amp": {},
    "autograd.forward_ad": {},
    "autograd.functional": {},
    "func": {
        "functionalize": "removes mutations from traced graphs: ember has no graph tracer",
        "rearrange": "an einops pattern parser, not built"},
    "profiler": {
        "ExecutionTraceObserver": "torch's execution-trace format records every op's inputs "
                                  "and outputs through Kineto; not built",
        "KinetoStepTracker": "Kineto's step counter across profilers",
        "Optimizer": _REEXPORTED.format("optim.Optimizer"),
        "RecordScope": "a Kineto enum of record-function scopes",
        "is_fbcode": "says whether PyTorch runs inside Meta's build system",
        "register_optimizer_step_post_hook": "torch.optim's global hook, imported into the "
                                             "module (ember.optim has it)"},
    "sparse": {
        "SparseSemiStructuredTensor": "2:4 semi-structured sparsity runs on CUDA kernels only",
        "SparseSemiStructuredTensorCUSPARSELT": "2:4 sparsity through CUDA's cuSPARSELt",
        "SparseSemiStructuredTensorCUTLASS": "2:4 sparsity through CUDA's CUTLASS",
        "to_sparse_semi_structured": "makes a 2:4 semi-structured tensor (CUDA only)",
        "Tensor": _REEXPORTED.format("Tensor")},
    "onnx": {"InputObserver": "infers the dynamo exporter's arguments through torch.export, "
                              "which ember does not have"},
    "masked": {
        "MaskedTensor": "masked tensors (a prototype in PyTorch) are not built",
        "as_masked_tensor": "makes a MaskedTensor (not built)",
        "masked_tensor": "makes a MaskedTensor (not built)"},
    "quasirandom": {},
    "futures": {},
    "cuda.amp": {},
    "autograd": {
        "NestedIOFunction": "the legacy base of the old nested-input Function API",
        "ProfilerConfig": "a Kineto profiler configuration (C++)",
        "ProfilerEvent": "a Kineto profiler event (C++)",
        "ProfilerState": "a Kineto profiler state enum (C++)",
        "SavedTensor": "the C++ handle behind grad_fn._raw_saved_*: ember's nodes keep "
                       "saved arrays directly"},
    "autograd.graph": {
        "TorchDispatchMode": "ember has no dispatch layer below its op registry",
        "region_activation_memory_budget": "a torch.compile option: ember has no compiler",
        "set_override_stale_capture_stream": "CUDA stream and graph-capture machinery",
        "set_warn_on_accumulate_grad_stream_mismatch": "CUDA stream machinery"},
    "utils.checkpoint": {
        "GraphExecGroup": "shares recomputation across backward calls: ember recomputes on "
                          "every call and keeps no cache",
        "LoggingTensorMode": "an internal of torch.testing imported into the module",
        "SavedTensor": "the C++ saved-tensor handle",
        "TorchDispatchMode": "ember has no dispatch layer below its op registry",
        "capture_logs": "an internal of torch.testing imported into the module",
        "tree_map": "torch.utils._pytree's, imported into the module"},
    "serialization": {"validate_hpu_device": "HPU devices only"},
    "types": {"DispatchKey": "C++ dispatcher keys",
              "SymBool": "symbolic shapes: ember has none", "SymFloat": "symbolic shapes",
              "SymInt": "symbolic shapes"},
    "overrides": {},
    "utils": {
        "ThroughputBenchmark": "a C++/TorchScript benchmarking tool",
        "generate_methods_for_privateuse1_backend": "ember has no custom-device registration",
        "rename_privateuse1_backend": "ember has no custom-device registration",
        "get_cpp_backtrace": "ember has no C++ stack to report"},
    "multiprocessing": {},
    "hub": {},
    "storage": {},
    "utils.data": {
        "DFIterDataPipe": "DataFrame pipes (they need pandas-like frames)",
        "argument_validation": "DataPipe element typing, broken in torch 2.13 itself",
        "runtime_validation": "DataPipe element typing: raises AttributeError on every pipe "
                              "in torch 2.13",
        "runtime_validation_disabled": "DataPipe element typing (see runtime_validation)"},
    "nn.utils.prune": {},
    "fft": {},
    "special": {},
    "testing": {"FileCheck": "TorchScript IR pattern checker: ember has no TorchScript IR"},
    "random": {},
    "nn.attention": {
        "SDPAParams": "C++ parameter bundle of PyTorch's CUDA kernel selection",
        "can_use_flash_attention": "asks PyTorch's CUDA flash kernel about its constraints",
        "can_use_efficient_attention": "asks PyTorch's CUDA memory-efficient kernel",
        "register_flash_attention_impl": "plugs FA3/FA4 CUDA kernels into PyTorch's dispatcher",
        "activate_flash_attention_impl": "selects a registered FA3/FA4 CUDA kernel",
        "current_flash_attention_impl": "names the active FA3/FA4 CUDA kernel",
        "list_flash_attention_impls": "lists the FA3/FA4 CUDA kernels",
        "restore_flash_attention_impl": "restores PyTorch's built-in CUDA flash kernel",
    },
    "utils.hooks": {
        "BackwardHook": "internal machinery of PyTorch's Module full backward hooks",
        "warn_if_has_hooks": "internal to PyTorch's tensor pickling (_reduce_ex_internal)",
    },
    "utils.benchmark": {
        "Compare": "result tables across Measurements: not built yet",
        "Colorize": "an option of Compare",
        "CallgrindStats": "instruction counts from Valgrind's Callgrind: not built",
        "FunctionCount": "part of CallgrindStats",
        "FunctionCounts": "part of CallgrindStats",
        "CopyIfCallgrind": "part of the Callgrind path",
        "Fuzzer": "random input generators for benchmarks: not built yet",
        "FuzzedParameter": "part of Fuzzer",
        "FuzzedTensor": "part of Fuzzer",
        "FuzzedSparseTensor": "part of Fuzzer (and ember has no sparse tensors yet)",
        "ParameterAlias": "part of Fuzzer",
    },
}


def _public_callables(module):
    """Callables a user reaches as module.<name>: public, defined in torch (not re-exported
    typing or standard-library helpers), not submodules."""
    names = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
            continue
        if (getattr(value, "__module__", None) or "").startswith("torch"):
            names.add(name)
    return names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_torch_callables_exist_in_ember(module, torch_mod):
    theirs = _public_callables(importlib.import_module(f"torch.{module}"))
    ours = importlib.import_module(f"ember.{module}")
    excluded = MODULES[module]
    missing = sorted(n for n in theirs - set(excluded) if not callable(getattr(ours, n, None)))
    stale = sorted(n for n in excluded if n in theirs and callable(getattr(ours, n, None)))
    unknown = sorted(n for n in excluded if n not in theirs)
    present = len(theirs) - len(set(excluded) & theirs)
    print(f"torch.{module}: {present}/{len(theirs)} callables in ember")
    assert not missing, f"ember.{module} lacks {missing}"
    assert not stale, f"listed as left out but present now: {stale}"
    assert not unknown, f"listed but not in torch.{module}: {unknown}"


def test_constants_match_torch(torch_mod):
    import math
    import ember
    for name in ("inf", "pi", "e"):
        assert getattr(ember, name) == getattr(torch_mod, name)
        assert type(getattr(ember, name)) is type(getattr(torch_mod, name))
    assert math.isnan(ember.nan) and math.isnan(torch_mod.nan)
    assert ember.newaxis is torch_mod.newaxis is None
    assert ember.ones(3)[:, ember.newaxis].shape == (3, 1)


# Tensor methods deliberately left out: why
TENSOR_LEFT_OUT = {
    "index": "binds dims to functorch's first-class Dim objects, which ember does not have",
    "storage_type": "returns a legacy typed-storage class (torch.FloatStorage...): not "
                    "built yet",
    "resize_as_sparse_": "resizes a sparse tensor's storage in place: ember's sparse "
                         "indices and values are immutable",
    "sparse_resize_": "resizes a sparse tensor's storage in place (see resize_as_sparse_)",
    "sparse_resize_and_clear_": "resizes a sparse tensor's storage in place (see "
                                "resize_as_sparse_)",
}


def test_torch_tensor_methods_exist_in_ember(torch_mod):
    import ember
    theirs = {n for n in dir(torch_mod.Tensor)
              if not n.startswith("_") and callable(getattr(torch_mod.Tensor, n, None))}
    missing = sorted(n for n in theirs - set(TENSOR_LEFT_OUT)
                     if not callable(getattr(ember.Tensor, n, None)))
    stale = sorted(n for n in TENSOR_LEFT_OUT if callable(getattr(ember.Tensor, n, None)))
    print(f"torch.Tensor: {len(theirs) - len(TENSOR_LEFT_OUT)}/{len(theirs)} methods in ember")
    assert not missing, f"ember.Tensor lacks {missing}"
    assert not stale, f"listed as left out but present now: {stale}"
    assert set(TENSOR_LEFT_OUT) <= theirs


# torch.<name> callables deliberately left out, by group: why
_TORCHSCRIPT = ("TorchScript's IR, types and runtime: ember has no TorchScript (jit.script and "
                "jit.trace return the code uncompiled)")
_TOP_LEVEL_GROUPS = {
    _TORCHSCRIPT: (
        "AggregationType AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType "
        "BufferDict CallStack Capsule ClassType Code CompilationUnit CompleteArgumentSpec "
        "ComplexType ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable "
        "DeviceObjType DictType EnumType ErrorReport ExecutionPlan FileCheck FloatType "
        "FunctionSchema FutureType Gradient Graph GraphExecutorState IODescriptor InferredType "
        "IntType InterfaceType JITException ListType LiteScriptModule ModuleDict Node NoneType "
        "NumberType OperatorInfo OptionalType ParameterDict PyObjectType RRefType ScriptClass "
        "ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptFunction "
        "ScriptList ScriptListIterator ScriptMethod ScriptModule ScriptObject "
        "ScriptObjectProperty StaticModule StreamObjType StringType SymBoolType SymIntType "
        "TensorType TracingState TupleType Type UnionType Use Value import_ir_module "
        "import_ir_module_from_buffer merge_type_from_type_comment parse_ir parse_schema "
        "parse_type_comment unify_type_list"),
    "quantized tensors: ember has none (their Tensor methods raise PyTorch's error)": (
        "QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage "
        "choose_qparams_optimized empty_quantized fake_quantize_per_channel_affine "
        "fake_quantize_per_tensor_affine fused_moving_avg_obs_fake_quant int_repr "
        "q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale "
        "q_zero_point quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic "
        "quantized_batch_norm quantized_gru quantized_gru_cell quantized_lstm "
        "quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d "
        "quantized_rnn_relu_cell quantized_rnn_tanh_cell"),
    "a vendor library's kernel entry point (cuDNN, MIOpen, oneDNN, fbgemm), which ember "
    "does not link": (
        "cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution "
        "cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose "
        "cudnn_grid_sampler miopen_batch_norm miopen_convolution miopen_convolution_add_relu "
        "miopen_convolution_relu miopen_convolution_transpose miopen_ctc_loss "
        "miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d "
        "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d "
        "mkldnn_rnn_layer fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation "
        "fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation "
        "fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 "
        "fbgemm_pack_quantized_matrix"),
    "autocast for IPU and XLA devices: ember's autocast covers cpu and cuda": (
        "get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled "
        "is_autocast_xla_enabled set_autocast_ipu_dtype set_autocast_ipu_enabled "
        "set_autocast_xla_dtype set_autocast_xla_enabled"),
    "C++ dispatcher, serializer, logging and benchmark internals": (
        "DispatchKey DispatchKeySet ExcludeDispatchKeyGuard Tag StorageBase PyTorchFileReader "
        "PyTorchFileWriter DeserializationStorageContext SerializationStorageContext "
        "ScriptModuleSerializer ThroughputBenchmark BenchmarkConfig BenchmarkExecutionStats "
        "LoggerBase NoopLogger LockingLogger profiler_allow_cudagraph_cupti_lazy_reinit_cuda12"),
    "torch.overrides' __torch_function__ switches: ember's ops do not consult "
    "__torch_function__": "DisableTorchFunction DisableTorchFunctionSubclass",
    "errors of PyTorch's own CUDA runtime and C++ core: ember raises CuPy's": (
        "AcceleratorError FatalError"),
    "resizes a sparse tensor's storage in place: ember's sparse indices and values are "
    "immutable": "resize_as_sparse_",
}
TOP_LEVEL_LEFT_OUT = {name: why for why, names in _TOP_LEVEL_GROUPS.items()
                      for name in names.split()}


def test_torch_top_level_callables_exist_in_ember(torch_mod):
    import ember
    theirs = _public_callables(torch_mod)
    missing = sorted(n for n in theirs - set(TOP_LEVEL_LEFT_OUT)
                     if not callable(getattr(ember, n, None)))
    stale = sorted(n for n in TOP_LEVEL_LEFT_OUT if callable(getattr(ember, n, None)))
    unknown = sorted(n for n in TOP_LEVEL_LEFT_OUT if n not in theirs)
    print(f"torch: {len(theirs) - len(TOP_LEVEL_LEFT_OUT)}/{len(theirs)} callables in ember")
    assert not missing, f"ember lacks {missing}"
    assert not stale, f"listed as left out but present now: {stale}"
    assert not unknown, f"listed but not in torch: {unknown}"
