/* Optimizer steps: one parameter's update in one pass over its arrays, and the same over
   lists of parameters (PyTorch's foreach form: one call from Python per parameter group).

   NumPy needs four passes for SGD with momentum (scale the buffer, add the gradient, scale
   by the learning rate into a temporary, subtract it) and more with weight decay; this walks
   the arrays once. Every step rounds where the NumPy reference in backends/optimizers.py
   rounds (the file is built with -ffp-contract=off), so both paths give the same bits. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <math.h>
#include <string.h>

#include "float_args.h"

typedef struct {
    double momentum, dampening, lr, weight_decay;
    int nesterov, maximize, first, has_buffer;
} sgd_options;

/* w -= lr * d, where d is g (maximize: -g; weight decay: + wd * w), or the momentum buffer
   b = momentum * b + (1 - dampening) * d (b = d on the first step), or with Nesterov
   d + momentum * b. The common step (a buffer already there, no maximize, weight decay or
   Nesterov, lr != 0) has a loop of its own without branches, which vectorises; multiplying
   by a factor of exactly 1 (no dampening, lr 1) changes no bits, so it serves those too. */
#define SGD_STEP(NAME, T)                                                                   \
    EK_CLONES static void NAME(T *restrict w, const T *restrict g, T *restrict b,           \
                               int64_t n, sgd_options o) {                                  \
        const T momentum = (T)o.momentum, keep = (T)(1.0 - o.dampening), lr = (T)o.lr,     \
                wd = (T)o.weight_decay;                                                     \
        const int64_t min_parallel = sizeof(T) == 4 ? EK_PARALLEL_MIN_F32 : EK_PARALLEL_MIN_F64; \
        if (o.has_buffer && !o.first && !o.maximize && o.weight_decay == 0 && !o.nesterov && \
            o.lr != 0) {                                                                    \
            _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(ek_num_threads())") \
            for (int64_t i = 0; i < n; i++) {                                               \
                const T v = b[i] * momentum + keep * g[i];                                  \
                b[i] = v;                                                                   \
                w[i] = w[i] - lr * v;                                                       \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        const int damp = o.dampening != 0, decay = o.weight_decay != 0;                     \
        const int lr_one = o.lr == 1, lr_zero = o.lr == 0;                                  \
        _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(ek_num_threads())") \
        for (int64_t i = 0; i < n; i++) {                                                   \
            T d = o.maximize ? -g[i] : g[i];                                                \
            if (decay) d = d + wd * w[i];                                                   \
            if (o.has_buffer) {                                                             \
                T v;                                                                        \
                if (o.first) v = d;                                                         \
                else {                                                                      \
                    v = b[i] * momentum;                                                    \
                    v = damp ? v + keep * d : v + d;                                        \
                }                                                                           \
                b[i] = v;                                                                   \
                d = o.nesterov ? d + momentum * v : v;                                      \
            }                                                                               \
            if (!lr_zero) w[i] = lr_one ? w[i] - d : w[i] - lr * d;                         \
        }                                                                                   \
    }
SGD_STEP(sgd_step_f32, float)
SGD_STEP(sgd_step_f64, double)

typedef struct {
    double beta1, beta2, lr, weight_decay, eps, step;
    int decoupled, amsgrad;
} adam_options;

/* One parameter's Adam/AdamW step in place (or a run of its elements: adam_team): weight decay (on w when decoupled, else on the
   gradient), both moments (the first by PyTorch's lerp, whose formula turns at weight 0.5),
   the optional running maximum of the second (amsgrad; NumPy's maximum, NaN-propagating),
   then w -= step_size * m / (sqrt(v) / sqrt(bias_correction2) + eps). Each scalar is
   rounded to T once and each operation rounded where backends/optimizers.adam_step rounds.

   Why two loops and selects: a store under a condition (`if (decoupled) w[i] = ...`, the
   amsgrad maximum) kept GCC from vectorising the loop at all (8 cycles an element). The
   options are fixed for the whole loop, so each is a select between two computed values
   (the same bits as the branch: the unchosen value is dropped), every store is
   unconditional, and amsgrad, the one option with an extra array, has a loop of its own. */
