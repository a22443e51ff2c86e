"""L-BFGS (after minFunc), with an optional strong-Wolfe line search.

The whole parameter set is one flat vector here. Scalars that PyTorch keeps as 0-dim tensors
(dot products, step lengths, H_diag) are NumPy/CuPy 0-dim values of the parameters' dtype, so
float32 problems round where PyTorch rounds; the state holds them as 0-dim Tensors.
"""
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import increment_version
from ..backends import array_module
from .optimizer import Optimizer, check_lr

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square ** 0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along d satisfying the strong Wolfe conditions (Nocedal & Wright, 3.5/3.6)."""
    xp = array_module(d)
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(t, d)
    evals = 1
    gtd_new = xp.dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # Bracketing phase: grow t until an interval is known to hold a point that satisfies both.
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = xp.dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom phase: shrink the bracket by cubic interpolation until the conditions hold.
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the bracket's ends unless the last tries made no progress.
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insuf_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = xp.dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _to_state(value, dtype, device):
    """0-dim array values become 0-dim Tensors in the state (as PyTorch keeps them)."""
    if isinstance(value, list):
        return [_to_state(v, dtype, device) for v in value]
    # NOTE: test for an array-like first: NumPy's float64 scalar is also a Python float.
    if not hasattr(value, "shape") or isinstance(value, Tensor):
        return value
    return _wrap(array_module(value).asarray(value, dtype=dtype.np), dtype, device)


def _from_state(value):
    if isinstance(value, Tensor):
        return value._data if value.ndim else value._data[()]
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    return value


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        p0 = self._params[0]
        xp = array_module(p0._data)
        return xp.concatenate([
            xp.zeros(p.numel(), dtype=p._data.dtype) if p._grad is None
            else p._grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        step_size, offset = float(step_size), 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            increment_version(p)
            offset += n

    def _evaluate(self, closure):
        with enable_grad():
            return closure()

    def step(self, closure):
        result = []
        self._run_step(None, lambda: result.append(self._step(closure)))
        return result[0]

    def _step(self, closure):
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        p0 = self._params[0]
        xp = array_module(p0._data)
        state = self.state[p0]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._evaluate(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if xp.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        old_dirs, old_stps = _from_state(state.get("old_dirs")), _from_state(state.get("old_stps"))
        ro, H_diag = _from_state(state.get("ro")), _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = _from_state(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                # Update the curvature pairs, then the two-loop recursion for d = -H g.
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = xp.dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / xp.dot(y, y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = xp.dot(old_stps[i], q) * ro[i]
                    q += float(-al[i]) * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = xp.dot(old_dirs[i], r) * ro[i]
                    r += float(al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = xp.dot(flat_grad, d)
            if gtd > -tolerance_change:
                break  # not a descent direction

            evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]

                def obj_func(step, direction, x_init=x_init):
                    self._add_grad(step, direction)
                    value = float(self._evaluate(closure))
                    grad = self._gather_flat_grad()
                    for p, x in zip(self._params, x_init):
                        p._data[...] = x
                    return value, grad

                loss, flat_grad, t, evals = _strong_wolfe(obj_func, t, d, loss, flat_grad, gtd,
                                                          max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(self._evaluate(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        dtype, device = p0.dtype, p0._device
        state["d"] = _to_state(d, dtype, device)
        state["t"] = _to_state(t, dtype, device)
        state["old_dirs"] = _to_state(old_dirs, dtype, device)
        state["old_stps"] = _to_state(old_stps, dtype, device)
        state["ro"] = _to_state(ro, dtype, device)
        state["H_diag"] = _to_state(H_diag, dtype, device)
        state["prev_flat_grad"] = _to_state(prev_flat_grad, dtype, device)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = _to_state(al, dtype, device)
        return orig_loss
