/* Recurrent-cell kernels: the gate arithmetic of one LSTM step, forward and backward, in one
   pass over a (B, 4H) row block instead of a dozen NumPy passes, and a whole LSTM layer (every
   step of one direction) with its per-step products, its batch rows split among threads.

   Gate order is PyTorch's (input, forget, cell, output). The forward adds the input
   projection to the recurrent product, turns the sums into the activations in place (the
   backward reads them), and writes h', c' and tanh(c'). Each value is rounded as the NumPy
   reference (backends/recurrent.py) rounds it except for exp itself and the order of a
   product's sum, so the two agree within a few ulps. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "recurrent_layer.h"   /* sigmoid_f32, tanh_f32, the thread split, the buffers */

#include <string.h>

/* One batch row's columns. (A function of its own with restrict pointers: inside the OpenMP
   loop GCC could not prove the row's four gate blocks and the outputs apart, and stayed
   scalar.) a* hold the recurrent products on entry, x* the input projections. */
EK_INLINE void gates_row(float *restrict ai, float *restrict af, float *restrict ag,
                         float *restrict ao, const float *restrict xi,
                         const float *restrict xf, const float *restrict xg,
                         const float *restrict xo, const float *restrict c,
                         float *restrict h_out, float *restrict c_out, float *restrict tc_out,
                         int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const float i = sigmoid_f32(ai[j] + xi[j]), f = sigmoid_f32(af[j] + xf[j]);
        const float g = tanh_f32(ag[j] + xg[j]), o = sigmoid_f32(ao[j] + xo[j]);
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

/* Rows [b0, b1) of a step, columns [j0, j0 + width) of each gate: act and x are (B, 4H), the
   rest (B, H). */
EK_CLONES static void gates_block(float *act, const float *x, const float *c, float *h_out,
                                  float *c_out, float *tc_out, int64_t b0, int64_t b1,
                                  int64_t n, int64_t j0, int64_t width) {
    for (int64_t b = b0; b < b1; b++) {
        float *a = act + b * 4 * n + j0;
        const float *xb = x + b * 4 * n + j0;
        const int64_t k = b * n + j0;
        gates_row(a, a + n, a + 2 * n, a + 3 * n, xb, xb + n, xb + 2 * n, xb + 3 * n, c + k,
                  h_out + k, c_out + k, tc_out + k, width);
    }
}

static void lstm_gates_f32(float *act, const float *x, const float *c, float *h_out,
                           float *c_out, float *tc_out, int64_t batch, int64_t n) {
#pragma omp parallel for schedule(static) if (batch * n >= 16384) num_threads(ek_num_threads())
    for (int64_t b = 0; b < batch; b++)
        gates_block(act, x, c, h_out, c_out, tc_out, b, b + 1, n, 0, n);
}

EK_INLINE void gate_grads_row(const float *restrict ai, const float *restrict af,
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

/* Rows [b0, b1) of the backward of a step, columns [j0, j0 + width): act and d (B, 4H), the
   rest (B, H). */
EK_CLONES static void gate_grads_block(const float *act, const float *tc, const float *c,
                                       const float *grad_h, const float *grad_c, float *d,
                                       float *grad_c_prev, int64_t b0, int64_t b1, int64_t n,
                                       int64_t j0, int64_t width) {
    for (int64_t b = b0; b < b1; b++) {
        const float *a = act + b * 4 * n + j0;
        float *db = d + b * 4 * n + j0;
        const int64_t k = b * n + j0;
        gate_grads_row(a, a + n, a + 2 * n, a + 3 * n, tc + k, c + k, grad_h + k, grad_c + k,
                       db, db + n, db + 2 * n, db + 3 * n, grad_c_prev + k, width);
    }
}

static void lstm_gate_grads_f32(const float *act, const float *tc, const float *c,
                                const float *grad_h, const float *grad_c, float *d,
                                float *grad_c_prev, int64_t batch, int64_t n) {
#pragma omp parallel for schedule(static) if (batch * n >= 16384) num_threads(ek_num_threads())
    for (int64_t b = 0; b < batch; b++)
        gate_grads_block(act, tc, c, grad_h, grad_c, d, grad_c_prev, b, b + 1, n, 0, n);
}

/* ------------------------------------------------------------------ a whole layer */
/* act (B, 4H) = h (B, H) @ w_t (H, 4H), both row-major (w_t = w_hh^T, made contiguous once
   per layer: sgemm without a transposed operand ran 1.4x faster at these sizes). In
   column-major terms act^T (4H x B) = w_t-as-stored (4H x H) times h^T (H x B). */
static void gates_matmul(sgemm_t sgemm, const float *h, const float *w_t, float *act,
                         int batch, int n) {
    int m = 4 * n, k = n, lda = 4 * n, ldb = n, ldc = 4 * n;
    float one = 1.0f, zero = 0.0f;
    sgemm("N", "N", &m, &batch, &k, &one, (float *)w_t, &lda, (float *)h, &ldb, &zero, act,
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

/* The forward's steps for rows [b0, b1). w_t = w_hh^T (H, 4H). */
static void layer_forward_rows(const layer_shape *L, const float *gates_x, const float *h0,
                               const float *c0, const float *w_t, float *acts, float *hs,
                               float *cs, float *tcs, int64_t b0, int64_t b1, float *pack) {
    const int64_t n = L->n, row = L->batch * n, rows = b1 - b0;
    const float *h = h0, *c = c0;
    if (L->mr) ek_sgemm_pack_a(h0 + b0 * n, n, 1, rows, n, pack);
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? L->steps - 1 - s : s;
        float *act = acts + t * 4 * row;
        if (L->mr)
            ek_sgemm_packed(rows, 4 * n, n, pack, w_t, 4 * n, NULL, act + b0 * 4 * n, 4 * n, 0);
        else
            gates_matmul(L->sgemm, h + b0 * n, w_t, act + b0 * 4 * n, (int)rows, (int)n);
        gates_block(act, gates_x + t * 4 * row, c, hs + t * row, cs + t * row, tcs + t * row,
                    b0, b1, n, 0, n);
        if (L->mr) ek_sgemm_pack_a(hs + t * row + b0 * n, n, 1, rows, n, pack);
        h = hs + t * row;
        c = cs + t * row;
    }
}

/* dh's rows [b0, b1) = d's (B, 4H) rows times w_hh (4H, H), from `pack` (d's rows packed) or
   through BLAS */
static void hidden_grad_rows(const layer_shape *L, const float *d, const float *w_hh,
                             float *dh, int64_t b0, int64_t b1, const float *pack) {
    const int64_t n = L->n;
    if (L->mr)
        ek_sgemm_packed(b1 - b0, n, 4 * n, pack, w_hh, n, NULL, dh + b0 * n, n, 0);
    else
        hidden_grad_matmul(L->sgemm, d + b0 * 4 * n, w_hh, dh + b0 * n, (int)(b1 - b0), (int)n);
}

/* The backward's steps for rows [b0, b1): dh and dc start as the gradients of the last h and
   c and end as those of h0 and c0; dc_next is scratch. */
static void layer_backward_rows(const layer_shape *L, const float *grad_out, const float *c0,
                                const float *w_hh, const float *acts, const float *cs,
                                const float *tcs, float *d, float *dh, float *dc,
                                float *dc_next, int64_t b0, int64_t b1, float *pack) {
    const int64_t n = L->n, row = L->batch * n, rows = b1 - b0;
    const float *d_prev = NULL;
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? s : L->steps - 1 - s;
        const int first = t == (L->reverse ? L->steps - 1 : 0);
        const float *c_prev = first ? c0 : cs + (L->reverse ? t + 1 : t - 1) * row;
        float *d_t = d + t * 4 * row;
        if (d_prev) hidden_grad_rows(L, d_prev, w_hh, dh, b0, b1, pack);
        for (int64_t k = b0 * n; k < b1 * n; k++) dh[k] += grad_out[t * row + k];
        /* (the cell-state gradient alternates between dc and dc_next: the row function reads
           one and writes the other) */
        gate_grads_block(acts + t * 4 * row, tcs + t * row, c_prev, dh, s % 2 ? dc_next : dc,
                         d_t, s % 2 ? dc : dc_next, b0, b1, n, 0, n);
        if (L->mr) ek_sgemm_pack_a(d_t + b0 * 4 * n, 4 * n, 1, rows, 4 * n, pack);
        d_prev = d_t;
    }
    hidden_grad_rows(L, d_prev, w_hh, dh, b0, b1, pack);
    if (L->steps % 2) memcpy(dc + b0 * n, dc_next + b0 * n, (size_t)(rows * n) * sizeof(float));
}

/* ------------------------------------------------------------------ Python wrappers */
static PyObject *py_lstm_gates(PyObject *self, PyObject *args) {
    PyObject *o[6];
    Py_ssize_t batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOnn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &batch,
                          &n))
        return NULL;
    Py_buffer v[6];
    const Py_ssize_t sizes[6] = {batch * 4 * n, batch * 4 * n, batch * n, batch * n, batch * n,
                                 batch * n};
    const int writable[6] = {1, 0, 0, 1, 1, 1};
    for (int k = 0; k < 6; k++)
        if (get_f32(o[k], &v[k], writable[k], sizes[k]) < 0) { release(v, k); return NULL; }
    lstm_gates_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, batch, n);
    release(v, 6);
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

