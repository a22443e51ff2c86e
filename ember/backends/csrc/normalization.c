/* Layer norm forward and backward, float32 and float64, over the last n elements of each of
   m rows.

   float32 is computed and accumulated in float, as PyTorch's CPU kernel does (its accumulation
   type for float is float), float64 in double. Two passes give the statistics (the mean, then
   the centred squares), one more gives y; the backward makes two passes over a row (its two
   sums, then dx), rows on ek_num_threads() threads above a size where a thread team pays for
   itself, the weight and bias gradients gathered per thread. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "float_args.h"
#include "vector_math.h"

#include <stdlib.h>

#define EK_PARALLEL_MIN 32768   /* elements; below this one thread is faster */
#ifdef _OPENMP
#define EK_THREAD_NUM() omp_get_thread_num()
#else
#define EK_THREAD_NUM() 0
#endif

#define T float
#define SUF(name) name##_f32
#define SQRT sqrtf
#define LANES_SUM ek_lanes_sum_f32
#include "normalization_impl.h"
#undef T
#undef SUF
#undef SQRT
#undef LANES_SUM

#define T double
#define SUF(name) name##_f64
#define SQRT sqrt
#define LANES_SUM ek_lanes_sum_f64
#include "normalization_impl.h"
#undef T
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

PyMethodDef ek_normalization_methods[] = {
    {"layer_norm", py_layer_norm, METH_VARARGS,
     "layer_norm(x, w, b, y, mean, rstd, eps): each of the m rows of x (m = len(mean))\n"
     "normalised into y, times w and plus b (either may be None); its mean and 1 / std\n"
     "into mean and rstd"},
    {"layer_norm_backward", py_layer_norm_backward, METH_VARARGS,
     "layer_norm_backward(g, x, w, mean, rstd, gmean, grstd, dx, dw, db): the gradients of\n"
     "layer_norm from g (y's), gmean and grstd (the statistics', or None) into dx, dw, db\n"
     "(None: not wanted)"},
    {NULL, NULL, 0, NULL}};
