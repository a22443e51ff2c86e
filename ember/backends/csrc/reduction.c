/* The sum of a large float array, spread over the thread team, with the same bits at every
   thread count and on every CPU; and rows summed by index (an embedding's gradient).

   The order of the additions is fixed by the array's length alone: blocks of SUM_BLOCK
   elements, each summed over EK_LANES lanes (lane k takes elements k, k + EK_LANES, ...) and
   its lanes combined pairwise (vector_math.h), then the blocks' sums combined pairwise. The
   team only decides which thread sums which blocks. float32 accumulates in float, as PyTorch's
   CPU sum does; the error grows with the longest chain of additions, SUM_BLOCK / EK_LANES
   + log2(blocks) + 4, about NumPy's pairwise sum's. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <stdlib.h>
#include <string.h>

#include "vector_math.h"

#define SUM_BLOCK 1024   /* elements: 64 additions a lane; the blocks' sums stay small */
/* float32 elements (float64: half) from which a team pays: 128K take 9 us on one thread,
   6 on two */
#define SUM_PARALLEL_MIN (1 << 17)

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

/* ------------------------------------------------------------------ sums over leading dims */
/* out (cols) = the rows of x (rows, cols) added in row order, ((0 + x0) + x1) + ..., column by
   column: NumPy's order for a sum over the leading dims of a C-contiguous array (a bias's
   gradient), so the same bits as the NumPy path (starting from +0 as NumPy does: a column of
   -0 sums to +0). Eight rows go into each pass over `out` (one load and store of it for eight
   rows read, where NumPy's loop stores it after every row); threads own runs of columns, so
   the thread count changes no bit. */
#define LEAD_ROWS 8
/* columns of one run: its out stays in the L1 cache while the rows stream past */
#define LEAD_COLS 2048
/* elements from which a team pays (measured: a (1024, 128) sum, 8 us alone, took 11 on two
   threads; (1024, 512) 37 -> 28 us) */
#define LEAD_PARALLEL_MIN (1 << 18)

#define LEADING_SUM(T, NAME)                                                                \
    EK_INLINE void NAME##_run(const T *restrict x, int64_t rows, int64_t cols,              \
                              T *restrict out, int64_t width) {                             \
        for (int64_t j = 0; j < width; j++) out[j] = 0;                                    \
        int64_t i = 0;                                                                      \
        for (; i + LEAD_ROWS <= rows; i += LEAD_ROWS) {                                     \
            const T *r = x + i * cols;                                                      \
            for (int64_t j = 0; j < width; j++) {                                           \
                T s = out[j];                                                               \
                for (int k = 0; k < LEAD_ROWS; k++) s += r[k * cols + j];                   \
                out[j] = s;                                                                 \
            }                                                                               \
        }                                                                                   \
        for (; i < rows; i++)                                                               \
            for (int64_t j = 0; j < width; j++) out[j] += x[i * cols + j];                  \
    }                                                                                       \
    EK_CLONES static void NAME(const T *x, int64_t rows, int64_t cols, T *out) {            \
        const int team = rows * cols >= LEAD_PARALLEL_MIN ? ek_num_threads() : 1;           \
        /* runs of whole 16-column vectors, one or more a thread, at most LEAD_COLS */      \
        int64_t width = ((cols + team - 1) / team + 15) / 16 * 16;                          \
        width = width < LEAD_COLS ? width : LEAD_COLS;                                      \
        const int64_t runs = (cols + width - 1) / width;                                    \
        _Pragma("omp parallel for schedule(static) if (team > 1 && runs > 1) num_threads(team)") \
        for (int64_t p = 0; p < runs; p++) {                                                \
            const int64_t j0 = p * width;                                                   \
            NAME##_run(x + j0, rows, cols, out + j0, cols - j0 < width ? cols - j0 : width); \
        }                                                                                   \
    }
LEADING_SUM(float, leading_sum_f32)
LEADING_SUM(double, leading_sum_f64)

/* ------------------------------------------------------------------ rows summed by index */
/* out (R, dim) = 0, then row i of x (n, dim) added to row index[i] of out, for i = 0, 1, ...
   in turn (rows whose index is `skip` left out): each output row's sum runs in the order of
   its occurrences, as PyTorch's embedding backward adds them, so the thread count (threads
   own ranges of output rows, each scanning every index) never changes a bit. */
EK_INLINE void add_row_f32(float *restrict out, const float *restrict x, int64_t dim) {
    for (int64_t j = 0; j < dim; j++) out[j] += x[j];
}

EK_INLINE void add_row_f64(double *restrict out, const double *restrict x, int64_t dim) {
    for (int64_t j = 0; j < dim; j++) out[j] += x[j];
}

/* elements of x from which a team pays (each thread reads every index) */
#define ROWS_PARALLEL_MIN (1 << 16)