#define ADAM_MOMENTS(T)                                                                     \
    const T gi = g[i], w0 = w[i];                                                           \
    const T wi = decoupled_decay ? w0 * shrink : w0;                                        \
    const T d = coupled_decay ? gi + wd * w0 : gi;                                          \
    const T mi = low ? m[i] + wt * (d - m[i]) : d - (d - m[i]) * keep;                      \
    m[i] = mi;                                                                              \
    T vi = v[i] * beta2;                                                                    \
    vi = vi + rest * (d * d);                                                               \
    v[i] = vi;
#define ADAM_UPDATE(T, SQRT)                                                                 \
    T denom = SQRT(vi) / bc2;                                                               \
    denom = denom + eps;                                                                    \
    w[i] = wi - step_size * (mi / denom);
#define ADAM_STEP(NAME, T, SQRT)                                                            \
    EK_CLONES static void NAME(T *restrict w, const T *restrict g, T *restrict m,           \
                               T *restrict v, T *restrict vmax, int64_t n, adam_options o) {\
        const double weight = 1.0 - o.beta1;                                                \
        const T wt = (T)weight, keep = (T)(1.0 - weight), beta2 = (T)o.beta2,              \
                rest = (T)(1.0 - o.beta2), wd = (T)o.weight_decay,                          \
                shrink = (T)(1.0 - o.lr * o.weight_decay), eps = (T)o.eps;                  \
        const T bc2 = (T)sqrt(1.0 - pow(o.beta2, o.step)),                                 \
                step_size = (T)(o.lr / (1.0 - pow(o.beta1, o.step)));                       \
        const int decay = o.weight_decay != 0, low = weight < 0.5;                          \
        const int decoupled_decay = decay && o.decoupled, coupled_decay = decay && !o.decoupled; \
        if (!o.amsgrad) {                                                                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                ADAM_MOMENTS(T)                                                             \
                ADAM_UPDATE(T, SQRT)                                                         \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            ADAM_MOMENTS(T)                                                                 \
            const T a = vmax[i];                                                            \
            vi = (a >= vi || a != a) ? a : vi;                                              \
            vmax[i] = vi;                                                                   \
            ADAM_UPDATE(T, SQRT)                                                             \
        }                                                                                   \
    }
ADAM_STEP(adam_step_f32, float, sqrtf)
ADAM_STEP(adam_step_f64, double, sqrt)

/* One parameter's five arrays (max_exp_avg_sq may be None) as buffers, with their kind and
   length; -1 with an exception set and nothing held when they are not what the kernel
   takes (C-contiguous float32 or float64 arrays of one dtype and one length). */
static int adam_args(PyObject **objs, Py_buffer *v, char *kind, int64_t *n) {
    if (ek_float_args(objs, v, "wrwwO", kind) < 0) return -1;
    *n = v[0].len / v[0].itemsize;
    if (ek_check_size(&v[1], *n, "adam_step grad") < 0 ||
        ek_check_size(&v[2], *n, "adam_step exp_avg") < 0 ||
        ek_check_size(&v[3], *n, "adam_step exp_avg_sq") < 0 ||
        ek_check_size(&v[4], *n, "adam_step max_exp_avg_sq") < 0) {
        ek_release_args(v, 5);
        return -1;
    }
    return 0;
}

/* Elements [lo, hi) of one parameter's arrays. */
static void adam_run(Py_buffer *v, char kind, int64_t lo, int64_t hi, adam_options o) {
    o.amsgrad = o.amsgrad && v[4].obj != NULL;
    if (kind == 'f') {
        float *a[5];
        for (int k = 0; k < 5; k++) a[k] = v[k].buf ? (float *)v[k].buf + lo : NULL;
        adam_step_f32(a[0], a[1], a[2], a[3], a[4], hi - lo, o);
    } else {
        double *a[5];
        for (int k = 0; k < 5; k++) a[k] = v[k].buf ? (double *)v[k].buf + lo : NULL;
        adam_step_f64(a[0], a[1], a[2], a[3], a[4], hi - lo, o);
    }
}

