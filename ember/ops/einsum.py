"""einsum: the forward is xp.einsum on an equation with explicit subscripts (ellipses expanded,
the sublist form read as letters); each operand's VJP is an einsum of the others."""
from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Tensor
from ..backends import array_module
from .linalg_primitives import const, eye_like
from .registry import defop, dispatch, export


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Explicit per-operand subscripts and output (ellipses expanded into fresh letters)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(terms) < len(shapes) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    used = set(c for c in eq if c.isalpha())
    for c in eq:
        if not (c.isalpha() or c in ",.->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(c)} in "
                               "the equation string, subscripts must be in [a-zA-Z]")
    fresh = [c for c in _LETTERS if c not in used]
    nell = max([len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t] or [0])
    ell = "".join(fresh[:nell])
    subs = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[nell - k:])
        if len(t) != len(s):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(t)}) does not match the number of dimensions "
                               f"({len(s)}) for operand {len(subs)} and no ellipsis was "
                               "given")
        subs.append(t)
    seen = {}   # subscript -> size; 1 broadcasts against any size, as in PyTorch
    for i, (t, s) in enumerate(zip(subs, shapes)):
        own = {}   # a subscript repeated within one operand takes its diagonal: equal sizes
        for c, n in zip(t, s):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but "
                                   f"the sizes don't match, {own[c]} != {n}")
        for c, n in zip(t, s):
            prev = seen.get(c, 1)
            if n != 1 and prev != 1 and n != prev:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {prev}")
            if n != 1:
                seen[c] = n
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    return subs, out


@defop("einsum", node="EinsumBackward0")
def _einsum(*arrays, equation, subs, out):
    xp = array_module(*arrays)
    return xp.einsum(",".join(subs) + "->" + out, *arrays, optimize=len(arrays) > 2)


@_einsum.defvjp
def _einsum_vjp(ctx, g):
    subs, out = ctx.params["subs"], ctx.params["out"]
    ops = ctx.inputs
    sizes = {}
    for s, shape in zip(subs + [out], list(ctx.in_meta[0]) + [g._data.shape]):
        for c, n in zip(s, shape):
            sizes[c] = max(sizes.get(c, 1), n)
    grads = []
    for i, s in enumerate(subs):
        if ctx.edges[i] is None:
            grads.append(None)
            continue
        terms, operands = [out], [g]
        terms += [t for j, t in enumerate(subs) if j != i]
        operands += [o for j, o in enumerate(ops) if j != i]
        # a repeated letter (a diagonal) gets fresh letters tied to it by identity matrices
        target, seen = "", set()
        spare = [c for c in _LETTERS if c not in "".join(subs) + out]
        for c in s:
            if c in seen:
                new = spare.pop(0)
                terms.append(c + new)
                operands.append(eye_like(g, sizes[c]))
                c = new
            seen.add(c)
            target += c
        # letters summed only inside operand i come back by broadcasting over ones
        have = set("".join(terms))
        for c in dict.fromkeys(target):
            if c not in have:
                terms.append(c)
                operands.append(const(g, array_module(g._data).ones(sizes[c])))
        grads.append(einsum(",".join(terms) + "->" + target, *operands))
    return tuple(grads)


def _sublist_letters(sublist):
    letters = []
    for i in sublist:
        if i is Ellipsis:
            letters.append("...")
        elif not 0 <= i < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        else:
            letters.append(chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26))
    return "".join(letters)


def _from_sublists(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]): the equation and operands,
    integer subscripts 0-51 read as letters A-Z, a-z (PyTorch's label order, so an implicit
    output comes out in the same order) and Ellipsis as '...'."""
    pairs = len(args) // 2
    operands = tuple(args[2 * k] for k in range(pairs))
    equation = ",".join(_sublist_letters(args[2 * k + 1]) for k in range(pairs))
    if len(args) % 2:
        equation += "->" + _sublist_letters(args[-1])
    return equation, operands


@export(method=False)
def einsum(equation, *operands):
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(equation, Tensor):
        equation, operands = _from_sublists((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])   # (PyTorch's recursion: its checks again)
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type_name(equation)}")
    for i, o in enumerate(operands):   # (the builtin's parser of its tensor list)
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type_name(o)}")
    for o in operands[1:]:
        if o.dtype is not operands[0].dtype:
            raise RuntimeError(f"expected scalar type {dt.type_name(operands[0].dtype)} but "
                               f"found {dt.type_name(o.dtype)}")
    subs, out = _parse_einsum(equation, [o._data.shape for o in operands])
    return dispatch(_einsum, tuple(operands), {"equation": equation, "subs": subs,
                                               "out": out}, operands[0].dtype)
