"""scaled_dot_product_attention and multi_head_attention_forward, composed of ember ops.

Mask conventions differ between the two, as in PyTorch: for scaled_dot_product_attention a
True in a bool `attn_mask` means "may attend"; for multi_head_attention_forward (and
nn.MultiheadAttention, nn.Transformer*) True means "masked out".
"""
import math
import warnings

import ember
from ... import _dtype as dt
from ...ops._elementwise import CPP_NAMES
from .activation import softmax
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _dropout(x, p, training=True):
    from .. import functional as F  # dropout lives in another helper's module
    return F.dropout(x, p, training)


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
    scores = ember.matmul(query, key.transpose(-2, -1)) * scale
    allowed = None  # bool: where attention may look
    if is_causal:
        allowed = ember.ones((L, S), dtype=dt.bool, device=query.device).tril()
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
    return ember.matmul(weights, value)


# ---------------------------------------------------------------------- multi-head attention
def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's batched/unbatched check; True when the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                 "instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D "
                                 "tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


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
        mask = ember.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill_(
            mask, _NEG_INF)
    return mask


def _pad_last(t):
    """One zero column appended along the last dim (bias_k/bias_v, add_zero_attn)."""
    return ember.cat([t, ember.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype,
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
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      None if attn_mask is None else attn_mask.dtype,
                                      "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention applies the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            which = "q" if q_proj_weight is None else ("k" if k_proj_weight is None else "v")
            raise AssertionError(f"use_separate_proj_weight is True but {which}_proj_weight is "
                                 "None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                   linear(value, v_proj_weight, b_v))
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz * num_heads, head_dim, "k")
    v = _heads(v, static_v, bsz * num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = ember.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = ember.cat([k, zeros], 1)
        v = ember.cat([v, zeros.to(v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = ember.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = ember.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None


def _heads(t, static, groups, head_dim, name):
    """(S, N, E) -> (N * heads, S, head_dim), or the caller's precomputed `static` one."""
    if static is None:
        return t.reshape(t.shape[0], groups, head_dim).transpose(0, 1)
    if static.shape[0] != groups:
        raise AssertionError(f"expecting static_{name}.size(0) of {groups}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
