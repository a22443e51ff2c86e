/* Elementwise work on large float arrays, spread over the thread team: binary arithmetic
   (+ - * /) and unary functions (exp, sigmoid, sqrt).

   NumPy's loops run on one thread; PyTorch's on all of them. Each element is computed on its
   own, so the thread count never changes a bit. Binary arithmetic is one IEEE operation per
   element (the file is built with -ffp-contract=off): NumPy's bits, and
   backends/elementwise.py calls it only when more than one thread is set. The unary functions
   are built on vector_math.h's exp, whose every rounding is written out, so each CPU clone
   gives the same bits (sigmoid is 1 / (1 + exp(-x)), 0 below -88.7 as PyTorch's; sqrt is
   IEEE's, NumPy's bits); exp and sigmoid differ from NumPy's in the last places, so
   backends/elementwise.py uses them for every large float32 array whatever the thread
   count. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <string.h>

#include "float_args.h"
#include "vector_math.h"

enum { EK_ADD, EK_SUB, EK_MUL, EK_DIV };

/* out = a op b (b an array), or a op s (a scalar already in the arrays' type). One loop per
   operation, so each vectorises. A team from the row kernels' threshold, where the arrays
   leave a core's L2 (128K float32 in cache take 11 us on one thread, 512K out of it 130). */
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

/* Elements from which a team pays for a unary function (32K exps take 12 us on one
   thread). */
#define EK_PARALLEL_MIN_UNARY (1 << 15)

enum { EK_EXP, EK_SIGMOID, EK_SQRT, EK_UNARY_OPS };

/* out = f(a) in float32 (float64 stays NumPy's: its AVX-512 exp beats ek_exp). Element-wise,
   with no reduction: the team splits the elements as it likes. One loop per function, so
   each vectorises. */
#define UNARY_LOOP(EXPR)                                                                     \
    _Pragma("omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN_UNARY) num_threads(threads)") \
    for (int64_t i = 0; i < n; i++) out[i] = EXPR;
EK_CLONES static void unary_f32(const float *restrict a, float *restrict out, int64_t n,
                                int op) {
    const int threads = ek_num_threads();
    switch (op) {
    case EK_EXP: UNARY_LOOP(ek_expf(a[i])) break;
    case EK_SIGMOID: UNARY_LOOP(1.0f / (1.0f + ek_expf(-a[i]))) break;
    default: UNARY_LOOP(sqrtf(a[i]))
    }
}

/* exp and sigmoid on AVX-512: ek_expf's formula step for step, its scaling by 2^n in one
   vscalefps (a single rounding, as ek_expf's exact first factor then rounding second) and its
   lanes below -104 zeroed by the mask (so they compute no subnormal): the same bits for every
   float input (checked over all 2^32), in a third of the vector instructions. The
   auto-vectorised ek_expf spent two thirds of its time in the clamps, selects and two-factor
   scaling that vscalefps does at once; the loop was compute-bound at 0.7 ns an element. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define EK_HAS_EXP16 1

__attribute__((target("avx512f"))) static inline __m512 exp16(__m512 x) {
    /* not below -104 (nan included: it stays nan through the arithmetic) */
    const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ);
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);   /* (min gives its second operand for nan) */
    const __m512 big = _mm512_set1_ps(12582912.0f);
    const __m512 n = _mm512_sub_ps(
        _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), big), big);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r,
                               _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(live, p, n);
}

__attribute__((target("avx512f"))) static void exp_sigmoid_avx512(const float *a, float *out,
                                                                  int64_t n, int sigmoid) {
    const int threads = ek_num_threads();
    const int64_t blocks = (n + 15) / 16;
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN_UNARY) num_threads(threads)
    for (int64_t b = 0; b < blocks; b++) {
        const __mmask16 m = n - 16 * b >= 16 ? 0xFFFF : (__mmask16)((1u << (n - 16 * b)) - 1);
        const __m512 x = _mm512_maskz_loadu_ps(m, a + 16 * b);
        const __m512 one = _mm512_set1_ps(1.0f);
        const __m512 y = sigmoid ? _mm512_div_ps(one, _mm512_add_ps(one, exp16(
                                       _mm512_sub_ps(_mm512_setzero_ps(), x))))
                                 : exp16(x);
        _mm512_mask_storeu_ps(out + 16 * b, m, y);
    }
}
#endif

/* ek_float_args for arrays of one size, which goes to *n; 0, or -1 with an error set */
static int same_size_args(PyObject **objs, Py_buffer *v, const char *spec, char *kind,
                          int64_t *n) {
    if (ek_float_args(objs, v, spec, kind) < 0) return -1;
    const int count = (int)strlen(spec);
    *n = v[0].len / v[0].itemsize;
    for (int k = 1; k < count; k++)
        if (ek_check_size(&v[k], *n, "elementwise operand") < 0) {
            ek_release_args(v, count);
            return -1;
        }
    return 0;
}

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
    int64_t n;
    if (same_size_args(objs, v, "row", &kind, &n) < 0) return NULL;
    if (kind == 'f')
        binary_f32(v[0].buf, v[1].buf, (float)scalar, v[2].buf, n, op);
    else
        binary_f64(v[0].buf, v[1].buf, scalar, v[2].buf, n, op);
    ek_release_args(v, 3);
    Py_RETURN_NONE;
}

/* unary(op, a, out): op 0 exp, 1 sigmoid, 2 sqrt. */
static PyObject *py_unary(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    int op;
    if (!PyArg_ParseTuple(args, "iOO", &op, &objs[0], &objs[1])) return NULL;
    if (op < EK_EXP || op >= EK_UNARY_OPS) {
        PyErr_SetString(PyExc_ValueError, "unary: op must be 0 (exp) to 2 (sqrt)");
        return NULL;
    }
    Py_buffer v[2];
    char kind;
    int64_t n;
    if (same_size_args(objs, v, "rw", &kind, &n) < 0) return NULL;
    if (kind != 'f') {
        ek_release_args(v, 2);
        PyErr_SetString(PyExc_TypeError, "unary: float32 arrays expected");
        return NULL;
    }
#ifdef EK_HAS_EXP16
    static int avx512 = -1;
    if (avx512 < 0) {
        __builtin_cpu_init();
        avx512 = __builtin_cpu_supports("avx512f");
    }
    if (avx512 && op != EK_SQRT)
        exp_sigmoid_avx512(v[0].buf, v[1].buf, n, op == EK_SIGMOID);
    else
#endif
        unary_f32(v[0].buf, v[1].buf, n, op);
    ek_release_args(v, 2);
    Py_RETURN_NONE;
}

PyMethodDef ek_elementwise_methods[] = {
    {"unary", py_unary, METH_VARARGS,
     "unary(op, a, out): out = f(a) for float32 arrays, op 0 exp, 1 sigmoid, 2 sqrt"},
    {"binary", py_binary, METH_VARARGS,
     "binary(op, a, b, scalar, out): out = a op b (or a op scalar when b is None)"},
    {NULL, NULL, 0, NULL}};
