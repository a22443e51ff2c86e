/* Recurrent-cell kernels: the gate arithmetic of one LSTM step, forward and backward, in one
   pass over a (B, 4H) row block instead of a dozen NumPy passes.

   Gate order is PyTorch's (input, forget, cell, output). The forward turns the
   pre-activations into the activations in place (the backward reads them), and writes h',
   c' and tanh(c'). Each value is rounded as the NumPy reference (backends/recurrent.py)
   rounds it except for exp itself, so the two agree within a few ulps. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "vector_math.h"

#include <math.h>
#include <string.h>

static inline float sigmoid_f32(float x) { return 1.0f / (1.0f + ek_expf(-x)); }

/* tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)), sign restored: expm1 by its Taylor series
   near 0 (where exp(y) - 1 would cancel) and from exp elsewhere, so tanh keeps its relative
   precision for small |x|. */
static inline float tanh_f32(float x) {
    const float y = -2.0f * fabsf(x);
    float s = fmaf(y, 1.0f / 40320.0f, 1.0f / 5040.0f);
    s = fmaf(s, y, 1.0f / 720.0f);
    s = fmaf(s, y, 1.0f / 120.0f);
    s = fmaf(s, y, 1.0f / 24.0f);
    s = fmaf(s, y, 1.0f / 6.0f);
    s = fmaf(s, y, 0.5f);
    s = fmaf(s * y, y, y);
    const float m = y > -0.35f ? s : ek_expf(y) - 1.0f;
    const float t = -m / (2.0f + m);
    return copysignf(t, x);
}

/* One batch row. (A function of its own with restrict pointers: inside the OpenMP loop GCC
   could not prove the row's four gate blocks and the outputs apart, and stayed scalar.) */
static inline void gates_row(float *restrict ai, float *restrict af, float *restrict ag,
                             float *restrict ao, const float *restrict c,
                             float *restrict h_out, float *restrict c_out,
                             float *restrict tc_out, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const float i = sigmoid_f32(ai[j]), f = sigmoid_f32(af[j]);
        const float g = tanh_f32(ag[j]), o = sigmoid_f32(ao[j]);
        ai[j] = i;
        af[j] = f;
        ag[j] = g;
        ao[j] = o;
        const float cn = f * c[j] + i * g;
        const float tc = tanh_f32(cn);
        c_out[j] = cn;
        tc_out[j] = tc;
        h_out[j] = o * tc;
    }
}

EK_CLONES static void lstm_gates_f32(float *act, const float *c, float *h_out, float *c_out,
                                     float *tc_out, int64_t batch, int64_t n) {
#pragma omp parallel for schedule(static) if (batch * n >= 16384) num_threads(ek_num_threads())
    for (int64_t b = 0; b < batch; b++) {
        float *a = act + b * 4 * n;
        gates_row(a, a + n, a + 2 * n, a + 3 * n, c + b * n, h_out + b * n, c_out + b * n,
                  tc_out + b * n, n);
    }
}

static inline void gate_grads_row(const float *restrict ai, const float *restrict af,
                                  const float *restrict ag, const float *restrict ao,
                                  const float *restrict tc, const float *restrict c,
                                  const float *restrict grad_h, const float *restrict grad_c,
                                  float *restrict di, float *restrict df, float *restrict dg,
                                  float *restrict dout, float *restrict prev, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const float i = ai[j], f = af[j], g = ag[j], o = ao[j];
        const float slope_c = 1.0f - tc[j] * tc[j];
        const float gc = grad_c[j] + grad_h[j] * o * slope_c;
        di[j] = (gc * g) * ((1.0f - i) * i);
        df[j] = (gc * c[j]) * ((1.0f - f) * f);
        dg[j] = (gc * i) * (1.0f - g * g);
        dout[j] = (grad_h[j] * tc[j]) * ((1.0f - o) * o);
        prev[j] = gc * f;
    }
}

EK_CLONES static void lstm_gate_grads_f32(const float *act, const float *tc, const float *c,
                                          const float *grad_h, const float *grad_c, float *d,
                                          float *grad_c_prev, int64_t batch, int64_t n) {
#pragma omp parallel for schedule(static) if (batch * n >= 16384) num_threads(ek_num_threads())
    for (int64_t b = 0; b < batch; b++) {
        const float *a = act + b * 4 * n;
        float *db = d + b * 4 * n;
        const int64_t k = b * n;
        gate_grads_row(a, a + n, a + 2 * n, a + 3 * n, tc + k, c + k, grad_h + k, grad_c + k,
                       db, db + n, db + 2 * n, db + 3 * n, grad_c_prev + k, n);
    }
}