#define INDEX_ROW_SUM(T, NAME, ADD_ROW)                                                     \
    EK_CLONES static void NAME(const T *x, const int64_t *index, int64_t n, int64_t dim,     \
                               T *out, int64_t rows, int64_t skip) {                         \
        const int parts = n * dim >= ROWS_PARALLEL_MIN ? ek_num_threads() : 1;              \
        _Pragma("omp parallel for schedule(static, 1) num_threads(parts) if (parts > 1)")   \
        for (int part = 0; part < parts; part++) {                                          \
            const int64_t lo = rows * part / parts, hi = rows * (part + 1) / parts;         \
            memset(out + lo * dim, 0, (size_t)((hi - lo) * dim) * sizeof(T));               \
            for (int64_t i = 0; i < n; i++) {                                               \
                const int64_t k = index[i];                                                 \
                if (k >= lo && k < hi && k != skip) ADD_ROW(out + k * dim, x + i * dim, dim); \
            }                                                                               \
        }                                                                                   \
    }
INDEX_ROW_SUM(float, index_row_sum_f32, add_row_f32)
INDEX_ROW_SUM(double, index_row_sum_f64, add_row_f64)

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

/* leading_sum(x, out, rows, cols): out (cols) = the sum of x's (rows, cols) rows, in row
   order, in x's float type. */
static PyObject *py_leading_sum(PyObject *self, PyObject *args) {
    PyObject *xo, *oo;
    Py_ssize_t rows, cols;
    if (!PyArg_ParseTuple(args, "OOnn", &xo, &oo, &rows, &cols)) return NULL;
    Py_buffer x, out;
    char kind, out_kind;
    if (ek_float_buffer(xo, &x, &kind, 0) < 0) return NULL;
    if (ek_float_buffer(oo, &out, &out_kind, 1) < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    const int ok = kind == out_kind && rows > 0 && x.len == rows * cols * x.itemsize &&
                   out.len == cols * out.itemsize;
    if (ok) {
        if (kind == 'f') leading_sum_f32(x.buf, rows, cols, out.buf);
        else leading_sum_f64(x.buf, rows, cols, out.buf);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "leading_sum: a (rows, cols) array, rows > 0, and a "
                                          "(cols) one of its float dtype expected");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* index_row_sum(x, index, out, skip): out (R, dim) = the rows of x (n, dim) summed into the
   rows `index` (n int64 values in [0, R)) names, rows whose index is `skip` left out. */
static PyObject *py_index_row_sum(PyObject *self, PyObject *args) {
    PyObject *xo, *io, *oo;
    long long skip;
    Py_ssize_t rows, dim;
    if (!PyArg_ParseTuple(args, "OOOLnn", &xo, &io, &oo, &skip, &rows, &dim)) return NULL;
    Py_buffer x, out, index;
    char kind, out_kind;
    if (ek_float_buffer(xo, &x, &kind, 0) < 0) return NULL;
    if (ek_float_buffer(oo, &out, &out_kind, 1) < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (PyObject_GetBuffer(io, &index, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&out);
        return NULL;
    }
    const int64_t n = index.len / 8;
    const char f = index.format ? index.format[0] : 'B';
    const int ok = kind == out_kind && index.itemsize == 8 && (f == 'q' || f == 'l') &&
                   x.len == n * dim * x.itemsize && out.len == rows * dim * out.itemsize;
    int bad = 0;   /* an index out of range, then its value */
    int64_t value = 0;
    for (int64_t i = 0; ok && i < n && !bad; i++) {
        value = ((const int64_t *)index.buf)[i];
        bad = value < 0 || value >= rows;
    }
    if (ok && !bad) {
        if (kind == 'f') index_row_sum_f32(x.buf, index.buf, n, dim, out.buf, rows, skip);
        else index_row_sum_f64(x.buf, index.buf, n, dim, out.buf, rows, skip);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    PyBuffer_Release(&index);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "index_row_sum: (n, dim) and (R, dim) arrays of one "
                                          "float dtype and n int64 indices expected");
        return NULL;
    }
    if (bad) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for %lld rows",
                     (long long)value, (long long)rows);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef ek_reduction_methods[] = {
    {"sum", py_sum, METH_O,
     "sum(a): the sum of a float32 or float64 array, in its own type (a fixed order of "
     "additions: the same bits at any thread count)"},
    {"leading_sum", py_leading_sum, METH_VARARGS,
     "leading_sum(x, out, rows, cols): out = the rows of x (rows, cols) added in row order"},
    {"index_row_sum", py_index_row_sum, METH_VARARGS,
     "index_row_sum(x, index, out, skip, R, dim): out (R, dim) = rows of x summed into the "
     "rows index names"},
    {NULL, NULL, 0, NULL}};
