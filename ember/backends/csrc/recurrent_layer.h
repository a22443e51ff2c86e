/* What the recurrent layer kernels share (recurrent.c's LSTM, gru.c's GRU): the gate
   activations, BLAS's sgemm where gemm.c has no kernel, how a layer's batch rows are split
   among threads, and the argument buffers. Include after ember_kernels.h. */
#ifndef EMBER_RECURRENT_LAYER_H
#define EMBER_RECURRENT_LAYER_H
#include "gemm.h"
#include "vector_math.h"

#include <math.h>
#include <stdlib.h>

/* (ek_expf_normal: below x = -88 the sigmoid is about 6e-39 rather than 0) */
static inline float sigmoid_f32(float x) { return 1.0f / (1.0f + ek_expf_normal(-x)); }

/* tanh(x) = -m / (2 + m) for m = expm1(-2|x|), sign restored. expm1(y) = 2^n expm1(r) +
   (2^n - 1) with y = n ln 2 + r: the polynomial's expm1(r) is relatively accurate and the
   sum has one rounding (2^n - 1 is exact down to n = -24, below which it rounds to -1 well
   under half an ulp of m), so tanh keeps its relative precision near 0 without a second
   formula there (a series next to exp, both computed and one picked, took twice as long).
   Within 2.5 ulp (measured over [1e-38, 11], as before). Past |x| = 10 tanh is 1 in float:
   y is capped at -20 so that 2^n expm1(r) stays a normal float (a subnormal product costs a
   microcode assist per vector on Intel CPUs). nan stays nan. */
static inline float tanh_f32(float x) {
    float y = -2.0f * fabsf(x);
    y = y < -20.0f ? -20.0f : y;
    float n;
    const float em1 = ek_expm1f_reduced(y, &n);
    const float scale = ek_f32_from_bits((uint32_t)((int32_t)n + 127) << 23);   /* 2^n */
    const float m = fmaf(scale, em1, scale - 1.0f);
    return copysignf(-m / (2.0f + m), x);
}

/* BLAS's sgemm (Fortran calling convention, column-major), from SciPy's cython_blas capsule:
   the layer's products where gemm.c has no kernel for this CPU (no AVX2 and FMA, or not
   x86-64). */
typedef void (*sgemm_t)(char *transa, char *transb, int *m, int *n, int *k, float *alpha,
                        float *a, int *lda, float *b, int *ldb, float *beta, float *c,
                        int *ldc);

static inline sgemm_t get_sgemm(PyObject *capsule) {
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred()) return NULL;
    return (sgemm_t)PyCapsule_GetPointer(capsule, name);
}

/* The layer's threads split the batch: each runs every step for rows of its own (a
   recurrent layer's batch rows never meet: row b's state depends on row b's inputs alone), so
   the threads never wait for each other and write nothing another reads. NOTE: splitting the
   hidden units instead (a barrier per step, each thread reading the other's half of h, or of
   the gate gradients, for its product) ran the 2-thread backward slower than one thread: the
   shared operand's cache lines crossed cores at every step. The rows go in chunks of whole
   panels of gemm.h's kernel, two chunks a thread, taken as threads come free: a thread whose
   core is busy (another process, or a BLAS thread still spinning) leaves its second chunk to
   the others. A product's bits do not depend on the split (each element is one chain over
   k). */
typedef struct {
    int64_t steps, batch, n;
    int reverse, mr;     /* mr: gemm.h's panel rows; 0 where BLAS runs the products */
    sgemm_t sgemm;
} layer_shape;

static inline int team_size(const layer_shape *L) {
    /* one thread where BLAS runs the products, or while a step's product is too small to
       share: 6-8 B H^2 flops (GRU, LSTM), about 5 us on one core from B H^2 = 64K */
    if (!L->mr || L->batch * L->n * L->n < 65536) return 1;
    const int64_t panels = (L->batch + L->mr - 1) / L->mr;
    return ek_num_threads() < panels ? ek_num_threads() : (int)panels;
}

/* Rows per chunk for a team of `parts`: all of them for one thread, else whole panels, about
   two chunks a thread. */
static inline int64_t chunk_rows(const layer_shape *L, int parts) {
    if (parts == 1 || !L->mr) return L->batch > 0 ? L->batch : 1;
    const int64_t panels = (L->batch + L->mr - 1) / L->mr;
    return (panels + 2 * parts - 1) / (2 * parts) * L->mr;
}

/* A thread's packed left operand (gemm.h's layout) for `rows` rows of k columns, zeroed (a
   panel's rows past the last are read, not stored); NULL where BLAS runs the products or on
   no memory (*failed set). */
static inline float *row_pack(const layer_shape *L, int64_t rows, int64_t k, int *failed) {
    if (!L->mr) return NULL;
    float *pack = calloc((size_t)((rows + L->mr - 1) / L->mr * L->mr * k + 1), sizeof(float));
    if (!pack) *failed = 1;
    return pack;
}

/* A chunk of the batch's rows [b0, b1) through every step: a layer kernel's row function,
   reading the kernel's argument buffers `v` and its own `scratch`. */
typedef void (*rows_fn)(const layer_shape *L, Py_buffer *v, float *scratch, int64_t b0,
                        int64_t b1, float *pack);

/* The batch in chunks (chunk_rows) over the team (team_size), each thread with its own packed
   operand of `width` columns (row_pack). 0, or -1 when a thread found no memory. */
static inline int on_row_chunks(const layer_shape *L, int64_t width, rows_fn rows,
                                Py_buffer *v, float *scratch) {
    const int parts = team_size(L);
    const int64_t per = chunk_rows(L, parts), chunks = (L->batch + per - 1) / per;
    int failed = 0;
#pragma omp parallel num_threads(parts) if (parts > 1) reduction(| : failed)
    {
        float *pack = row_pack(L, per, width, &failed);
#pragma omp for schedule(dynamic, 1)
        for (int64_t k = 0; k < chunks; k++) {
            const int64_t b0 = k * per, b1 = b0 + per < L->batch ? b0 + per : L->batch;
            if (!failed) rows(L, v, scratch, b0, b1, pack);
        }
        free(pack);
    }
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ argument buffers */
static inline int get_f32(PyObject *obj, Py_buffer *v, int writable, Py_ssize_t elements) {
    char kind;
    if (ek_float_buffer(obj, v, &kind, writable) < 0) return -1;
    if (kind != 'f' || v->len / v->itemsize != elements) {
        PyBuffer_Release(v);
        PyErr_SetString(PyExc_ValueError, "float32 arrays of the step's shapes expected");
        return -1;
    }
    return 0;
}

static inline void release(Py_buffer *v, int count) {
    for (int k = 0; k < count; k++) PyBuffer_Release(&v[k]);
}

/* The buffers of `count` arguments (float32, `sizes` elements each, writable where asked);
   -1 with none held on failure. */
static inline int get_all(PyObject **o, Py_buffer *v, const int *writable,
                          const Py_ssize_t *sizes, int count) {
    for (int k = 0; k < count; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) {
            release(v, k);
            return -1;
        }
    return 0;
}

#endif