/* ------------------------------------------------------------------ a whole layer */
/* BLAS's sgemm (Fortran calling convention, column-major), from SciPy's cython_blas capsule:
   the layer's per-step products run here without a trip through Python per step. */
typedef void (*sgemm_t)(char *transa, char *transb, int *m, int *n, int *k, float *alpha,
                        float *a, int *lda, float *b, int *ldb, float *beta, float *c,
                        int *ldc);

/* act (B, 4H) += h (B, H) @ w_t (H, 4H), both row-major (w_t = w_hh^T, made contiguous once
   per layer: sgemm without a transposed operand ran 1.4x faster at these sizes). In
   column-major terms act^T (4H x B) = w_t-as-stored (4H x H) times h^T (H x B). */
static void gates_matmul(sgemm_t sgemm, const float *h, const float *w_t, float *act,
                         int batch, int n, float beta) {
    int m = 4 * n, k = n, lda = 4 * n, ldb = n, ldc = 4 * n;
    float one = 1.0f;
    sgemm("N", "N", &m, &batch, &k, &one, (float *)w_t, &lda, (float *)h, &ldb, &beta, act,
          &ldc);
}

/* dh (B, H) = d (B, 4H) @ w_hh (4H, H): column-major dh^T (H x B) = w_hh-as-stored (H x 4H)
   times d^T (4H x B). */
static void hidden_grad_matmul(sgemm_t sgemm, const float *d, const float *w_hh, float *dh,
                               int batch, int n) {
    int m = n, k = 4 * n, lda = n, ldb = 4 * n, ldc = n;
    float one = 1.0f, zero = 0.0f;
    sgemm("N", "N", &m, &batch, &k, &one, (float *)w_hh, &lda, (float *)d, &ldb, &zero, dh,
          &ldc);
}

/* ------------------------------------------------------------------ Python wrappers */
static int get_f32(PyObject *obj, Py_buffer *v, int writable, Py_ssize_t elements) {
    char kind;
    if (ek_float_buffer(obj, v, &kind, writable) < 0) return -1;
    if (kind != 'f' || v->len / v->itemsize != elements) {
        PyBuffer_Release(v);
        PyErr_SetString(PyExc_ValueError, "float32 arrays of the step's shapes expected");
        return -1;
    }
    return 0;
}

static void release(Py_buffer *v, int count) {
    for (int k = 0; k < count; k++) PyBuffer_Release(&v[k]);
}

static PyObject *py_lstm_gates(PyObject *self, PyObject *args) {
    PyObject *o[5];
    Py_ssize_t batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOnn", &o[0], &o[1], &o[2], &o[3], &o[4], &batch, &n))
        return NULL;
    Py_buffer v[5];
    const Py_ssize_t sizes[5] = {batch * 4 * n, batch * n, batch * n, batch * n, batch * n};
    const int writable[5] = {1, 0, 1, 1, 1};
    for (int k = 0; k < 5; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) { release(v, k); return NULL; }
    lstm_gates_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, batch, n);
    release(v, 5);
    Py_RETURN_NONE;
}

static PyObject *py_lstm_gate_grads(PyObject *self, PyObject *args) {
    PyObject *o[7];
    Py_ssize_t batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOnn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &batch, &n))
        return NULL;
    /* act, tc, c, grad_h, grad_c, d (out), grad_c_prev (out) */
    Py_buffer v[7];
    const Py_ssize_t sizes[7] = {batch * 4 * n, batch * n, batch * n, batch * n, batch * n,
                                 batch * 4 * n, batch * n};
    const int writable[7] = {0, 0, 0, 0, 0, 1, 1};
    for (int k = 0; k < 7; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) { release(v, k); return NULL; }
    lstm_gate_grads_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, v[6].buf,
                        batch, n);
    release(v, 7);
    Py_RETURN_NONE;
}

static sgemm_t get_sgemm(PyObject *capsule) {
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred()) return NULL;
    return (sgemm_t)PyCapsule_GetPointer(capsule, name);
}

/* lstm_layer(sgemm, gates_x, h0, c0, w_t, acts, hs, cs, tcs, reverse): every step of one
   layer and direction; gates_x/acts (T, B, 4H), h0/c0 (B, H), w_t = w_hh^T (H, 4H),
   hs/cs/tcs (T, B, H). */