/* Elements (float32; float64 counts twice) from which the step's team pays: the step
   reads four arrays and writes three, about 1 ns an element on one core, so 64K take about
   60 us against a 2-4 us wake-up. */
#define ADAM_PARALLEL_MIN (1 << 16)

/* `count` parameters' steps, each parameter's five buffers at views[5 i], as one run of
   elements split evenly among the team: part k takes elements [total k / parts,
   total (k + 1) / parts) of the parameters laid end to end (a GPT's, each below a team's
   threshold on its own, together well above it). Each element's update is computed alone,
   so the split changes no bit. */
static void adam_team(Py_buffer *views, const char *kinds, const int64_t *sizes,
                      const adam_options *opts, Py_ssize_t count) {
    int64_t total = 0, weighted = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        total += sizes[i];
        weighted += kinds[i] == 'f' ? sizes[i] : 2 * sizes[i];
    }
    const int parts = weighted >= ADAM_PARALLEL_MIN ? ek_num_threads() : 1;
#pragma omp parallel for schedule(static, 1) num_threads(parts) if (parts > 1)
    for (int part = 0; part < parts; part++) {
        const int64_t lo = total * part / parts, hi = total * (part + 1) / parts;
        int64_t start = 0;
        for (Py_ssize_t i = 0; i < count && start < hi; i++) {
            const int64_t end = start + sizes[i];
            const int64_t a = lo > start ? lo : start, b = hi < end ? hi : end;
            if (a < b) adam_run(&views[i * 5], kinds[i], a - start, b - start, opts[i]);
            start = end;
        }
    }
}

/* adam_step(w, g, exp_avg, exp_avg_sq, max_exp_avg_sq_or_None, beta1, beta2, lr,
   weight_decay, eps, step, decoupled, amsgrad) */
static PyObject *py_adam_step(PyObject *self, PyObject *args) {
    PyObject *objs[5];
    adam_options o;
    if (!PyArg_ParseTuple(args, "OOOOOddddddpp", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &o.beta1, &o.beta2, &o.lr, &o.weight_decay, &o.eps,
                          &o.step, &o.decoupled, &o.amsgrad))
        return NULL;
    Py_buffer v[5];
    char kind;
    int64_t n;
    if (adam_args(objs, v, &kind, &n) < 0) return NULL;
    adam_team(v, &kind, &n, &o, 1);
    ek_release_args(v, 5);
    Py_RETURN_NONE;
}

/* The most arrays one parameter's step takes (Adam's five). */
#define MAX_PARAM_ARRAYS 5

/* The arrays of a group of parameters for a kernel over lists (PyTorch's foreach form):
   parameter i's k-th array is lists[k][i] (lists[k] may be None where spec[k] is 'O': no
   parameter has that array), taken as ek_float_args takes one parameter's with `spec`, into
   views[i * nlists + k], with the parameter's kind and length (all its arrays of that length).
   Every parameter is checked before any is written: 1 when all are held (release them with
   release_params), 0 when one cannot take the kernel (nothing held, no exception: the caller
   takes the per-parameter path for all of them), -1 with a ValueError when the lists' lengths
   differ. */
