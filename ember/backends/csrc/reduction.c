/* The sum of a large float array, spread over the thread team, with the same bits at every
   thread count and on every CPU.

   The order of the additions is fixed by the array's length alone: blocks of SUM_BLOCK
   elements, each summed over EK_LANES lanes (lane k takes elements k, k + EK_LANES, ...) and
   its lanes combined pairwise (vector_math.h), then the blocks' sums combined pairwise. The
   team only decides which thread sums which blocks. float32 accumulates in float, as PyTorch's
   CPU sum does; the error grows with the longest chain of additions, SUM_BLOCK / EK_LANES
   + log2(blocks) + 4, about NumPy's pairwise sum's. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <stdlib.h>

#include "vector_math.h"

#define SUM_BLOCK 1024   /* elements: 64 additions a lane; the blocks' sums stay small */
/* float32 elements (float64: half) from which a team pays: 1M take 130 us on one thread */
#define SUM_PARALLEL_MIN (1 << 19)

#define ROW_SUM(T, NAME, LANES_SUM)                                                         \
    EK_INLINE T NAME(const T *restrict x, int64_t n) {                                      \
        T acc[EK_LANES] = {0};                                                              \
        int64_t i = 0;                                                                      \
        for (; i + EK_LANES <= n; i += EK_LANES)                                            \
            EK_LANE_LOOP                                                                    \
            for (int k = 0; k < EK_LANES; k++) acc[k] += x[i + k];                          \
        EK_LANE_LOOP                                                                        \
        for (int k = 0; i + k < n; k++) acc[k] += x[i + k];                                 \
        return LANES_SUM(acc);                                                              \
    }
ROW_SUM(float, block_sum_f32, ek_lanes_sum_f32)
ROW_SUM(double, block_sum_f64, ek_lanes_sum_f64)

/* p[0] + ... + p[m - 1] pairwise, neighbours first; p is overwritten */
#define PAIRWISE(T, NAME)                                                                   \
    static T NAME(T *p, int64_t m) {                                                        \
        while (m > 1) {                                                                     \
            const int64_t half = m / 2;                                                     \
            for (int64_t i = 0; i < half; i++) p[i] = p[2 * i] + p[2 * i + 1];              \
            if (m & 1) p[half] = p[m - 1];                                                  \
            m = half + (m & 1);                                                             \
        }                                                                                   \
        return m ? p[0] : 0;                                                                \
    }
PAIRWISE(float, pairwise_f32)
PAIRWISE(double, pairwise_f64)

/* The sum of x[0 .. n), partials holding (n + SUM_BLOCK - 1) / SUM_BLOCK elements. */
#define SUM(T, NAME, BLOCK_SUM, PAIRWISE_SUM, MIN_PARALLEL)                                 \
    EK_CLONES static T NAME(const T *restrict x, int64_t n, T *restrict partials) {         \
        const int64_t blocks = (n + SUM_BLOCK - 1) / SUM_BLOCK, min_parallel = MIN_PARALLEL;  \
        _Pragma("omp parallel for schedule(static) if (n >= min_parallel) num_threads(ek_num_threads())") \
        for (int64_t b = 0; b < blocks; b++) {                                              \
            const int64_t at = b * SUM_BLOCK;                                               \
            partials[b] = BLOCK_SUM(x + at, n - at < SUM_BLOCK ? n - at : SUM_BLOCK);       \
        }                                                                                   \
        return PAIRWISE_SUM(partials, blocks);                                              \
    }
SUM(float, sum_f32, block_sum_f32, pairwise_f32, SUM_PARALLEL_MIN)
SUM(double, sum_f64, block_sum_f64, pairwise_f64, SUM_PARALLEL_MIN / 2)

/* ------------------------------------------------------------------ Python wrappers */
/* sum(a) -> float: the sum of a float32 or float64 array's elements, in its own type. */
static PyObject *py_sum(PyObject *self, PyObject *arg) {
    Py_buffer v;
    char kind;
    if (ek_float_buffer(arg, &v, &kind, 0) < 0) return NULL;
    const int64_t n = v.len / v.itemsize;
    const int64_t blocks = (n + SUM_BLOCK - 1) / SUM_BLOCK;
    void *partials = malloc((size_t)(blocks ? blocks : 1) * v.itemsize);
    if (!partials) {
        PyBuffer_Release(&v);
        return PyErr_NoMemory();
    }
    const double s = kind == 'f' ? (double)sum_f32(v.buf, n, partials)
                                 : sum_f64(v.buf, n, partials);
    free(partials);
    PyBuffer_Release(&v);
    return PyFloat_FromDouble(s);
}

PyMethodDef ek_reduction_methods[] = {
    {"sum", py_sum, METH_O,
     "sum(a): the sum of a float32 or float64 array, in its own type (a fixed order of "
     "additions: the same bits at any thread count)"},
    {NULL, NULL, 0, NULL}};
