"""grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian on ember's engine.

Each transform makes its inputs differentiable (`_lift`), runs the function, and asks the
reverse-mode engine for derivatives. Forward mode (jvp, jacfwd, linearize) is the double-VJP
trick: with u a dummy cotangent, g(u) = vjp(f)(u) is linear in u, and the VJP of g along a
tangent t is J t, the JVP. Both passes use ember's VJPs, so results equal PyTorch's.

Under vmap the graph is recorded on plain tensors only: `_lift` materialises an input at
every open vmap level (`_strip`), differentiates the batched program, whose batch elements
are independent, and `_rebuild` wraps the result back, so per-sample gradients come out of
one backward pass.
"""
from .. import _creation   # (factories read at call time: ember.compile patches them)
from .. import autograd
from .._tensor import Tensor
from ..ops.shape import stack
from . import _pytree
from .batched_tensor import LEVELS, BatchedTensor, UnbatchableError, make_batched, physical
from .vmap_transform import vmap

_nesting = [0]   # how many transformed functions are running (grad of grad needs graphs)


# ---------------------------------------------------------------------- lifting inputs
def _strip(x, levels):
    """`x` with the batch of vmap levels 1..`levels` as its leading dims (ascending), a tensor
    not batched at those levels (it may be batched at later ones)."""
    for level in range(levels, 0, -1):
        x = physical(x, level)
    return x


def _rebuild(x, levels):
    """Inverse of `_strip`: the leading dims of `x` become vmap levels 1..`levels` again."""
    if not levels:
        return x
    if x.__class__ is BatchedTensor and x._level > levels:
        # x is batched at a later level m: its inner tensor's dim 0 is m's batch, which must
        # stay outermost, so the earlier levels are rebuilt inside it.
        inner = _rebuild(x._inner.movedim(0, levels), levels)
        return make_batched(inner, x._level)
    for level in range(1, levels + 1):
        x = make_batched(x, level)
    return x


def _check_tensor(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _lift(x, levels):
    """(the plain tensor the engine differentiates, the value the function receives)."""
    _check_tensor(x)
    p = _strip(x, levels)
    leaf = p.view_as(p) if p.requires_grad else p.detach().requires_grad_()
    return leaf, _rebuild(leaf, levels)


def _lift_tree(tree, levels):
    leaves, spec = _pytree.flatten(tree)
    with autograd.enable_grad():
        lifted = [_lift(x, levels) for x in leaves]
    return [p for p, _ in lifted], _pytree.unflatten(spec, [v for _, v in lifted]), spec


def _run(func, args, kwargs=None):
    """func(*args) recorded for the engine: a transform ignores an enclosing no_grad (as
    torch.func's do), while a no_grad inside func still holds."""
    _nesting[0] += 1
    try:
        with autograd.enable_grad():
            return func(*args, **(kwargs or {}))
    finally:
        _nesting[0] -= 1


def _wants_graph(sources, outputs=(), leaves=()):
    """Keep the derivatives differentiable when an enclosing transform or the caller's own
    autograd will differentiate them again: an input, or a tensor the function captured
    (a module's parameters), requires grad."""
    if _nesting[0] > 0 or any(x.requires_grad for x in sources if isinstance(x, Tensor)):
        return True
    return _reaches_outer_leaf(outputs, leaves)


def _reaches_outer_leaf(outputs, leaves):
    own = {id(leaf) for leaf in leaves}
    pending = [o.grad_fn for o in outputs if o.grad_fn is not None]
    seen = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)    # an AccumulateGrad: a leaf
        if variable is not None:
            if id(variable) not in own:
                return True
            continue
        pending.extend(e[0] for e in getattr(node, "edges", None) or () if e is not None)
    return False