static int hold_params(PyObject **lists, const char *spec, Py_ssize_t count, Py_buffer *views,
                       char *kinds, int64_t *sizes, const char *name) {
    const int nlists = (int)strlen(spec);
    for (int k = 0; k < nlists; k++) {
        if (spec[k] == 'O' && lists[k] == Py_None) continue;
        if (!PyList_Check(lists[k]) || PyList_GET_SIZE(lists[k]) != count) {
            PyErr_Format(PyExc_ValueError, "%s: lists of different lengths", name);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *objs[MAX_PARAM_ARRAYS];
        for (int k = 0; k < nlists; k++)
            objs[k] = lists[k] == Py_None ? Py_None : PyList_GET_ITEM(lists[k], i);
        Py_buffer *v = &views[i * nlists];
        int ok = ek_float_args(objs, v, spec, &kinds[i]) == 0;
        if (ok) {
            sizes[i] = v[0].len / v[0].itemsize;
            for (int k = 1; k < nlists && ok; k++) ok = ek_check_size(&v[k], sizes[i], name) == 0;
            if (!ok) ek_release_args(v, nlists);
        }
        if (!ok) {
            PyErr_Clear();
            for (Py_ssize_t j = 0; j < i; j++) ek_release_args(&views[j * nlists], nlists);
            return 0;
        }
    }
    return 1;
}

static void release_params(Py_buffer *views, int nlists, Py_ssize_t count) {
    for (Py_ssize_t i = 0; i < count; i++) ek_release_args(&views[i * nlists], nlists);
}

/* What a kernel over lists holds for `count` parameters: their buffers, kinds and lengths. */
typedef struct {
    Py_buffer *views;
    char *kinds;
    int64_t *sizes;
} param_arrays;

static int alloc_params(param_arrays *a, Py_ssize_t count, int nlists) {
    const size_t n = count ? (size_t)count : 1;
    a->views = PyMem_Calloc(n * nlists, sizeof(Py_buffer));
    a->kinds = PyMem_Malloc(n);
    a->sizes = PyMem_Malloc(n * sizeof(int64_t));
    if (a->views && a->kinds && a->sizes) return 0;
    PyMem_Free(a->views); PyMem_Free(a->kinds); PyMem_Free(a->sizes);
    PyErr_NoMemory();
    return -1;
}

static void free_params(param_arrays *a) {
    PyMem_Free(a->views); PyMem_Free(a->kinds); PyMem_Free(a->sizes);
}

/* adam_steps(ws, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs_or_None, beta1, beta2, lr,
   weight_decay, eps, steps, decoupled, amsgrad): adam_step over lists of parameters (PyTorch's
   foreach form: one call from Python per parameter group), each with its own step count.
   Every parameter's arrays are checked before any is written: False (nothing done) when one
   cannot take the kernel, so the caller can take the reference path for all of them. */
static PyObject *py_adam_steps(PyObject *self, PyObject *args) {
    PyObject *lists[5], *steps;
    adam_options o;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OdddddO!pp", &PyList_Type, &lists[0], &PyList_Type,
                          &lists[1], &PyList_Type, &lists[2], &PyList_Type, &lists[3],
                          &lists[4], &o.beta1, &o.beta2, &o.lr, &o.weight_decay, &o.eps,
                          &PyList_Type, &steps, &o.decoupled, &o.amsgrad))
        return NULL;
    const Py_ssize_t count = PyList_GET_SIZE(lists[0]);
    if (PyList_GET_SIZE(steps) != count) {
        PyErr_SetString(PyExc_ValueError, "adam_steps: one step count per parameter");
        return NULL;
    }
    param_arrays a;
    adam_options *opts = PyMem_Malloc((count ? count : 1) * sizeof(adam_options));
    if (!opts) return PyErr_NoMemory();
    if (alloc_params(&a, count, 5) < 0) {
        PyMem_Free(opts);
        return NULL;
    }
    const int takes = hold_params(lists, "wrwwO", count, a.views, a.kinds, a.sizes,
                                  "adam_steps");
    PyObject *result = takes < 0 ? NULL : takes ? Py_True : Py_False;
    for (Py_ssize_t i = 0; takes > 0 && i < count; i++) {
        opts[i] = o;
        opts[i].step = PyFloat_AsDouble(PyList_GET_ITEM(steps, i));
        if (opts[i].step == -1.0 && PyErr_Occurred()) {
            result = NULL;
            break;
        }
    }
    if (takes > 0 && result) adam_team(a.views, a.kinds, a.sizes, opts, count);
    if (takes > 0) release_params(a.views, 5, count);
    free_params(&a);
    PyMem_Free(opts);
    Py_XINCREF(result);
    return result;
}

typedef struct {
    double lr, alpha, eps, momentum;
    int centered, has_momentum;
} rmsprop_options;

