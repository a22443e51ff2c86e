"""Write ember/_signatures/table_*.py: PyTorch 2.13's Python-level signatures of the functions
and methods its C argument parser checks, read from the type stubs torch ships
(torch/_C/_VariableFunctions.pyi, _nn.pyi, __init__.pyi's TensorBase).

A signature is stored as the text PyTorch prints in its TypeErrors ("Tensor input, int dim,
*, bool keepdim = False"), with a `?` after the type of a parameter that accepts None.
Only names whose torch object is a C builtin are listed: torch's Python-level functions
(torch.split, most of nn.functional) fail in their own Python code, not in the parser.

    python scripts/make_signatures.py      (needs torch==2.13; rewrites the tables)
"""
import ast
import inspect
import os
import pprint
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUBS = os.path.join(os.path.dirname(torch.__file__), "_C")

# pyi annotation -> (the type's name in PyTorch's messages, accepts None)
_ONE_INT = ("_int", "int")
_SYM_INT = ("_int | SymInt", "IntLikeType")
_SIZES = ("_size", "list[_int]", "Sequence[int]", "tuple[_int, ...]")
_SYM_SIZES = ("Sequence[_int | SymInt]", "_symsize")
_TENSORS = ("tuple[Tensor, ...] | list[Tensor]", "list[Tensor]", "Sequence[Tensor]",
            "list[Tensor] | tuple[Tensor, ...]", "tuple[Tensor, ...]")
_TYPES = {
    "Tensor": "Tensor", "Number | _complex": "Number", "Number": "Number",
    "_bool": "bool", "bool": "bool", "_float": "float", "float": "float", "str": "str",
    "_dtype": "torch.dtype", "DeviceLikeType": "torch.device", "_device": "torch.device",
    "_layout": "torch.layout", "memory_format": "torch.memory_format",
    "torch.memory_format": "torch.memory_format", "Generator": "torch.Generator",
    "Tensor | Number | _complex": "Tensor or Number", "Tensor | Number": "Tensor or Number",
    "Tensor | Number | _complex | torch.SymInt | torch.SymFloat": "Tensor or Number",
    "Tensor | Number | torch.SymInt | torch.SymFloat": "Tensor or Number",
    "Sequence[Number | _complex]": "tuple of Scalars",
    "Sequence[float]": "tuple of floats", "Sequence[_float]": "tuple of floats",
    "list[_float]": "tuple of floats",
    "tuple[Tensor | None, ...] | list[Tensor | None]": "tuple of optional Tensors",
    "Tensor | tuple[Tensor, ...] | list[Tensor]": "tuple of Tensors or Tensor",
    "Literal[True]": "bool", "Literal[False]": "bool",
    "_int | _size": "int or tuple of ints", "_int | SymInt | Sequence[_int | SymInt]":
    "int or tuple of ints", "Tensor | _int": "Tensor or int",
}
_TYPES.update({t: "int" for t in _ONE_INT})
_TYPES.update({t: "SymInt" for t in _SYM_INT})
_TYPES.update({t: "tuple of ints" for t in _SIZES})
_TYPES.update({t: "tuple of SymInts" for t in _SYM_SIZES})
_TYPES.update({t: "tuple of Tensors" for t in _TENSORS})


def type_of(annotation):
    """(printed type, nullable) of a pyi annotation; ("object", True) when unknown."""
    text = ast.unparse(annotation)
    if text == "None":   # (size(self, dim: None = None): the no-argument overload)
        return "None", True
    nullable = text.endswith(" | None")
    base = text[:-len(" | None")] if nullable else text
    kind = _TYPES.get(base)
    if kind is None:
        return "object", True
    return kind, nullable


def default_text(node):
    text = ast.unparse(node)
    return {"...": "None"}.get(text, text)


