/* Softmax and log_softmax, forward and backward, float32 and float64, over one dim of a
   contiguous array seen as (outer, n, inner).

   Numerically stable: the row's maximum is subtracted before exp (one pass for the maximum,
   one for the exps and their sum, one to scale), in the array's own type (PyTorch's CPU
   accumulation type for float32 is float), with the vectorisable exps of vector_math.h; the
   one log per row is the C library's. Rows (or column
   chunks) run on ek_num_threads() threads above a size where a thread team pays for itself. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "float_args.h"
#include "vector_math.h"

#define CHUNK 64                /* columns per task when the dim is not the last */

#define T float
#define EK_PARALLEL_MIN EK_PARALLEL_MIN_F32
#define SUF(name) name##_f32
#define EXP ek_expf
#define EXP_SUM ek_expf_normal
#define LOG logf
#define LANES_SUM ek_lanes_sum_f32
#define LANES_MAX ek_lanes_max_f32
#define ROUND ek_round_reduced
#include "softmax_impl.h"
#undef T
#undef EK_PARALLEL_MIN
#undef SUF
#undef EXP
#undef EXP_SUM
#undef LOG
#undef LANES_SUM
#undef LANES_MAX
#undef ROUND

#define T double
#define EK_PARALLEL_MIN EK_PARALLEL_MIN_F64
#define SUF(name) name##_f64
#define EXP ek_exp
#define EXP_SUM ek_exp
#define LOG log
#define LANES_SUM ek_lanes_sum_f64
#define LANES_MAX ek_lanes_max_f64
#define ROUND(v, reduced) (v)
#include "softmax_impl.h"
#undef T
#undef EK_PARALLEL_MIN
#undef SUF
#undef EXP
#undef EXP_SUM
#undef LOG
#undef LANES_SUM
#undef LANES_MAX
#undef ROUND

/* ------------------------------------------------------------------ Python wrappers */
static int check_shape(Py_buffer *v, int count, long long outer, long long n, long long inner) {
    if (outer < 0 || n < 0 || inner < 0) {
        PyErr_SetString(PyExc_ValueError, "negative sizes");
        return -1;
    }
    for (int k = 0; k < count; k++)
        if (ek_check_size(&v[k], (int64_t)outer * n * inner, "softmax") < 0) return -1;
    return 0;
}

static PyObject *py_softmax(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    long long outer, n, inner;
    int take_log, last, reduced;
    if (!PyArg_ParseTuple(args, "OOLLLppi", &objs[0], &objs[1], &outer, &n, &inner, &take_log,
                          &last, &reduced))
        return NULL;
    Py_buffer v[2];
    char kind;
    if (ek_float_args(objs, v, "rw", &kind) < 0) return NULL;
    if (check_shape(v, 2, outer, n, inner) < 0) { ek_release_args(v, 2); return NULL; }
    if (last && inner != 1) {
        ek_release_args(v, 2);
        PyErr_SetString(PyExc_ValueError, "softmax: the last dim has inner size 1");
        return NULL;
    }
    if (kind == 'f') softmax_f32(v[0].buf, v[1].buf, outer, n, inner, take_log, last, reduced);
    else softmax_f64(v[0].buf, v[1].buf, outer, n, inner, take_log, last, EK_FLOAT);
    ek_release_args(v, 2);
    Py_RETURN_NONE;
}

static PyObject *py_softmax_backward(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    long long outer, n, inner;
    int take_log;
    if (!PyArg_ParseTuple(args, "OOOLLLp", &objs[0], &objs[1], &objs[2], &outer, &n, &inner,
                          &take_log))
        return NULL;
    Py_buffer v[3];
    char kind;
    if (ek_float_args(objs, v, "rrw", &kind) < 0) return NULL;
    if (check_shape(v, 3, outer, n, inner) < 0) { ek_release_args(v, 3); return NULL; }
    if (kind == 'f')
        softmax_backward_f32(v[0].buf, v[1].buf, v[2].buf, outer, n, inner, take_log);
    else
        softmax_backward_f64(v[0].buf, v[1].buf, v[2].buf, outer, n, inner, take_log);
    ek_release_args(v, 3);
    Py_RETURN_NONE;
}

PyMethodDef ek_softmax_methods[] = {
    {"softmax", py_softmax, METH_VARARGS,
     "softmax(x, y, outer, n, inner, log, last, reduced): (log_)softmax over n of x as "
     "(outer, n, inner) into y; last: n is the last dim (PyTorch's last-dim kernel); reduced "
     "1 / 2: float32 arrays of a float16 / bfloat16 tensor, whose intermediates PyTorch "
     "rounds to that type"},
    {"softmax_backward", py_softmax_backward, METH_VARARGS,
     "softmax_backward(g, y, dx, outer, n, inner, log): the input gradient of (log_)softmax "
     "from its output y and the output's gradient g, into dx"},
    {NULL, NULL, 0, NULL}};