/* One parameter's RMSprop step in place, rounding where backends/optimizers.rmsprop_step's
   NumPy form rounds: s = s * alpha + (1 - alpha) * (g * g); centered, the gradient average by
   PyTorch's lerp (its formula turns at weight 0.5) and sqrt(s - a * a), else sqrt(s); plus
   eps; then with momentum b = b * momentum + g / avg and w -= lr * b, else w -= lr * (g /
   avg). The options are fixed for the loop: selects, not branches, so it vectorises. */
#define RMSPROP_STEP(NAME, T, SQRT)                                                          \
    EK_CLONES static void NAME(T *restrict w, const T *restrict g, T *restrict s,           \
                               T *restrict a, T *restrict b, int64_t n, rmsprop_options o) {\
        const double weight = 1.0 - o.alpha;                                                \
        const T alpha = (T)o.alpha, rest = (T)weight, wt = (T)weight,                       \
                keep = (T)(1.0 - weight), eps = (T)o.eps, lr = (T)o.lr,                     \
                momentum = (T)o.momentum;                                                   \
        const int low = weight < 0.5;                                                       \
        const int64_t min_parallel = sizeof(T) == 4 ? EK_PARALLEL_MIN_F32 : EK_PARALLEL_MIN_F64; \
        _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(ek_num_threads())") \
        for (int64_t i = 0; i < n; i++) {                                                   \
            const T gi = g[i];                                                              \
            T si = s[i] * alpha;                                                            \
            si = si + rest * (gi * gi);                                                     \
            s[i] = si;                                                                      \
            T avg;                                                                          \
            if (o.centered) {                                                               \
                const T ai = low ? a[i] + wt * (gi - a[i]) : gi - (gi - a[i]) * keep;       \
                a[i] = ai;                                                                  \
                avg = SQRT(si - ai * ai);                                                   \
            } else {                                                                        \
                avg = SQRT(si);                                                             \
            }                                                                               \
            avg = avg + eps;                                                                \
            if (o.has_momentum) {                                                           \
                T bi = b[i] * momentum;                                                     \
                bi = bi + gi / avg;                                                         \
                b[i] = bi;                                                                  \
                w[i] = w[i] - lr * bi;                                                      \
            } else {                                                                        \
                w[i] = w[i] - lr * (gi / avg);                                              \
            }                                                                               \
        }                                                                                   \
    }
RMSPROP_STEP(rmsprop_step_f32, float, sqrtf)
RMSPROP_STEP(rmsprop_step_f64, double, sqrt)

/* sgd_steps(ws, gs, bufs_or_None, firsts, momentum, dampening, lr, weight_decay, nesterov,
   maximize): the SGD step of each parameter of a list in place (one call from Python per
   parameter group, or per parameter: backends/optimizers.py), through SGD_STEP's loop;
   firsts[i] says parameter i's buffer is new (bufs None: no momentum). False, with nothing
   written, when one parameter's arrays cannot take the kernel. */
static PyObject *py_sgd_steps(PyObject *self, PyObject *args) {
    PyObject *lists[3], *firsts;
    sgd_options o;
    if (!PyArg_ParseTuple(args, "O!O!OOddddpp", &PyList_Type, &lists[0], &PyList_Type,
                          &lists[1], &lists[2], &firsts, &o.momentum, &o.dampening, &o.lr,
                          &o.weight_decay, &o.nesterov, &o.maximize))
        return NULL;
    const Py_ssize_t count = PyList_GET_SIZE(lists[0]);
    o.has_buffer = lists[2] != Py_None;
    if (o.has_buffer && (!PyList_Check(firsts) || PyList_GET_SIZE(firsts) != count)) {
        PyErr_SetString(PyExc_ValueError, "sgd_steps: one first-step flag per parameter");
        return NULL;
    }
    param_arrays a;
    if (alloc_params(&a, count, 3) < 0) return NULL;
    const int takes = hold_params(lists, "wrO", count, a.views, a.kinds, a.sizes, "sgd_steps");
    PyObject *result = takes < 0 ? NULL : takes ? Py_True : Py_False;
    for (Py_ssize_t i = 0; takes > 0 && i < count; i++) {
        const Py_buffer *v = &a.views[i * 3];
        o.first = o.has_buffer && PyObject_IsTrue(PyList_GET_ITEM(firsts, i));
        if (a.kinds[i] == 'f') sgd_step_f32(v[0].buf, v[1].buf, v[2].buf, a.sizes[i], o);
        else sgd_step_f64(v[0].buf, v[1].buf, v[2].buf, a.sizes[i], o);
    }
    if (takes > 0) release_params(a.views, 3, count);
    free_params(&a);
    Py_XINCREF(result);
    return result;
}

/* rmsprop_steps(ws, gs, square_avgs, grad_avgs_or_None, bufs_or_None, lr, alpha, eps,
   momentum): the RMSprop step of each parameter of a list in place (one call from Python per
   parameter group, or per parameter), through RMSPROP_STEP's loop; grad_avgs or bufs, or
   entries of them, None: uncentered, without momentum. False, with nothing written, when
   one parameter's arrays cannot take the kernel. */
static PyObject *py_rmsprop_steps(PyObject *self, PyObject *args) {
    PyObject *lists[5];
    rmsprop_options o;
    if (!PyArg_ParseTuple(args, "O!O!O!OOdddd", &PyList_Type, &lists[0], &PyList_Type,
                          &lists[1], &PyList_Type, &lists[2], &lists[3], &lists[4], &o.lr,
                          &o.alpha, &o.eps, &o.momentum))
        return NULL;
    const Py_ssize_t count = PyList_GET_SIZE(lists[0]);
    param_arrays a;
    if (alloc_params(&a, count, 5) < 0) return NULL;
    const int takes = hold_params(lists, "wrwOO", count, a.views, a.kinds, a.sizes,
                                  "rmsprop_steps");
    PyObject *result = takes < 0 ? NULL : takes ? Py_True : Py_False;
    for (Py_ssize_t i = 0; takes > 0 && i < count; i++) {
        const Py_buffer *v = &a.views[i * 5];
        o.centered = v[3].obj != NULL;
        o.has_momentum = v[4].obj != NULL;
        if (a.kinds[i] == 'f')
            rmsprop_step_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, a.sizes[i], o);
        else
            rmsprop_step_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, a.sizes[i], o);
    }
    if (takes > 0) release_params(a.views, 5, count);
    free_params(&a);
    Py_XINCREF(result);
    return result;
}

