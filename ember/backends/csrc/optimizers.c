/* Optimizer steps: one parameter's update in one pass over its arrays.

   NumPy needs four passes for SGD with momentum (scale the buffer, add the gradient, scale
   by the learning rate into a temporary, subtract it) and more with weight decay; this walks
   the arrays once. Every step rounds where the NumPy reference in backends/optimizers.py
   rounds (the file is built with -ffp-contract=off), so both paths give the same bits. */
#include "ember_kernels.h"   /* first: it includes Python.h */

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

/* sgd_step(w, g, buf_or_None, momentum, dampening, lr, weight_decay, nesterov, maximize,
   first) */
static PyObject *py_sgd_step(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    sgd_options o;
    if (!PyArg_ParseTuple(args, "OOOddddppp", &objs[0], &objs[1], &objs[2], &o.momentum,
                          &o.dampening, &o.lr, &o.weight_decay, &o.nesterov, &o.maximize,
                          &o.first))
        return NULL;
    Py_buffer v[3];
    char kind;
    if (ek_float_args(objs, v, "wrO", &kind) < 0) return NULL;
    const int64_t n = v[0].len / v[0].itemsize;
    if (ek_check_size(&v[1], n, "sgd_step grad") < 0 ||
        ek_check_size(&v[2], n, "sgd_step momentum buffer") < 0) {
        ek_release_args(v, 3);
        return NULL;
    }
    o.has_buffer = v[2].obj != NULL;
    if (kind == 'f') sgd_step_f32(v[0].buf, v[1].buf, v[2].buf, n, o);
    else sgd_step_f64(v[0].buf, v[1].buf, v[2].buf, n, o);
    ek_release_args(v, 3);
    Py_RETURN_NONE;
}

PyMethodDef ek_optimizer_methods[] = {
    {"sgd_step", py_sgd_step, METH_VARARGS,
     "sgd_step(w, g, buf, momentum, dampening, lr, weight_decay, nesterov, maximize, first): "
     "one parameter's SGD update in place (buf None without momentum)"},
    {NULL, NULL, 0, NULL}};
