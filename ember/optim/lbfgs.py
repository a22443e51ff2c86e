"""L-BFGS (after minFunc), with an optional strong-Wolfe line search.

The whole parameter set is one flat vector here. Scalars that PyTorch keeps as 0-dim tensors
(dot products, step lengths, H_diag) are NumPy/CuPy 0-dim values of the parameters' dtype, so
float32 problems round where PyTorch rounds; the state holds them as 0-dim Tensors.
"""
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import enable_grad, no_grad
from ..backends.optimizer_families import flat_gradient, lbfgs_direction, scalar_array
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
    """Line search along d satisfying the strong Wolfe conditions (Nocedal & Wright, 3.5/3.6):
    returns the loss, gradient and step found, and the number of evaluations."""
    search = _Bracket(obj_func, d, f, gtd, c1, c2)
    done = search.grow(t, g.copy(), max_ls)
    low = search.zoom(done, max_ls, tolerance_change, abs(d).max())
    return search.f[low], search.g[low], search.t[low], search.evals


class _Bracket:
    """The interval of step lengths the search narrows: its ends' steps, losses, gradients
    and directional derivatives (one end only once the conditions hold)."""

    def __init__(self, obj_func, d, f, gtd, c1, c2):
        self.obj_func, self.d, self.f0, self.gtd0, self.c1, self.c2 = obj_func, d, f, gtd, c1, c2
        self.evals = self.iters = 0

    def _try(self, t):
        f_new, g_new = self.obj_func(t, self.d)
        self.evals += 1
        return f_new, g_new, g_new @ self.d

    def _sufficient(self, t, f_new):
        return f_new > self.f0 + self.c1 * t * self.gtd0

    def grow(self, t, g, max_ls):
        """Bracketing phase: grow t until an interval is known to hold a point that satisfies
        both conditions; True when t itself does."""
        t_prev, f_prev, g_prev, gtd_prev = 0, self.f0, g, self.gtd0
        f_new, g_new, gtd_new = self._try(t)
        while self.iters < max_ls:
            worse = self._sufficient(t, f_new) or (self.iters > 1 and f_new >= f_prev)
            if not worse and abs(gtd_new) <= -self.c2 * self.gtd0:
                self._set([t], [f_new], [g_new], None)
                return True
            if worse or gtd_new >= 0:
                self._set([t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()],
                          [gtd_prev, gtd_new])
                return False
            min_step, max_step = t + 0.01 * (t - t_prev), t * 10
            t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                              bounds=(min_step, max_step))
            f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
            f_new, g_new, gtd_new = self._try(t)
            self.iters += 1
        self._set([0, t], [self.f0, f_new], [g, g_new], None)
        return False

    def _set(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def zoom(self, done, max_ls, tolerance_change, d_norm):
        """Zoom phase: shrink the bracket by cubic interpolation until the conditions hold;
        the index of the end with the lower loss."""
        insuf_progress = False
        low, high = (0, 1) if self.f[0] <= self.f[-1] else (1, 0)
        while not done and self.iters < max_ls:
            if abs(self.t[1] - self.t[0]) * d_norm < tolerance_change:
                break
            t, insuf_progress = self._next_step(insuf_progress)
            f_new, g_new, gtd_new = self._try(t)
            self.iters += 1
            if self._sufficient(t, f_new) or f_new >= self.f[low]:
                self._store(high, t, f_new, g_new.copy(), gtd_new)
                low, high = (0, 1) if self.f[0] <= self.f[1] else (1, 0)
                continue
            if abs(gtd_new) <= -self.c2 * self.gtd0:
                done = True
            elif gtd_new * (self.t[high] - self.t[low]) >= 0:
                self._store(high, self.t[low], self.f[low], self.g[low], self.gtd[low])
            self._store(low, t, f_new, g_new.copy(), gtd_new)
        return low

    def _next_step(self, insuf_progress):
        """The cubic's minimiser, kept away from the bracket's ends unless the last tries
        made no progress."""
        t = _cubic_interpolate(self.t[0], self.f[0], self.gtd[0],
                               self.t[1], self.f[1], self.gtd[1])
        top, bottom = max(self.t), min(self.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) >= eps:
            return t, False
        if insuf_progress or t >= top or t <= bottom:
            return (top - eps if abs(t - top) < abs(t - bottom) else bottom + eps), False
        return t, True

    def _store(self, end, t, f, g, gtd):
        self.t[end], self.f[end], self.g[end], self.gtd[end] = t, f, g, gtd


def _to_state(value, dtype, device):
    """0-dim array values become 0-dim Tensors in the state (as PyTorch keeps them)."""
    if isinstance(value, list):
        return [_to_state(v, dtype, device) for v in value]
    # NOTE: test for an array-like first: NumPy's float64 scalar is also a Python float.
    if not hasattr(value, "shape") or isinstance(value, Tensor):
        return value
    return _wrap(scalar_array(value, dtype.np), dtype, device)


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
        return flat_gradient([p._data for p in self._params],
                             [None if p._grad is None else p._grad._data for p in self._params])

    def _add_grad(self, step_size, update):
        step_size, offset = float(step_size), 0
        with no_grad():
            for p in self._params:
                n = p.numel()
                p.add_(_wrap(update[offset:offset + n].reshape(p.shape), p.dtype, p._device),
                       alpha=step_size)
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
        p0 = self._params[0]
        state = self.state[p0]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._evaluate(closure)
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if abs(flat_grad).max() <= group["tolerance_grad"]:
            return orig_loss
        memory = _Memory(state)
        self._iterate(closure, group, state, memory, float(orig_loss), flat_grad)
        memory.save(state, p0.dtype, p0._device)
        return orig_loss

    def _iterate(self, closure, group, state, memory, loss, flat_grad):
        """Up to max_iter steps along the L-BFGS direction, each followed by the tests that
        end the iteration early (PyTorch's, in its order)."""
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        current_evals, n_iter = 1, 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            first = state["n_iter"] == 1
            d = memory.direction(flat_grad, group["history_size"], first)
            memory.remember(flat_grad, loss)
            lr = float(group["lr"])
            t = memory.t = min(1.0, 1.0 / abs(flat_grad).sum()) * lr if first else lr
            gtd = flat_grad @ d
            if gtd > -tolerance_change:
                break  # not a descent direction
            evals, opt_cond = 0, False
            if group["line_search_fn"] is not None:
                loss, flat_grad, t, evals = self._line_search(
                    closure, group["line_search_fn"], t, d, loss, flat_grad, gtd,
                    max_eval - current_evals)
                memory.t = t
                self._add_grad(t, d)
                opt_cond = abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(self._evaluate(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if abs(d * t).max() <= tolerance_change or \
                    abs(loss - memory.prev_loss) < tolerance_change:
                break

    def _line_search(self, closure, line_search_fn, t, d, loss, flat_grad, gtd, max_ls):
        """The strong-Wolfe search along d; the parameters are left where they started."""
        if line_search_fn != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        x_init = [p.detach().clone() for p in self._params]

        def obj_func(step, direction):
            self._add_grad(step, direction)
            value = float(self._evaluate(closure))
            grad = self._gather_flat_grad()
            for p, x in zip(self._params, x_init):
                p.copy_(x)
            return value, grad

        return _strong_wolfe(obj_func, t, d, loss, flat_grad, gtd, max_ls=max_ls)


class _Memory:
    """What L-BFGS keeps between steps: the last direction d and step t, the curvature pairs
    (old_dirs, old_stps, ro), H_diag, the previous flat gradient and loss, the recursion's al.
    In the optimizer's state as 0-dim Tensors and lists of them, as PyTorch keeps them."""

    _NAMES = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "al")

    def __init__(self, state):
        for name in self._NAMES:
            setattr(self, name, _from_state(state.get(name)))
        self.prev_loss = state.get("prev_loss")

    def save(self, state, dtype, device):
        for name in self._NAMES:
            value = getattr(self, name)
            if name != "al" or value is not None:
                state[name] = _to_state(value, dtype, device)
        state["prev_loss"] = self.prev_loss

    def direction(self, flat_grad, history_size, first):
        """-H g: the first step's -g, later the two-loop recursion over the curvature pairs
        (updated first with the last step's)."""
        if first:
            self.old_dirs, self.old_stps, self.ro, self.H_diag = [], [], [], 1
            self.d = -flat_grad
            return self.d
        y = flat_grad - self.prev_flat_grad
        s = self.d * self.t
        ys = y @ s
        if ys > 1e-10:
            if len(self.old_dirs) == history_size:
                self.old_dirs.pop(0)
                self.old_stps.pop(0)
                self.ro.pop(0)
            self.old_dirs.append(y)
            self.old_stps.append(s)
            self.ro.append(1.0 / ys)
            self.H_diag = ys / (y @ y)
        if self.al is None:
            self.al = [None] * history_size
        self.d = lbfgs_direction(flat_grad, self.old_dirs, self.old_stps, self.ro, self.al,
                                 self.H_diag)
        return self.d

    def remember(self, flat_grad, loss):
        if self.prev_flat_grad is None:
            self.prev_flat_grad = flat_grad.copy()
        else:
            self.prev_flat_grad[...] = flat_grad
        self.prev_loss = loss