PyMethodDef ek_optimizer_methods[] = {
    {"adam_step", py_adam_step, METH_VARARGS,
     "adam_step(w, g, exp_avg, exp_avg_sq, max_sq, beta1, beta2, lr, weight_decay, eps, "
     "step, decoupled, amsgrad): one parameter's Adam update in place"},
    {"adam_steps", py_adam_steps, METH_VARARGS,
     "adam_steps(ws, gs, exp_avgs, exp_avg_sqs, max_sqs, beta1, beta2, lr, weight_decay, "
     "eps, steps, decoupled, amsgrad): adam_step over lists of parameters; False, with "
     "nothing written, when one parameter's arrays cannot take the kernel"},
    {"rmsprop_steps", py_rmsprop_steps, METH_VARARGS,
     "rmsprop_steps(ws, gs, square_avgs, grad_avgs, bufs, lr, alpha, eps, momentum): each "
     "parameter's RMSprop update in place (grad_avgs None uncentered, bufs None without "
     "momentum); False, with nothing written, when one parameter's arrays cannot take the "
     "kernel"},
    {"sgd_steps", py_sgd_steps, METH_VARARGS,
     "sgd_steps(ws, gs, bufs, firsts, momentum, dampening, lr, weight_decay, nesterov, "
     "maximize): each parameter's SGD update in place (bufs None without momentum; firsts: "
     "which buffers are new); False, with nothing written, when one parameter's arrays "
     "cannot take the kernel"},
    {NULL, NULL, 0, NULL}};