def signature(fn, method):
    """The printed signature of one overload, or None when it takes what we cannot check."""
    args = fn.args
    positional = list(args.posonlyargs) + list(args.args)
    if method:
        if not positional or positional[0].arg != "self":
            return None
        positional = positional[1:]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = []
    keywords = []
    for arg, default in zip(positional, defaults):
        # NOTE: the stubs drop the `*` before memory_format, which torch's parser takes only
        # as a keyword (x.contiguous(0): "takes 0 positional arguments").
        (keywords if arg.arg == "memory_format" else parts).append(_param(arg, default))
    if args.vararg is not None:
        # `*size: _int`: the stubs' spelling of the parser's rule that a lone int-list
        # parameter takes its ints as varargs (zeros(2, 3)); the table keeps the list form.
        return None
    keywords += [_param(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
    if keywords:
        parts += ["*"] + keywords
    return ", ".join(parts)


def _param(arg, default):
    kind, nullable = type_of(arg.annotation) if arg.annotation is not None else ("object", True)
    text = f"{kind}{'?' if nullable else ''} {arg.arg}"
    if default is not None:
        text += f" = {default_text(default)}"
    return text


def overloads(path, scope=None, method=False):
    """{name: [signature, ...]} of the stub's module-level functions (or a class's methods)."""
    tree = ast.parse(open(os.path.join(STUBS, path)).read())
    body = tree.body
    if scope:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == scope).body
    out = {}
    for node in body:
        # (private names: ember has none of torch's _foreach/_functionalize/... internals)
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        sig = signature(node, method)
        seen = out.setdefault(node.name, [])
        if sig is not None and _shape(sig) not in {_shape(s) for s in seen}:
            seen.append(sig)
    return {k: v for k, v in out.items() if v}


def _shape(sig):
    """An overload's parameters without defaults and keyword order: the stubs repeat some
    overloads with their keywords reordered (full's layout = strided / layout = None)."""
    head, _, keywords = sig.partition("*, ")
    def strip(p):   # (a SymInt list is an int list to the stubs' repeats)
        return p.split(" = ")[0].replace("?", "").replace("SymInts", "ints")
    return (tuple(strip(p) for p in head.split(", ") if p),
            frozenset(strip(p) for p in keywords.split(", ") if p))


_PARSER_WORDS = ("must be", "invalid combination", "positional argument", "unexpected keyword",
                 "takes no arguments",
                 "doesn't apply to", "needs an argument")


def parses(fn, *args):
    """Whether torch's `fn` rejects an `object()` argument in its argument parser's words
    (set_num_threads and a few other builtins check by hand, with other errors)."""
    try:
        fn(*args, object())
    except TypeError as exc:
        return any(w in str(exc) for w in _PARSER_WORDS)
    except Exception:
        return False
    return False


def is_builtin(obj):
    return type(obj).__name__ in ("builtin_function_or_method", "method_descriptor")


def _deprecated(sig):
    """The stubs' deprecated overloads name the tensor `self` (addbmm(Number beta, Tensor
    self, Number alpha, ...)); the current ones call it `input`."""
    return "Tensor self" in sig.split(", ")


def numbers_as_tensors(table):
    """The functions whose Tensor parameters take Python numbers too (subtract(3, 3)),
    found by calling them so."""
    import warnings
    found = []
    for name in table:
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                getattr(torch, name)(1.5, 2.5)
            except TypeError:
                continue
            except Exception:
                pass
        if any(sig.startswith("Tensor") for sig in table[name]):
            found.append(name)
    return found


def methods_taking_numbers(table):
    """The methods whose first Tensor parameter takes a Python number too (x.copy_(3)),
    found by calling them so. NOTE: with a complex number, which a float overload refuses
    (x.quantile(0.5) is the float overload, x.quantile(0.5 + 1j) no overload)."""
    import warnings
    found = []
    for name, sigs in table.items():
        if not any(sig.startswith("Tensor ") for sig in sigs):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                getattr(torch.ones(2), name)(1.5 + 1j)
            except TypeError:
                continue
            except Exception:
                pass
        found.append(name)
    return found


def _aten_scalars(table):
    """`table` corrected by the ATen schemas: _nn.pyi is written by hand. It says float
    where the parser takes any Number (softshrink(x, 1 + 0j), then the kernel's conversion
    error for 1 + 1j), and `= ...` (read as None) for the defaults of parameters that take
    no None (hardtanh_(x, None))."""
    out = {}
    for name, sigs in table.items():
        args = {a.name: a for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
                for a in s.arguments}
        out[name] = [", ".join(_as_in_schema(p, args) for p in sig.split(", "))
                     for sig in sigs]
    return out


def _as_in_schema(part, args):
    decl, _, default = part.partition(" = ")
    kind, _, pname = decl.rpartition(" ")
    arg = args.get(pname)
    if arg is None:
        return part
    schema_type = str(arg.type)
    if kind.rstrip("?") == "float" and schema_type.rstrip("?") in ("Scalar", "number"):
        kind = "Number" + kind[len("float"):]
    if default == "None" and not kind.endswith("?") and not schema_type.endswith("?") and \
            kind != "str" and arg.default_value is not None:
        default = repr(arg.default_value)   # (str ones are enums on the way: reduction)
    return f"{kind} {pname}" + (f" = {default}" if default else "")


def tables():
    functions = overloads("_VariableFunctions.pyi")
    nn = _aten_scalars(overloads("_nn.pyi"))
    methods = overloads("__init__.pyi", "TensorBase", method=True)
    # A deprecated overload is marked with a leading "!": hidden from messages, and its
    # arguments rebound by name (add(x, 2, y) is add(x, y, alpha=2)).
    torch_table = {n: ["!" + s.replace("Tensor self", "Tensor input")
                       if _deprecated(s) else s for s in sigs]
                   for n, sigs in functions.items()
                   if is_builtin(getattr(torch, n, None)) and parses(getattr(torch, n))}
    for name in numbers_as_tensors(torch_table):
        torch_table[name] = [sig.replace("Tensor or Number ", "Tensor ").replace(
            "Tensor ", "Tensor or Number ") for sig in torch_table[name]]
    functional = {}
    for name in dir(torch.nn.functional):
        obj = getattr(torch.nn.functional, name)
        if name.startswith("_"):
            continue
        if inspect.isfunction(obj):
            if name not in PYTHON_FIRST:
                builtin = python_wrapped(name, obj, functions, nn)
                if builtin is not None:
                    functional[name] = builtin
            continue
        if not is_builtin(obj):
            continue
        sigs = nn.get(obj.__name__) if obj.__module__ == "torch._C._nn" else None
        sigs = sigs or functions.get(obj.__name__) or nn.get(obj.__name__)
        if sigs:
            functional[name] = (obj.__name__, sigs)
    tensor_table = {n: s for n, s in methods.items()
                    if is_builtin(getattr(torch.Tensor, n, None))
                    and parses(getattr(torch.Tensor, n), torch.ones(1))}
    _from_docstrings(tensor_table)
    taking_numbers = methods_taking_numbers(tensor_table)
    # The stubs leave out the methods' deprecated overloads (x.sub_(2, y): Number alpha,
    # Tensor other), which the parser still accepts; the functions' stubs keep them, with a
    # first parameter named `self`.
    for name, sigs in functions.items():
        for sig in sigs:
            if not _deprecated(sig) or "*," in sig:
                continue
            for method in (name, name + "_"):
                if method in tensor_table and is_builtin(getattr(torch.Tensor, method, None)):
                    rest = "!" + ", ".join(p for p in sig.split(", ") if p != "Tensor self")
                    if rest not in tensor_table[method]:
                        tensor_table[method] = tensor_table[method] + [rest]
    # NOTE: torch's parser lets these methods take a number for every Tensor parameter of
    # every overload, the deprecated ones included (x.sub_(2, 3): alpha 2, other 3).
    for name in taking_numbers:
        tensor_table[name] = [sig.replace("Tensor or Number ", "Tensor ").replace(
            "Tensor ", "Tensor or Number ") for sig in tensor_table[name]]
    return torch_table, functional, tensor_table


def _from_docstrings(tensor_table):
    """The methods' signatures where the stubs miss what the parser has and the docstrings
    say it: the dtype conversions' memory_format keyword (half(self) in the stubs; cfloat
    and cdouble missing), new_tensor's `*` after data."""
    for name in dir(torch.Tensor):
        method = getattr(torch.Tensor, name)
        doc = (getattr(method, "__doc__", None) or "").strip()
        if doc.startswith(f"{name}(memory_format=torch.preserve_format) -> Tensor") and \
                name != "cpu" and is_builtin(method) and parses(method, torch.ones(1)):
            tensor_table[name] = ["*, torch.memory_format? memory_format = None"]
        first = doc.split("\n")[0]
        sigs = tensor_table.get(name, ())
        if first.startswith(f"{name}(") and ", *, " in first and len(sigs) == 1 and \
                "*" not in sigs[0]:
            head = first[len(name) + 1:].split(", *, ")[0].split(", ")
            parts = sigs[0].split(", ")
            tensor_table[name] = [", ".join(parts[:len(head)] + ["*"] + parts[len(head):])]


# nn.functional's Python functions whose own code fails first on wrongly typed arguments
# (input.dim(), `if training:`, reduction strings...), found by the fuzzer: not checked.
PYTHON_FIRST = {
    'adaptive_avg_pool2d', 'adaptive_avg_pool3d', 'alpha_dropout', 'binary_cross_entropy',
    'binary_cross_entropy_with_logits', 'embedding_bag', 'feature_alpha_dropout', 'glu',
    'group_norm', 'hardtanh', 'hinge_embedding_loss', 'huber_loss', 'instance_norm', 'l1_loss',
    'log_softmax', 'margin_ranking_loss', 'mse_loss', 'multi_margin_loss', 'relu', 'sigmoid',
    'smooth_l1_loss', 'soft_margin_loss', 'softmax', 'tanh',
}


_HANDED_ON = ("Tensor", "float", "bool", "int", "SymInt", "tuple of ints", "tuple of SymInts",
              "Number", "int or tuple of ints", "str")


# nn.functional Python functions whose builtin has another name (torch's messages use it).
BUILTIN_OF = {"nll_loss": "nll_loss_nd", "cross_entropy": "cross_entropy_loss",
              "unfold": "im2col", "fold": "col2im", "grid_sample": "grid_sampler"}


def python_wrapped(name, fn, functions, nn):
    """(builtin name, (signature,)) for an nn.functional Python function that hands its
    arguments to the same-named builtin (cosine_embedding_loss -> torch.cosine_embedding_
    loss): its own parameters, each typed as the builtin's parameter of the same name (the
    rest unchecked), so a wrongly typed argument fails as it does inside torch's builtin."""
    builtin = BUILTIN_OF.get(name, name)
    sigs = functions.get(builtin) or nn.get(builtin)
    if not sigs:
        return None
    kinds = {}
    for sig in sigs:   # a name typed differently by two overloads is left unchecked
        for part in sig.replace("*, ", "").split(", "):
            kind, _, pname = part.split(" = ")[0].rpartition(" ")
            kinds[pname] = kind if kinds.get(pname, kind) == kind else "object?"
    parts, star = [], False
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        kind = kinds.get(p.name, "object?")
        base = kind.rstrip("?")
        if base not in _HANDED_ON or isinstance(p.default, str) and (
                base != "str" or p.name == "reduction"):
            kind = "object?"   # (reduction='mean' becomes an int enum on the way)
        if p.default is None and not kind.endswith("?"):
            kind += "?"
        text = f"{kind} {p.name}"
        if p.default is not p.empty:
            text += f" = {p.default!r}"
        parts.append(text)
    return builtin, (", ".join(parts),), "wrapper"


_ATEN_TYPES = {"Tensor": "Tensor", "Scalar": "Number", "int": "int", "SymInt": "SymInt",
               "float": "float", "bool": "bool", "str": "str", "ScalarType": "torch.dtype",
               "Tensor[]": "tuple of Tensors", "Tensor?[]": "tuple of optional Tensors",
               "int[]": "tuple of ints", "SymInt[]": "tuple of SymInts",
               "float[]": "tuple of floats"}


def _aten_param(text):
    """One ATen schema argument ("int[1]? dim=None") as a table parameter."""
    decl, _, default = text.partition("=")
    kind, _, pname = decl.strip().rpartition(" ")
    kind = kind.replace("(a)", "").replace("(a!)", "")
    nullable = kind.endswith("?")
    kind = kind.rstrip("?")
    if kind.startswith(("int[", "SymInt[")) and kind[-2] != "[":
        kind = "int or tuple of ints"       # int[2]: a lone int is taken too
    kind = _ATEN_TYPES.get(kind, "object") if kind != "int or tuple of ints" else kind
    nullable = nullable or kind == "object"
    text = f"{kind}{'?' if nullable else ''} {'input' if pname == 'self' else pname}"
    if default:
        text += " = " + default.replace("[", "{").replace("]", "}").replace(", ", ",")
    return text


def aten_signatures(aten_name):
    """The signatures of aten::<name>'s overloads (its out= overloads folded into an `out`
    keyword), for the builtins that have no type stubs (torch.linalg)."""
    sigs, has_out, single = [], False, True
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{aten_name}"):
        if "!" in str(schema):   # an out= overload (written-to arguments)
            has_out = True
            single = single and str(schema).split(" -> ")[0].count("!") == 1
            continue
        text = str(schema)
        inner = text[text.index("(") + 1:text.rindex(") ->")]
        parts = [p.strip() for p in _split_top(inner) if p.strip()]
        sigs.append([p if p == "*" else _aten_param(p) for p in parts])
    if not sigs:
        return None
    out = []
    for parts in sigs:
        if has_out:
            out_kind = "Tensor?" if single else "object?"
            parts = parts + ([] if "*" in parts else ["*"]) + [f"{out_kind} out = None"]
        out.append(", ".join(parts))
    return out


def _split_top(text):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([" and 1 or c in ")]" and -1 or 0
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def schema_table(module):
    """{name: (builtin name, signatures)} of a torch namespace whose builtins have no type
    stubs (torch.linalg, torch.fft), from their ATen schemas."""
    table = {}
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or not is_builtin(obj) or not parses(obj):
            continue
        sigs = aten_signatures(obj.__name__)
        # (a factory's Python binding adds requires_grad, which its schema lacks: fftfreq)
        if sigs and not any("pin_memory" in sig for sig in sigs):
            table[name] = (obj.__name__, tuple(sigs))
    return table


def write(path, name, doc, table):
    lines = [f'"""{doc}\n\nGenerated by scripts/make_signatures.py from torch 2.13\'s type stubs; '
             'do not edit."""', f"{name} = {{"]
    for key in sorted(table):
        text = pprint.pformat(table[key], width=92 - len(repr(key)))
        lines.append(f"    {key!r}: " + text.replace("\n", "\n" + " " * (6 + len(repr(key))))
                     + ",")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    torch_table, functional, tensor_table = tables()
    out = os.path.join(ROOT, "ember", "_signatures")
    write(os.path.join(out, "table_torch.py"), "FUNCTIONS",
          "The signatures of torch.<name> functions that PyTorch's argument parser checks.",
          {k: tuple(v) for k, v in torch_table.items()})
    write(os.path.join(out, "table_tensor.py"), "METHODS",
          "The signatures of Tensor.<name> methods (self left out) that PyTorch's argument "
          "parser checks.", {k: tuple(v) for k, v in tensor_table.items()})
    write(os.path.join(out, "table_nn.py"), "FUNCTIONAL",
          "nn.functional.<name> that are C builtins in torch, or Python functions handing their\n"
          "arguments to one (marked \"wrapper\": their keywords reach it as positional\n"
          "arguments): the name PyTorch's messages use and the signatures it checks.",
          {k: (v[0], tuple(v[1])) + tuple(v[2:]) for k, v in functional.items()})
    write(os.path.join(out, "table_linalg.py"), "LINALG",
          "torch.linalg.<name> builtins (no type stubs: read from their ATen schemas): the\n"
          "name PyTorch's messages use and the signatures its argument parser checks.",
          schema_table(torch.linalg))
    write(os.path.join(out, "table_fft.py"), "FFT",
          "torch.fft.<name> builtins (no type stubs: read from their ATen schemas): the\n"
          "name PyTorch's messages use and the signatures its argument parser checks.",
          schema_table(torch.fft))
    print(len(torch_table), len(tensor_table), len(functional), file=sys.stderr)


if __name__ == "__main__":
    main()
