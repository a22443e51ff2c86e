"""vmap's rules for the nn ops: convolution (and its backward ops), pooling, layer norm,
embedding and nll_loss. The batch is folded into the op's own batch dim where the op treats
samples independently, and batched weights (model ensembles) become convolution groups.
Registered into batching_rules.BATCHING_RULES."""
from .. import _creation   # (factories read at call time: ember.compile patches them)
from .batched_tensor import loop_fallback
from .batching_rules import _expanded, rule


def _fold(v, size):
    """(B, N, ...) -> (B*N, ...): the batch folded into an op's own batch dim."""
    return v.reshape((size * v.shape[1],) + tuple(v.shape[2:]))


def _unfold(out, size):
    return out.reshape((size, out.shape[0] // size) + tuple(out.shape[1:]))


@rule("convolution")
def convolution(call):
    x, w, b = call.values
    xb, wb, bb = call.batched
    p = call.params
    size = call.size
    if not wb and not bb:
        # The batch joins the images' batch dim: one convolution for all.
        return _unfold(call.run([_fold(x, size), w, b]), size)
    # Batched weights (model ensembles): the members become groups of one convolution.
    x = _expanded(call, 0)                                    # (B, N, C, *S)
    n = x.shape[1]
    x = x.movedim(0, 1).reshape((n, size * x.shape[2]) + tuple(x.shape[3:]))
    w = _expanded(call, 1)                                    # (B, O, C/g, *K)
    out_channels = w.shape[1]
    w = w.reshape((size * out_channels,) + tuple(w.shape[2:]))
    if b is not None:
        b = _expanded(call, 2).reshape(size * out_channels)
    params = dict(p, groups=p["groups"] * size)
    out = call.run([x, w, b], params)                         # (N, B*O, *S')
    out = out.reshape((n, size, out_channels) + tuple(out.shape[2:]))
    return out.movedim(1, 0)


@rule("convolution_transpose")
def convolution_transpose(call):
    """conv's input gradient: the batch joins the images' dim (weights unbatched), else
    the members become groups, as in `convolution`."""
    y, w = call.values
    p = call.params
    size = call.size
    x_shape = tuple(p["x_shape"])
    if not call.batched[1]:
        out = call.run([_fold(y, size), w],
                       dict(p, x_shape=(size * x_shape[0],) + x_shape[1:]))
        return _unfold(out, size)
    y = _expanded(call, 0)                                    # (B, N, O, *S')
    n = y.shape[1]
    y = y.movedim(0, 1).reshape((n, size * y.shape[2]) + tuple(y.shape[3:]))
    w = w.reshape((size * w.shape[1],) + tuple(w.shape[2:]))  # (B*O, C/g, *K)
    params = dict(p, groups=p["groups"] * size,
                  x_shape=(n, size * x_shape[1]) + x_shape[2:])
    out = call.run([y, w], params)                            # (N, B*C, *S)
    return out.reshape((n, size) + x_shape[1:]).movedim(1, 0)


@rule("convolution_weight")
def convolution_weight(call):
    """conv's weight gradient for each batch element: the members as groups."""
    p = call.params
    size = call.size
    x, y = _expanded(call, 0), _expanded(call, 1)             # (B, N, C, *S), (B, N, O, *S')
    n = x.shape[1]
    x = x.movedim(0, 1).reshape((n, size * x.shape[2]) + tuple(x.shape[3:]))
    y = y.movedim(0, 1).reshape((n, size * y.shape[2]) + tuple(y.shape[3:]))
    w_shape = tuple(p["w_shape"])
    params = dict(p, groups=p["groups"] * size, w_shape=(size * w_shape[0],) + w_shape[1:])
    return call.run([x, y], params).reshape((size,) + w_shape)


@rule("avg_pool_backward", "max_pool_backward")
def pooling_backward(call):
    if any(call.batched[1:]):
        return loop_fallback(call)
    size = call.size
    in_shape = tuple(call.params["in_shape"])
    values = [_fold(call.values[0], size)] + [
        None if v is None else _fold(v.unsqueeze(0).expand((size,) + tuple(v.shape)), size)
        for v in call.values[1:]]
    out = call.run(values, dict(call.params, in_shape=(size * in_shape[0],) + in_shape[1:]))
    return _unfold(out, size)


@rule("max_pool", "max_pool_values", "avg_pool", "adaptive_max_pool")
def pooling(call):
    if any(call.batched[1:]):
        return loop_fallback(call)
    values = [_fold(call.values[0], call.size)] + list(call.values[1:])
    out = call.run(values)
    if type(out) is tuple:
        return tuple(_unfold(o, call.size) for o in out)
    return _unfold(out, call.size)


@rule("native_layer_norm")
def layer_norm(call):
    """Rows normalised once for the whole batch; batched weights (ensembles) applied after."""
    x, w, b = call.values
    if not (call.batched[1] or call.batched[2]):
        return call.run()
    x = _expanded(call, 0)
    mean, rstd, y = call.run([x, None, None])
    rank = x.dim()
    for v, batched, scale in ((w, call.batched[1], True), (b, call.batched[2], False)):
        if v is None:
            continue
        if batched:      # (B, *normalized) -> (B, 1, ..., *normalized)
            v = v.reshape((v.shape[0],) + (1,) * (rank - v.dim()) + tuple(v.shape[1:]))
        y = y * v if scale else y + v
    return mean, rstd, y


@rule("embedding")
def leading_operand(call):
    """Ops batched over every leading dim of their first operand (layer norm's rows,
    embedding's indices), when the other operands (weights) are not batched."""
    batched_first = 1 if call.op.name == "embedding" else 0
    others = [b for i, b in enumerate(call.batched) if i != batched_first]
    if any(others):
        return loop_fallback(call)
    return call.run()


@rule("nll_loss")
def nll_loss(call):
    """Per-sample losses of the folded batch ('none'), reduced per batch element."""
    x, target, weight = call.values
    if call.batched[2] or call.logical_ndim(0) > 2:
        return loop_fallback(call)
    x, target = _expanded(call, 0), _expanded(call, 1)
    size = call.size
    per_row = x.dim() == 3                              # logical (N, C): rows per element
    flat_x = _fold(x, size) if per_row else x
    flat_t = target.reshape(-1)
    p = call.params
    params = dict(p, reduction="none", stash=[])
    losses = call.run([flat_x, flat_t, weight], params)[0]
    losses = losses.reshape(size, -1)
    kept = (flat_t != p["ignore_index"]).reshape(size, -1).to(x.dtype)
    row_weight = kept if weight is None else kept * weight[flat_t.clamp(0, x.shape[-1] - 1)
                                                           ].reshape(size, -1)
    total_weight = row_weight.sum(1)
    reduction = p["reduction"]
    if reduction == "none":
        loss = losses if per_row else losses.reshape(size)
    elif reduction == "sum":
        loss = losses.sum(1)
    else:
        loss = losses.sum(1) / total_weight
    p["stash"].append(total_weight)
    return loss, total_weight


@rule("nll_loss_backward")
def nll_loss_backward(call):
    """nll_loss's input gradient is linear in g: with x, target and weight shared, the
    gradient for g = 1 scaled per batch element (or rows folded, for reduction='none')."""
    g, x, target, weight = call.values
    if any(call.batched[1:]) or call.logical_ndim(1) > 2:
        return loop_fallback(call)
    size = call.size
    if call.params["reduction"] == "none" and call.logical_ndim(1) == 2:
        x_rows = x.unsqueeze(0).expand((size,) + tuple(x.shape)).reshape(-1, x.shape[-1])
        t_rows = target.unsqueeze(0).expand((size,) + tuple(target.shape)).reshape(-1)
        out = call.run([g.reshape(-1), x_rows, t_rows, weight])
        return out.reshape((size,) + tuple(x.shape))
    base = call.run([_creation.ones_like(g[0]), x, target, weight])
    return base * g.reshape((size,) + (1,) * base.dim())
