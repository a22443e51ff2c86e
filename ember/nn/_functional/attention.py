"""scaled_dot_product_attention and multi_head_attention_forward, composed of ember ops.

Mask conventions differ between the two, as in PyTorch: for scaled_dot_product_attention a
True in a bool `attn_mask` means "may attend"; for multi_head_attention_forward (and
nn.MultiheadAttention, nn.Transformer*) True means "masked out".
"""
import math
import warnings

from ... import _creation
from ... import _dtype as dt
from ...ops.matmul import bmm, matmul
from ...ops.shape import cat
from ...ops._elementwise import CPP_NAMES
from .activation import softmax
from .dropout import dropout
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _dropout(x, p, training=True):
    return dropout(x, p, training)


def _check_sdpa(query, key, value, attn_mask):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {CPP_NAMES[query.dtype]} key.dtype: "
                           f"{CPP_NAMES[key.dtype]} and value.dtype: {CPP_NAMES[value.dtype]} "
                           "instead.")
    if attn_mask is not None and attn_mask.dtype is not dt.bool and \
            attn_mask.dtype.category != dt.FLOATING and attn_mask.dtype != query.dtype:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {CPP_NAMES[attn_mask.dtype]} and "
                           f" query.dtype: {CPP_NAMES[query.dtype]} instead.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims (L x E, S x E, S x Ev).

    Rows whose every position is masked out give zeros (and zero gradients), as PyTorch's
    CPU kernels do, rather than the NaN a plain softmax would give."""
    _check_sdpa(query, key, value, attn_mask)
    L, S = query.shape[-2], key.shape[-2]
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk != 0 or value.shape[-3] != hk:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        key = key.repeat_interleave(hq // hk, dim=-3)
        value = value.repeat_interleave(hq // hk, dim=-3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = matmul(query, key.transpose(-2, -1)) * scale
    allowed = None  # bool: where attention may look
    if is_causal:
        allowed = _creation.ones((L, S), dtype=dt.bool, device=query.device).tril()
    # NOTE: with both is_causal and attn_mask, PyTorch's fused CPU kernel (the path equal
    # head sizes take) applies both; its math fallback raises instead.  We apply both.
    if attn_mask is not None:
        if attn_mask.dtype is dt.bool:
            allowed = attn_mask if allowed is None else attn_mask & allowed
        else:
            scores = scores + attn_mask
    if allowed is not None:
        scores = scores.masked_fill(allowed.logical_not(), _NEG_INF)
    dead = None  # rows with nothing to attend to
    if allowed is not None:
        dead = allowed.logical_not().all(-1, keepdim=True)
    if attn_mask is not None and attn_mask.dtype is not dt.bool:
        blocked = (attn_mask == _NEG_INF).all(-1, keepdim=True)
        dead = blocked if dead is None else dead | blocked
    if dead is not None and not bool(dead.any()):
        dead = None
    if dead is not None:
        # NOTE: fill those rows with finite scores first: softmax of an all -inf row is NaN,
        # and NaN * 0 in its backward would leak NaN into the other rows' gradients.
        scores = scores.masked_fill(dead, 0.0)
    weights = softmax(scores, -1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return matmul(weights, value)


# ---------------------------------------------------------------------- multi-head attention
def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's batched/unbatched check; True when the input is batched."""
    n = query.dim()
    if n not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{n}-D query tensor")
    what = "For batched (3-D) `query`" if n == 3 else "For unbatched (2-D) `query`"
    if key.dim() != n or value.dim() != n:
        raise AssertionError(f"{what}, expected `key` and `value` to be {n}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(f"{what}, expected `key_padding_mask` to be `None` or {n - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"{what}, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if n == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return n == 3


def canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as an additive float mask; float masks pass through."""
    if mask is None:
        return None
    if mask.dtype is not dt.bool and mask.dtype.category != dt.FLOATING:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype is dt.bool:
        mask = _creation.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill_(
            mask, _NEG_INF)
    return mask


def _pad_last(t):
    """One zero column appended along the last dim (bias_k/bias_v, add_zero_attn)."""
    return cat([t, _creation.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype,
                                     device=t.device)], -1)


def _in_projection_packed(q, k, v, w, b):
    E = q.shape[-1]
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            return proj.split(E, -1)
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        k_, v_ = linear(k, w_kv, b_kv).split(E, -1)
        return linear(q, w_q, b_q), k_, v_
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _canonical_masks(attn_mask, key_padding_mask, is_causal, need_weights, dtype):
    """Both masks as float additive masks of `dtype` (bool ones converted), and whether the
    causal hint still holds (attn_mask, key_padding_mask, is_causal)."""
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      None if attn_mask is None else attn_mask.dtype,
                                      "attn_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True  # scaled_dot_product_attention applies the causal mask itself
    attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", dtype, False)
    return attn_mask, key_padding_mask, is_causal and key_padding_mask is None


def _packed_projections(query, key, value, in_proj_weight, in_proj_bias):
    """q, k, v through one (3E, E) weight (use_separate_proj_weight=False)."""
    if tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)


def _add_zero_attn(k, v, attn_mask, key_padding_mask):
    """A zero key and value appended as one more source position (add_zero_attn=True)."""
    zeros = _creation.zeros((k.shape[0], 1, k.shape[2]), dtype=k.dtype, device=k.device)
    k = cat([k, zeros], 1)
    v = cat([v, zeros.to(v.dtype)], 1)
    if attn_mask is not None:
        attn_mask = _pad_last(attn_mask)
    if key_padding_mask is not None:
        key_padding_mask = _pad_last(key_padding_mask)
    return k, v, attn_mask, key_padding_mask


def _attention_fused(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads):
    """(L * N, E) attention through scaled_dot_product_attention (need_weights=False)."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, num_heads * head_dim)


def _separate_projections(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                          in_proj_bias):
    """q, k, v through their own weights (use_separate_proj_weight=True)."""
    if tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                             f"value's {value.shape[:2]}")
    if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
        which = "q" if q_proj_weight is None else ("k" if k_proj_weight is None else "v")
        raise AssertionError(f"use_separate_proj_weight is True but {which}_proj_weight is "
                             "None")
    b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    return (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
            linear(value, v_proj_weight, b_v))


def _checked_attn_mask(attn_mask, tgt_len, src_len, groups):
    """attn_mask checked against (L, S) or (N * heads, L, S), as 3 dims."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                               f"should be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (groups, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                               f"should be {(groups, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _add_bias_kv(k, v, bias_k, bias_v, static_k, static_v, attn_mask, key_padding_mask):
    """bias_k and bias_v appended to the keys and values as one more source position (the
    masks padded to match)."""
    if bias_v is None:
        raise AssertionError("bias_k is set but bias_v is None")
    if bias_k is None:
        raise AssertionError("bias_v is set but bias_k is None")
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    bsz = k.shape[1]
    k = cat([k, bias_k.repeat(1, bsz, 1)])
    v = cat([v, bias_v.repeat(1, bsz, 1)])
    if attn_mask is not None:
        attn_mask = _pad_last(attn_mask)
    if key_padding_mask is not None:
        key_padding_mask = _pad_last(key_padding_mask)
    return k, v, attn_mask, key_padding_mask


def _with_padding_mask(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """attn_mask with the (N, S) key padding mask added, per head: (N * heads, 1, S)."""
    for dim, size in enumerate((bsz, src_len)):
        if key_padding_mask.shape[dim] != size:
            raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {size}, but got "
                                 f"{key_padding_mask.shape[dim]}")
    kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
        .reshape(bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def _attention_weights(q, k, v, attn_mask, dropout_p, bsz, num_heads, average):
    """(N * heads, L, head_dim) attention and its weights, (N, L, S) averaged over heads or
    (N, heads, L, S): the path that returns them (need_weights=True)."""
    scores = matmul(q * math.sqrt(1.0 / q.shape[-1]), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    out = bmm(weights, v)
    weights = weights.view(bsz, num_heads, q.shape[1], k.shape[1])
    return out, (weights.mean(1) if average else weights)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on time-major (L, N, E) inputs (or unbatched (L, E)).

    Returns (output, weights): weights (N, L, S) averaged over heads, (N, heads, L, S)
    without averaging, or None when need_weights is False."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    attn_mask, key_padding_mask, is_causal = _canonical_masks(
        attn_mask, key_padding_mask, is_causal, need_weights, query.dtype)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        q, k, v = _separate_projections(query, key, value, q_proj_weight, k_proj_weight,
                                        v_proj_weight, in_proj_bias)
    else:
        q, k, v = _packed_projections(query, key, value, in_proj_weight, in_proj_bias)
    attn_mask = _checked_attn_mask(attn_mask, tgt_len, src_len, bsz * num_heads)
    if bias_k is not None or bias_v is not None:
        k, v, attn_mask, key_padding_mask = _add_bias_kv(
            k, v, bias_k, bias_v, static_k, static_v, attn_mask, key_padding_mask)
    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz * num_heads, head_dim, "k")
    v = _heads(v, static_v, bsz * num_heads, head_dim, "v")
    if add_zero_attn:
        k, v, attn_mask, key_padding_mask = _add_zero_attn(k, v, attn_mask, key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        attn_mask = _with_padding_mask(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if need_weights:
        out, weights = _attention_weights(q, k, v, attn_mask, dropout_p, bsz, num_heads,
                                          average_attn_weights)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    else:
        out, weights = _attention_fused(q, k, v, attn_mask, dropout_p, is_causal, bsz,
                                        num_heads), None
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _heads(t, static, groups, head_dim, name):
    """(S, N, E) -> (N * heads, S, head_dim), or the caller's precomputed `static` one."""
    if static is None:
        return t.reshape(t.shape[0], groups, head_dim).transpose(0, 1)
    for dim, size in ((0, groups), (2, head_dim)):
        if static.shape[dim] != size:
            raise AssertionError(f"expecting static_{name}.size({dim}) of {size}, but got "
                                 f"{static.shape[dim]}")
    return static