/* The row functions as on_row_chunks calls them, on py_lstm_layer's /
   py_lstm_layer_backward's buffers. */
static void forward_chunk(const layer_shape *L, Py_buffer *v, float *scratch, int64_t b0,
                          int64_t b1, float *pack) {
    (void)scratch;
    layer_forward_rows(L, v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
                       v[6].buf, v[7].buf, b0, b1, pack);
}

static void backward_chunk(const layer_shape *L, Py_buffer *v, float *dc_next, int64_t b0,
                           int64_t b1, float *pack) {
    layer_backward_rows(L, v[0].buf, v[3].buf, v[4].buf, v[5].buf, v[6].buf, v[7].buf,
                        v[8].buf, v[9].buf, v[10].buf, dc_next, b0, b1, pack);
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
    const layer_shape L = {steps, batch, n, reverse, ek_sgemm_mr(), sgemm};
    const int failed = on_row_chunks(&L, n, forward_chunk, v, NULL);
    release(v, 8);
    if (failed) return PyErr_NoMemory();
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
    float *dh = v[9].buf, *dc = v[10].buf;
    float *dc_next = PyMem_Malloc((size_t)(row ? row : 1) * sizeof(float));
    if (!dc_next) {
        release(v, 11);
        return PyErr_NoMemory();
    }
    memcpy(dh, v[1].buf, (size_t)row * sizeof(float));
    memcpy(dc, v[2].buf, (size_t)row * sizeof(float));
    const layer_shape L = {steps, batch, n, reverse, ek_sgemm_mr(), sgemm};
    const int failed = on_row_chunks(&L, 4 * n, backward_chunk, v, dc_next);
    PyMem_Free(dc_next);
    release(v, 11);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

PyMethodDef ek_recurrent_methods[] = {
    {"lstm_gates", py_lstm_gates, METH_VARARGS,
     "lstm_gates(act, x, c, h_out, c_out, tc_out, batch, n): one LSTM step's gates (float32)"},
    {"lstm_gate_grads", py_lstm_gate_grads, METH_VARARGS,
     "lstm_gate_grads(act, tc, c, grad_h, grad_c, d, grad_c_prev, batch, n): their backward"},
    {"lstm_layer", py_lstm_layer, METH_VARARGS,
     "lstm_layer(sgemm, gates_x, h0, c0, w_hh_t, acts, hs, cs, tcs, reverse, T, B, H)"},
    {"lstm_layer_backward", py_lstm_layer_backward, METH_VARARGS,
     "lstm_layer_backward(sgemm, grad_out, grad_h, grad_c, c0, w_hh, acts, cs, tcs, d, dh, dc,"
     " reverse, T, B, H)"},
    {NULL, NULL, 0, NULL}};