static PyObject *py_lstm_layer(PyObject *self, PyObject *args) {
    PyObject *cap, *o[8];
    int reverse;
    Py_ssize_t steps, batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOpnnn", &cap, &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &reverse, &steps, &batch, &n))
        return NULL;
    sgemm_t sgemm = get_sgemm(cap);
    if (!sgemm) return NULL;
    const Py_ssize_t row = batch * n;
    const Py_ssize_t sizes[8] = {steps * 4 * row, row, row, 4 * n * n, steps * 4 * row,
                                 steps * row, steps * row, steps * row};
    const int writable[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    Py_buffer v[8];
    for (int k = 0; k < 8; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) { release(v, k); return NULL; }
    const float *gates_x = v[0].buf, *w_t = v[3].buf;
    float *acts = v[4].buf, *hs = v[5].buf, *cs = v[6].buf, *tcs = v[7].buf;
    const float *h = v[1].buf, *c = v[2].buf;
    for (Py_ssize_t s = 0; s < steps; s++) {
        const Py_ssize_t t = reverse ? steps - 1 - s : s;
        float *act = acts + t * 4 * row;
        memcpy(act, gates_x + t * 4 * row, (size_t)(4 * row) * sizeof(float));
        gates_matmul(sgemm, h, w_t, act, (int)batch, (int)n, 1.0f);
        lstm_gates_f32(act, c, hs + t * row, cs + t * row, tcs + t * row, batch, n);
        h = hs + t * row;
        c = cs + t * row;
    }
    release(v, 8);
    Py_RETURN_NONE;
}

/* lstm_layer_backward(sgemm, grad_out, grad_h, grad_c, c0, w_hh, acts, cs, tcs, d, dh, dc,
   reverse): the steps backwards; d (T, B, 4H) gets the pre-activation gradients, dh/dc
   (B, H) end as the gradients of h0 and c0. */
static PyObject *py_lstm_layer_backward(PyObject *self, PyObject *args) {
    PyObject *cap, *o[11];
    int reverse;
    Py_ssize_t steps, batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOpnnn", &cap, &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &reverse, &steps, &batch,
                          &n))
        return NULL;
    sgemm_t sgemm = get_sgemm(cap);
    if (!sgemm) return NULL;
    const Py_ssize_t row = batch * n;
    const Py_ssize_t sizes[11] = {steps * row, row, row, row, 4 * n * n, steps * 4 * row,
                                  steps * row, steps * row, steps * 4 * row, row, row};
    const int writable[11] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
    Py_buffer v[11];
    for (int k = 0; k < 11; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) { release(v, k); return NULL; }
    const float *grad_out = v[0].buf, *c0 = v[3].buf, *w_hh = v[4].buf, *acts = v[5].buf;
    const float *cs = v[6].buf, *tcs = v[7].buf;
    float *d = v[8].buf, *dh = v[9].buf, *dc = v[10].buf;
    float *next_dc = PyMem_Malloc((size_t)row * sizeof(float));
    if (!next_dc) { release(v, 11); return PyErr_NoMemory(); }
    memcpy(dh, v[1].buf, (size_t)row * sizeof(float));
    memcpy(dc, v[2].buf, (size_t)row * sizeof(float));
    for (Py_ssize_t s = 0; s < steps; s++) {
        const Py_ssize_t t = reverse ? s : steps - 1 - s;
        const int first = t == (reverse ? steps - 1 : 0);
        const float *c_prev = first ? c0 : cs + (reverse ? t + 1 : t - 1) * row;
        for (Py_ssize_t k = 0; k < row; k++) dh[k] += grad_out[t * row + k];
        lstm_gate_grads_f32(acts + t * 4 * row, tcs + t * row, c_prev, dh, dc, d + t * 4 * row,
                            next_dc, batch, n);
        memcpy(dc, next_dc, (size_t)row * sizeof(float));
        hidden_grad_matmul(sgemm, d + t * 4 * row, w_hh, dh, (int)batch, (int)n);
    }
    PyMem_Free(next_dc);
    release(v, 11);
    Py_RETURN_NONE;
}

PyMethodDef ek_recurrent_methods[] = {
    {"lstm_gates", py_lstm_gates, METH_VARARGS,
     "lstm_gates(act, c, h_out, c_out, tc_out, batch, n): one LSTM step's gates (float32)"},
    {"lstm_gate_grads", py_lstm_gate_grads, METH_VARARGS,
     "lstm_gate_grads(act, tc, c, grad_h, grad_c, d, grad_c_prev, batch, n): their backward"},
    {"lstm_layer", py_lstm_layer, METH_VARARGS,
     "lstm_layer(sgemm, gates_x, h0, c0, w_hh_t, acts, hs, cs, tcs, reverse, T, B, H)"},
    {"lstm_layer_backward", py_lstm_layer_backward, METH_VARARGS,
     "lstm_layer_backward(sgemm, grad_out, grad_h, grad_c, c0, w_hh, acts, cs, tcs, d, dh, dc,"
     " reverse, T, B, H)"},
    {NULL, NULL, 0, NULL}};