def _engine_grad(outputs, inputs, grad_outputs, create):
    """autograd.grad allowing unused inputs (zeros then). Under vmap the graph VJPs run even
    without create_graph: the fast array-level VJPs read raw arrays, not batches."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if pairs:   # (outputs that do not depend on the inputs contribute nothing)
        grads = autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                              retain_graph=True, create_graph=create or bool(LEVELS),
                              allow_unused=True)
    else:
        grads = [None] * len(inputs)
    out = []
    for g, x in zip(grads, inputs):
        if g is None:
            g = _zeros_like(x)
        elif not create:
            g = g.detach()
        out.append(g)
    return out


def _zeros_like(x):
    return _creation.zeros_like(x).detach()


# ---------------------------------------------------------------------- argnums
def _check_argnums(argnums, nargs):
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        for a in argnums:
            _check_argnum(a, nargs)
        return tuple(a % nargs for a in argnums)
    _check_argnum(argnums, nargs)
    return argnums % nargs


def _check_argnum(a, nargs):
    if not isinstance(a, int) or isinstance(a, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
    if not -nargs <= a < nargs:
        raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")


def _select(args, argnums):
    return tuple(args[a] for a in argnums) if isinstance(argnums, tuple) else args[argnums]


def _replace(args, argnums, values):
    args = list(args)
    if isinstance(argnums, tuple):
        for a, v in zip(argnums, values):
            args[a] = v
    else:
        args[argnums] = values
    return args


# ---------------------------------------------------------------------- grad
def grad_and_value(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued `func` with respect to args[argnums], and its value."""
    def wrapper(*args, **kwargs):
        argnums_ = _check_argnums(argnums, len(args))
        levels = len(LEVELS)
        diff = _select(args, argnums_)
        leaves, lifted, spec = _lift_tree(diff, levels)
        out = _run(func, _replace(args, argnums_, lifted), kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                   "a tuple: (output, aux) if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to "
                               "use the vjp or jacrev APIs instead?")
        flat_out = _strip(out, levels)
        create = _wants_graph(_pytree.flatten(diff)[0], [flat_out], leaves)
        grads = _engine_grad([flat_out], leaves, [_creation.ones_like(flat_out)], create)
        grads = _pytree.unflatten(spec, [_rebuild(g, levels) for g in grads])
        value = out if create else out.detach()
        return (grads, (value, aux)) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued `func` with respect to args[argnums]."""
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# ---------------------------------------------------------------------- vjp
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the cotangents' pullback."""
    levels = len(LEVELS)
    leaves, lifted, spec = _lift_tree(primals, levels)
    out = _run(func, lifted)
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        out, aux = out
    out_leaves, out_spec = _pytree.flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty output (got {type(o)})")
    flat_out = [_strip(o, levels) for o in out_leaves]
    sources = _pytree.flatten(primals)[0]
    keep = _wants_graph(sources, flat_out, leaves)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = _pytree.flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{_short(ct_spec)}, primal output: {_short(out_spec)}")
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{c.shape} and output[0] has a shape of {o.shape}.")
        create = (keep or _nesting[0] > 0) if create_graph is None else create_graph
        grads = _engine_grad(flat_out, leaves, [_strip(c, levels) for c in ct_leaves],
                             create)
        return _pytree.unflatten(spec, [_rebuild(g, levels) for g in grads])

    value = out if keep else _detach_tree(out)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _short(spec):
    """PyTorch's compact structure text: * for a leaf, (*,) for a 1-tuple."""
    if spec.is_leaf:
        return "*"
    inner = ", ".join(_short(c) for c in spec.children)
    if spec.kind is tuple:
        return f"({inner},)" if len(spec.children) == 1 else f"({inner})"
    if spec.kind is list:
        return f"[{inner}]"
    return "{" + ", ".join(f"{k!r}: {_short(c)}" for k, c in zip(spec.context,
                                                                spec.children)) + "}"


def _detach_tree(tree):
    leaves, spec = _pytree.flatten(tree)
    return _pytree.unflatten(spec, [x.detach() if isinstance(x, Tensor) else x
                                    for x in leaves])


# ---------------------------------------------------------------------- forward mode
class _Linearized:
    """The forward pass and the first reverse pass of the double-VJP trick, kept so that
    pushing several tangents (linearize, jacfwd) reuses them."""

    def __init__(self, func, primals, has_aux, where):
        self.levels = levels = len(LEVELS)
        self.leaves, lifted, self.spec = _lift_tree(primals, levels)
        out = _run(func, lifted)
        self.aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{where}: output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, self.aux = out
        self.out = out
        self.out_leaves, self.out_spec = _pytree.flatten(out)
        for o in self.out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{where}: Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        self.sources = _pytree.flatten(primals)[0]
        flat_out = [_strip(o, levels) for o in self.out_leaves]
        self.keep = _wants_graph(self.sources, flat_out, self.leaves)
        # NOTE: g(u) is linear in u, so any u gives the same JVP; ones, not zeros: VJPs
        # computed in log space (logcumsumexp) have no derivative at a zero cotangent.
        self.dummies = [_creation.ones_like(o).detach().requires_grad_() for o in flat_out]
        live = [(o, u) for o, u in zip(flat_out, self.dummies) if o.requires_grad]
        self.pulled = [None] * len(self.leaves)
        if live:
            self.pulled = list(autograd.grad([o for o, _ in live], self.leaves,
                                             [u for _, u in live], create_graph=True,
                                             allow_unused=True))

    def push(self, tangents):
        """J t for tangents shaped like the primals (each may be batched by a later vmap)."""
        create = self.keep or _nesting[0] > 0
        pairs = [(g, _strip(t, self.levels)) for g, t in zip(self.pulled, tangents)
                 if g is not None and g.requires_grad]
        if pairs:
            outs = _engine_grad([g for g, _ in pairs], self.dummies, [t for _, t in pairs],
                                create)
        else:
            outs = [_zeros_like(d) for d in self.dummies]
        outs = [_rebuild(o, self.levels) for o in outs]
        return _pytree.unflatten(self.out_spec, outs)

    def value(self):
        return self.out if self.keep else _detach_tree(self.out)


