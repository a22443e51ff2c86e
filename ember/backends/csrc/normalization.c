/* Layer norm and batch norm (training), forward and backward, float32 and float64.

   Layer norm normalises each of m rows of n elements; float32 is computed and accumulated in
   float, as PyTorch's CPU kernel does (its accumulation type for float is float), float64 in
   double. Two passes give the statistics (the mean, then the centred squares), one more gives
   y; the backward makes two passes over a row (its two sums, then dx), rows on
   ek_num_threads() threads above a size where a thread team pays for itself, the weight and
   bias gradients gathered per block of rows (blocks fixed by the sizes: the same bits at any
   thread count).

   Batch norm normalises each channel of an (N, C, L) tensor over N and L, its sums in double
   for both types (PyTorch's CPU accumulation type for float there is double); see
   normalization_impl.h for the column layout of its passes. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "float_args.h"
#include "vector_math.h"

#include <stdlib.h>

#define BN_BLOCK 256            /* batch norm: columns per task (their sums stay in L1) */

/* Layer norm's backward: the row blocks whose dw and db partial sums are added in order, from
   (m, n) alone so that any thread count gives the same sums. About 16K elements a block (a
   team's share stays large), at most 64 blocks (their buffers stay small: 2 n each). */
static int64_t ln_blocks(int64_t m, int64_t n) {
    const int64_t wanted = (m * n + (1 << 14) - 1) >> 14;
    return wanted < 1 ? 1 : (wanted > 64 ? 64 : (wanted > m ? m : wanted));
}

/* Layer norm's rows go to the team from a quarter of the row kernels' size: its forward takes
   about 0.5 ns an element on one thread, its backward three times that, so 64K float32
   elements (a GPT block's (1024, 128) activations are 128K) are already some ten times the
   team's wake-up. */
#define LN_PARALLEL_MIN (EK_PARALLEL_MIN / 4)

#define T float
#define EK_PARALLEL_MIN EK_PARALLEL_MIN_F32
#define SUF(name) name##_f32
#define SQRT sqrtf
#define LANES_SUM ek_lanes_sum_f32
#include "normalization_impl.h"
#undef T
#undef EK_PARALLEL_MIN
#undef SUF
#undef SQRT
#undef LANES_SUM

#define T double
#define EK_PARALLEL_MIN EK_PARALLEL_MIN_F64
#define SUF(name) name##_f64
#define SQRT sqrt
#define LANES_SUM ek_lanes_sum_f64
#include "normalization_impl.h"
#undef T
#undef EK_PARALLEL_MIN
#undef SUF
#undef SQRT
#undef LANES_SUM

/* ------------------------------------------------------------------ Python wrappers */
/* m rows (the length of views[rows]) of n elements (views[0] / m); 0, or -1 with an error */
static int row_sizes(Py_buffer *v, int rows, int64_t *m, int64_t *n) {
    *m = v[rows].len / v[rows].itemsize;
    const int64_t total = v[0].len / v[0].itemsize;
    *n = *m ? total / *m : 0;
    if (*m == 0 || *n == 0 || *m * *n != total) {
        PyErr_SetString(PyExc_ValueError, "layer_norm: m rows of n > 0 elements expected");
        return -1;
    }
    return 0;
}

static PyObject *py_layer_norm(PyObject *self, PyObject *args) {
    PyObject *objs[6];
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOOOd", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &eps))
        return NULL;
    Py_buffer v[6];   /* x, w, b, y, mean, rstd */
    char kind;
    if (ek_float_args(objs, v, "roowww", &kind) < 0) return NULL;
    int64_t m, n;
    if (row_sizes(v, 4, &m, &n) < 0 || ek_check_size(&v[1], n, "weight") < 0 ||
        ek_check_size(&v[2], n, "bias") < 0 || ek_check_size(&v[3], m * n, "y") < 0 ||
        ek_check_size(&v[5], m, "rstd") < 0) {
        ek_release_args(v, 6);
        return NULL;
    }
    if (kind == 'f')
        layer_norm_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, m, n,
                       (float)eps);
    else
        layer_norm_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, m, n, eps);
    ek_release_args(v, 6);
    Py_RETURN_NONE;
}

static PyObject *py_layer_norm_backward(PyObject *self, PyObject *args) {
    PyObject *objs[10];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6], &objs[7], &objs[8], &objs[9]))
        return NULL;
    Py_buffer v[10];  /* g, x, w, mean, rstd, gmean, grstd, dx, dw, db */
    char kind;
    if (ek_float_args(objs, v, "rrorrooOOO", &kind) < 0) return NULL;
    int64_t m, n;
    if (row_sizes(v, 3, &m, &n) < 0 || ek_check_size(&v[1], m * n, "x") < 0 ||
        ek_check_size(&v[2], n, "weight") < 0 || ek_check_size(&v[4], m, "rstd") < 0 ||
        ek_check_size(&v[5], m, "gmean") < 0 || ek_check_size(&v[6], m, "grstd") < 0 ||
        ek_check_size(&v[7], m * n, "dx") < 0 || ek_check_size(&v[8], n, "dw") < 0 ||
        ek_check_size(&v[9], n, "db") < 0) {
        ek_release_args(v, 10);
        return NULL;
    }
    const int rc = kind == 'f'
        ? layer_norm_backward_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
                                  v[6].buf, v[7].buf, v[8].buf, v[9].buf, m, n)
        : layer_norm_backward_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
                                  v[6].buf, v[7].buf, v[8].buf, v[9].buf, m, n);
    ek_release_args(v, 10);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* C = len(mean) channels of N runs of L: 0, or -1 with an error */
