/* Binary arithmetic (+ - * /) on large float arrays, spread over the thread team.

   NumPy's loops run on one thread; PyTorch's on all of them. Each element is one IEEE
   operation (the file is built with -ffp-contract=off), so the result is NumPy's bit for
   bit whatever the thread count; backends/elementwise.py calls this only when more than one
   thread is set and the arrays are large enough for a team to pay. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <string.h>

#include "float_args.h"

enum { EK_ADD, EK_SUB, EK_MUL, EK_DIV };

/* out = a op b (b an array), or a op s (a scalar already in the arrays' type). One loop per
   operation, so each vectorises. */
#define BINARY(NAME, T)                                                                      \
    EK_CLONES static void NAME(const T *restrict a, const T *restrict b, T s,               \
                               T *restrict out, int64_t n, int op) {                        \
        const int64_t min_parallel = sizeof(T) == 4 ? EK_PARALLEL_MIN_F32 : EK_PARALLEL_MIN_F64; \
        const int threads = ek_num_threads();                                               \
        if (b) {                                                                            \
            switch (op) {                                                                   \
            case EK_ADD:                                                                    \
                _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
                for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];                       \
                break;                                                                      \
            case EK_SUB:                                                                    \
                _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
                for (int64_t i = 0; i < n; i++) out[i] = a[i] - b[i];                       \
                break;                                                                      \
            case EK_MUL:                                                                    \
                _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
                for (int64_t i = 0; i < n; i++) out[i] = a[i] * b[i];                       \
                break;                                                                      \
            default:                                                                        \
                _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
                for (int64_t i = 0; i < n; i++) out[i] = a[i] / b[i];                       \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        switch (op) {                                                                       \
        case EK_ADD:                                                                        \
            _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
            for (int64_t i = 0; i < n; i++) out[i] = a[i] + s;                              \
            break;                                                                          \
        case EK_SUB:                                                                        \
            _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
            for (int64_t i = 0; i < n; i++) out[i] = a[i] - s;                              \
            break;                                                                          \
        case EK_MUL:                                                                        \
            _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
            for (int64_t i = 0; i < n; i++) out[i] = a[i] * s;                              \
            break;                                                                          \
        default:                                                                            \
            _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(threads)") \
            for (int64_t i = 0; i < n; i++) out[i] = a[i] / s;                              \
        }                                                                                   \
    }
BINARY(binary_f32, float)
BINARY(binary_f64, double)

/* binary(op, a, b_or_None, scalar, out): op 0 add, 1 sub, 2 mul, 3 div. */
static PyObject *py_binary(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    int op;
    double scalar;
    if (!PyArg_ParseTuple(args, "iOOdO", &op, &objs[0], &objs[1], &scalar, &objs[2]))
        return NULL;
    if (op < EK_ADD || op > EK_DIV) {
        PyErr_SetString(PyExc_ValueError, "binary: op must be 0 (add) to 3 (div)");
        return NULL;
    }
    Py_buffer v[3];
    char kind;
    if (ek_float_args(objs, v, "row", &kind) < 0) return NULL;
    const int64_t n = v[0].len / v[0].itemsize;
    if (ek_check_size(&v[1], n, "binary b") < 0 || ek_check_size(&v[2], n, "binary out") < 0) {
        ek_release_args(v, 3);
        return NULL;
    }
    if (kind == 'f')
        binary_f32(v[0].buf, v[1].buf, (float)scalar, v[2].buf, n, op);
    else
        binary_f64(v[0].buf, v[1].buf, scalar, v[2].buf, n, op);
    ek_release_args(v, 3);
    Py_RETURN_NONE;
}

PyMethodDef ek_elementwise_methods[] = {
    {"binary", py_binary, METH_VARARGS,
     "binary(op, a, b, scalar, out): out = a op b (or a op scalar when b is None)"},
    {NULL, NULL, 0, NULL}};