def _check_jvp_args(primals, tangents):
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{where}: Expected tangents to be a tuple. E.g. it should be valid "
                           "to call f(*tangents).")
    p_leaves, p_spec = _pytree.flatten(primals)
    t_leaves, t_spec = _pytree.flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        _check_tensor(p)
        _check_tensor(t)
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size "
                               "than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
    return t_leaves


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J(primals) @ tangents[, aux])."""
    t_leaves = _check_jvp_args(primals, tangents)
    lin = _Linearized(func, primals, has_aux, "jvp(f, primals, tangents)")
    out = lin.push(t_leaves)
    return (lin.value(), out, lin.aux) if has_aux else (lin.value(), out)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) pushes tangents through the saved
    linearisation without running func again."""
    lin = _Linearized(func, primals, False, "linearize(func, *primals)")

    def jvp_fn(*tangents):
        _check_jvp_args(primals, tangents)
        return lin.push(_pytree.flatten(tangents)[0])
    return lin.value(), jvp_fn


# ---------------------------------------------------------------------- Jacobians
def _basis(flat, dtype, device):
    """The rows of the identity over all elements of `flat`, split and shaped like each."""
    total = sum(x.numel() for x in flat)
    identity = _creation.eye(total, dtype=dtype, device=device)
    parts, start = [], 0
    for x in flat:
        n = x.numel()
        parts.append(identity[:, start:start + n].reshape((total,) + tuple(x.shape)))
        start += n
    return parts, total


def _over_basis(fn, basis, total, vmap_options):
    """fn over the rows of the basis: one vmap, or a loop when an op on the way has no
    batched form in ember (its values leave the op dispatch)."""
    try:
        return vmap(fn, **vmap_options)(*basis)
    except UnbatchableError:
        rows = [fn(*(b[k] for b in basis)) for k in range(total)]
        return [stack([r[j] for r in rows]) for j in range(len(rows[0]))]


def _at_argnums(func, args, kwargs, argnums):
    """`func` as a function of args[argnums] alone (the other arguments fixed), with those
    arguments as a tuple; argnums checked against the call."""
    argnums_ = _check_argnums(argnums, len(args))
    diff = _select(args, argnums_)

    def partial(*d):
        return func(*_replace(args, argnums_, d if isinstance(argnums_, tuple) else d[0]),
                    **kwargs)
    return argnums_, partial, (diff if isinstance(argnums_, tuple) else (diff,))


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` with respect to args[argnums], by reverse mode (vmap of vjp)."""
    def wrapper(*args, **kwargs):
        argnums_, partial, primals = _at_argnums(func, args, kwargs, argnums)
        result = vjp(partial, *primals, has_aux=has_aux)
        out, vjp_fn = result[0], result[1]
        out_leaves, out_spec = _pytree.flatten(out)
        in_leaves, in_spec = _pytree.flatten(primals)
        basis, total = _basis(out_leaves, out_leaves[0].dtype, out_leaves[0].device)
        rows = _over_basis(lambda *b: _pytree.flatten(vjp_fn(_pytree.unflatten(out_spec,
                                                                               b)))[0],
                           basis, total, dict(chunk_size=chunk_size))   # (total, *in.shape)
        jac, start = [], 0
        for o in out_leaves:
            n = o.numel()
            per_input = [r[start:start + n].reshape(tuple(o.shape) + tuple(x.shape))
                         for r, x in zip(rows, in_leaves)]
            entry = _pytree.unflatten(in_spec, per_input)
            jac.append(entry if isinstance(argnums_, tuple) else entry[0])
            start += n
        jac = _pytree.unflatten(out_spec, jac)
        return (jac, result[2]) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` with respect to args[argnums], by forward mode (vmap of jvp)."""
    def wrapper(*args, **kwargs):
        argnums_, partial, primals = _at_argnums(func, args, kwargs, argnums)
        in_leaves, in_spec = _pytree.flatten(primals)
        for x in in_leaves:
            _check_tensor(x)
        lin = _Linearized(partial, primals, has_aux, "jacfwd(f, argnums)(*args)")
        basis, total = _basis(in_leaves, in_leaves[0].dtype, in_leaves[0].device)
        columns = _over_basis(lambda *t: _pytree.flatten(lin.push(t))[0], basis, total,
                              dict(randomness=randomness))   # per output: (total, *out.shape)
        jac = []
        for col, o in zip(columns, lin.out_leaves):
            per_input, start = [], 0
            for x in in_leaves:
                n = x.numel()
                block = col[start:start + n].movedim(0, -1)
                per_input.append(block.reshape(tuple(o.shape) + tuple(x.shape)))
                start += n
            entry = _pytree.unflatten(in_spec, per_input)
            jac.append(entry if isinstance(argnums_, tuple) else entry[0])
        jac = _pytree.unflatten(lin.out_spec, jac)
        return (jac, lin.aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar-valued `func`: jacfwd of jacrev, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)
