"""Forward-mode's rule table: op name -> the tangent of the op's result (JVP), in ember ops.

A rule gets the op, the primal inputs, their tangents (None where zero), the params, the
result dtype and the primal result. Ops linear in their tensor inputs (views, sums, adds,
casts, concatenation) apply themselves to the tangents. An op missing here gets its JVP from
the double-VJP trick on that one op (`double_vjp`), which equals the true JVP exactly.
"""
from .. import _creation   # (factories read at call time: ember.compile patches them)
from .. import _tensor as _T
from .._dtype import FLOATING
from ..ops.registry import dispatch
from .batched_tensor import recast
from .transforms import jvp

JVP_RULES = {}


def jvp_rule(*names):
    def register(fn):
        for name in names:
            JVP_RULES[name] = fn
        return fn
    return register


def _zeros_for(primals, tangents):
    """Tangents with zeros for the inputs that have none (a Python number's is 0)."""
    return [t if t is not None else _creation.zeros_like(p) if isinstance(p, _T.Tensor) else 0
            for p, t in zip(primals, tangents)]


def _dispatch(op, inputs, params, dtype=None):
    return dispatch(op, tuple(inputs), params, dtype)


# Linear in (all of) their tensor inputs: the JVP is the op applied to the tangents.
LINEAR = (
    "add sub neg clone _to_copy conj real imag sum mean nansum cumsum view expand permute "
    "transpose unsqueeze squeeze squeeze_dim squeeze_dims select slice index diagonal "
    "diagonal_copy diag_embed tril triu flip roll rot90 repeat cat stack unfold trace "
    "view_as_real view_as_complex"
).split()


@jvp_rule(*LINEAR)
def linear(op, primals, tangents, params, dtype, out):
    return _dispatch(op, _zeros_for(primals, tangents), params, dtype)


def _tangent_sum(*terms):
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


@jvp_rule("mul")
def mul(op, primals, tangents, params, dtype, out):
    (a, b), (ta, tb) = primals, tangents
    return _tangent_sum(None if ta is None else ta * b, None if tb is None else a * tb)


@jvp_rule("div")
def div(op, primals, tangents, params, dtype, out):
    (_, b), (ta, tb) = primals, tangents
    return _tangent_sum(None if ta is None else ta / b,
                        None if tb is None else -tb * out / b)


@jvp_rule("matmul")
def matmul(op, primals, tangents, params, dtype, out):
    (a, b), (ta, tb) = primals, tangents
    return _tangent_sum(None if ta is None else ta @ b, None if tb is None else a @ tb)


def _unary(fn):
    def rule(op, primals, tangents, params, dtype, out):
        return fn(primals[0], tangents[0], out)
    return rule


JVP_RULES.update({
    "exp": _unary(lambda x, t, y: t * y),
    "log": _unary(lambda x, t, y: t / x),
    "sin": _unary(lambda x, t, y: t * x.cos()),
    "cos": _unary(lambda x, t, y: -t * x.sin()),
    "tanh": _unary(lambda x, t, y: t * (1 - y * y)),
    "sigmoid": _unary(lambda x, t, y: t * y * (1 - y)),
    "sqrt": _unary(lambda x, t, y: t / (2 * y)),
    "relu": _unary(lambda x, t, y: t * (y > 0)),
})


def double_vjp(op, primals, tangents, params, dtype, arrays, inputs):
    """The JVP of one op call by the double-VJP trick (ember.func.jvp on that op)."""
    positions = [i for i, t in enumerate(tangents) if t is not None]
    floating = []   # which results have tangents (integer results, such as indices, do not)

    def call(*diff):
        values = list(primals)
        for i, v in zip(positions, diff):
            values[i] = v
        out = dispatch(op, tuple(values), params, dtype, recast(op, values, arrays, inputs))
        outs = out if type(out) is tuple else (out,)
        floating[:] = [o.dtype.category >= FLOATING for o in outs]
        return tuple(o for o in outs if o.dtype.category >= FLOATING)
    _, float_tangents = jvp(call, tuple(primals[i] for i in positions),
                            tuple(tangents[i] for i in positions))
    it = iter(float_tangents)
    return tuple(next(it) if f else None for f in floating)