static int bn_sizes(Py_buffer *v, int64_t N, int64_t L, int64_t *C) {
    *C = v[4].len / v[4].itemsize;
    if (N <= 0 || L <= 0 || *C <= 0 || N * *C * L != v[0].len / v[0].itemsize) {
        PyErr_SetString(PyExc_ValueError, "batch_norm: an (N, C, L) array of N, C, L > 0 "
                        "expected, C = len(mean)");
        return -1;
    }
    return 0;
}

static PyObject *py_batch_norm(PyObject *self, PyObject *args) {
    PyObject *objs[6];
    long long N, L;
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOOOLLd", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &N, &L, &eps))
        return NULL;
    Py_buffer v[6];   /* x, w, b, y, mean, var */
    char kind;
    if (ek_float_args(objs, v, "roowww", &kind) < 0) return NULL;
    int64_t C;
    if (bn_sizes(v, N, L, &C) < 0 || ek_check_size(&v[1], C, "weight") < 0 ||
        ek_check_size(&v[2], C, "bias") < 0 || ek_check_size(&v[3], N * C * L, "y") < 0 ||
        ek_check_size(&v[5], C, "var") < 0) {
        ek_release_args(v, 6);
        return NULL;
    }
    const int rc = kind == 'f'
        ? batch_norm_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, N, C, L,
                         eps)
        : batch_norm_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, N, C, L,
                         eps);
    ek_release_args(v, 6);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_batch_norm_backward(PyObject *self, PyObject *args) {
    PyObject *objs[10];
    long long N, L;
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOLLd", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6], &objs[7], &objs[8], &objs[9], &N, &L,
                          &eps))
        return NULL;
    Py_buffer v[10];  /* g, x, w, mean, var, gmean, gvar, dx, dw, db */
    char kind;
    if (ek_float_args(objs, v, "rrorrooOOO", &kind) < 0) return NULL;
    int64_t C;
    /* (bn_sizes reads the channel count from v[4]: var here) */
    if (bn_sizes(v, N, L, &C) < 0 || ek_check_size(&v[1], N * C * L, "x") < 0 ||
        ek_check_size(&v[2], C, "weight") < 0 || ek_check_size(&v[3], C, "mean") < 0 ||
        ek_check_size(&v[5], C, "gmean") < 0 || ek_check_size(&v[6], C, "gvar") < 0 ||
        ek_check_size(&v[7], N * C * L, "dx") < 0 || ek_check_size(&v[8], C, "dw") < 0 ||
        ek_check_size(&v[9], C, "db") < 0) {
        ek_release_args(v, 10);
        return NULL;
    }
    const int rc = kind == 'f'
        ? batch_norm_backward_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
                                  v[6].buf, v[7].buf, v[8].buf, v[9].buf, N, C, L, eps)
        : batch_norm_backward_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
                                  v[6].buf, v[7].buf, v[8].buf, v[9].buf, N, C, L, eps);
    ek_release_args(v, 10);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

PyMethodDef ek_normalization_methods[] = {
    {"layer_norm", py_layer_norm, METH_VARARGS,
     "layer_norm(x, w, b, y, mean, rstd, eps): each of the m rows of x (m = len(mean))\n"
     "normalised into y, times w and plus b (either may be None); its mean and 1 / std\n"
     "into mean and rstd"},
    {"layer_norm_backward", py_layer_norm_backward, METH_VARARGS,
     "layer_norm_backward(g, x, w, mean, rstd, gmean, grstd, dx, dw, db): the gradients of\n"
     "layer_norm from g (y's), gmean and grstd (the statistics', or None) into dx, dw, db\n"
     "(None: not wanted)"},
    {"batch_norm", py_batch_norm, METH_VARARGS,
     "batch_norm(x, w, b, y, mean, var, N, L, eps): training-mode batch norm of x as (N, C, L)\n"
     "(C = len(mean)) into y, times w and plus b (either may be None); each channel's mean\n"
     "and biased variance into mean and var"},
    {"batch_norm_backward", py_batch_norm_backward, METH_VARARGS,
     "batch_norm_backward(g, x, w, mean, var, gmean, gvar, dx, dw, db, N, L, eps): the\n"
     "gradients of batch_norm from g (y's), gmean and gvar (the statistics', or None) into\n"
     "dx, dw, db (None: not wanted)"},
    {NULL, NULL, 0, NULL}};
