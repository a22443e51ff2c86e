/* A whole GRU layer (every step of one direction), forward and backward, without a trip
   through Python between steps: each step's recurrent product on gemm.c's kernel (or BLAS's
   sgemm where that kernel does not exist for the CPU), then one pass of gate arithmetic over
   the step's rows, the batch rows split among threads as an LSTM's (recurrent_layer.h).

   Gate order is PyTorch's (reset r, update z, new n):
       r = sigmoid(x_r + W_hr h + b_hr)      z = sigmoid(x_z + W_hz h + b_hz)
       n = tanh(x_n + r * (W_hn h + b_hn))   h' = n + z * (h - n)
   h' rounds as PyTorch's CPU cell rounds it ((h - n) * z + n). Each value is rounded as the
   NumPy reference (backends/gru.py) rounds it except for exp itself and the order of a
   product's sum, so the two agree within a few ulps per step. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "recurrent_layer.h"

#include <string.h>

/* One batch row of a step. On entry ar/az/an hold the recurrent products W_h* h; they leave
   as the activations r, z, n, and ahn as W_hn h + b_hn (what the backward reads). */
EK_INLINE void gates_row(float *restrict ar, float *restrict az, float *restrict an,
                         float *restrict ahn, const float *restrict xr,
                         const float *restrict xz, const float *restrict xn,
                         const float *restrict br, const float *restrict bz,
                         const float *restrict bn, const float *restrict h,
                         float *restrict h_out, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const float hn = an[j] + bn[j];
        const float r = sigmoid_f32(xr[j] + (ar[j] + br[j]));
        const float z = sigmoid_f32(xz[j] + (az[j] + bz[j]));
        const float g = tanh_f32(xn[j] + r * hn);
        ar[j] = r;
        az[j] = z;
        an[j] = g;
        ahn[j] = hn;
        h_out[j] = g + z * (h[j] - g);
    }
}

/* Rows [b0, b1) of a step: act (B, 4H) [r | z | n | W_hn h + b_hn], x (B, 3H), h and h_out
   (B, H), bias (3H). */
EK_CLONES static void gates_block(float *act, const float *x, const float *bias,
                                  const float *h, float *h_out, int64_t b0, int64_t b1,
                                  int64_t n) {
    for (int64_t b = b0; b < b1; b++) {
        float *a = act + b * 4 * n;
        const float *xb = x + b * 3 * n;
        gates_row(a, a + n, a + 2 * n, a + 3 * n, xb, xb + n, xb + 2 * n, bias, bias + n,
                  bias + 2 * n, h + b * n, h_out + b * n, n);
    }
}

/* The backward of one batch row: dh is the gradient of h'; dx gets the gradient of the
   input projection's three blocks, dgh that of the recurrent product's (the n block differs:
   r times the pre-activation's gradient), prev the direct part of the gradient of h
   (the product's part is added after). */
EK_INLINE void grads_row(const float *restrict r_, const float *restrict z_,
                         const float *restrict n_, const float *restrict hn_,
                         const float *restrict hp, const float *restrict dh,
                         float *restrict dxr, float *restrict dxz, float *restrict dxn,
                         float *restrict dgr, float *restrict dgz, float *restrict dgn,
                         float *restrict prev, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const float r = r_[j], z = z_[j], g = n_[j], d = dh[j];
        const float da_n = (d * (1.0f - z)) * (1.0f - g * g);
        const float da_z = (d * (hp[j] - g)) * ((1.0f - z) * z);
        const float da_r = (da_n * hn_[j]) * ((1.0f - r) * r);
        dxr[j] = da_r;
        dxz[j] = da_z;
        dxn[j] = da_n;
        dgr[j] = da_r;
        dgz[j] = da_z;
        dgn[j] = da_n * r;
        prev[j] = d * z;
    }
}

/* Rows [b0, b1) of a step's backward: act (B, 4H), dx and dgh (B, 3H), the rest (B, H). */
EK_CLONES static void grads_block(const float *act, const float *hp, const float *dh,
                                  float *dx, float *dgh, float *prev, int64_t b0, int64_t b1,
                                  int64_t n) {
    for (int64_t b = b0; b < b1; b++) {
        const float *a = act + b * 4 * n;
        float *x = dx + b * 3 * n, *g = dgh + b * 3 * n;
        const int64_t k = b * n;
        grads_row(a, a + n, a + 2 * n, a + 3 * n, hp + k, dh + k, x, x + n, x + 2 * n, g,
                  g + n, g + 2 * n, prev + k, n);
    }
}

/* ------------------------------------------------------------------ the products */
/* rows [b0, b1) of c (row stride ldc) = a's rows (packed in `pack`, or at a with row stride
   k) times b (k x cols, row-major); added to c when `accumulate` */
static void rows_product(const layer_shape *L, const float *a, const float *pack,
                         const float *b, float *c, int64_t ldc, int64_t b0, int64_t b1,
                         int64_t k, int64_t cols, int accumulate) {
    if (L->mr) {
        ek_sgemm_packed(b1 - b0, cols, k, pack, b, cols, NULL, c + b0 * ldc, ldc, accumulate);
        return;
    }
    /* column-major: c^T (cols x rows) = b-as-stored (cols x k) times a^T (k x rows) */
    int m = (int)cols, nn = (int)(b1 - b0), kk = (int)k, lda = (int)cols, ldb = (int)k;
    int ldc_ = (int)ldc;
    float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    L->sgemm("N", "N", &m, &nn, &kk, &one, (float *)b, &lda, (float *)(a + b0 * k), &ldb,
             &beta, c + b0 * ldc, &ldc_);
}

/* ------------------------------------------------------------------ the layer */
/* The forward's steps for rows [b0, b1). w_t = w_hh^T (H, 3H). */
static void forward_rows(const layer_shape *L, const float *gates_x, const float *h0,
                         const float *w_t, const float *bias, float *acts, float *hs,
                         int64_t b0, int64_t b1, float *pack) {
    const int64_t n = L->n, row = L->batch * n;
    const float *h = h0;
    if (L->mr) ek_sgemm_pack_a(h0 + b0 * n, n, 1, b1 - b0, n, pack);
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? L->steps - 1 - s : s;
        float *act = acts + t * 4 * row, *h_out = hs + t * row;
        rows_product(L, h, pack, w_t, act, 4 * n, b0, b1, n, 3 * n, 0);
        gates_block(act, gates_x + t * 3 * row, bias, h, h_out, b0, b1, n);
        if (L->mr) ek_sgemm_pack_a(h_out + b0 * n, n, 1, b1 - b0, n, pack);
        h = h_out;
    }
}

/* The backward's steps for rows [b0, b1): dh starts as the gradient of the last h and ends
   as that of h0; dh_next is scratch (the two alternate). */
static void backward_rows(const layer_shape *L, const float *grad_out, const float *h0,
                          const float *w_hh, const float *acts, const float *hs, float *dx,
                          float *dgh, float *dh, float *dh_next, int64_t b0, int64_t b1,
                          float *pack) {
    const int64_t n = L->n, row = L->batch * n;
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? s : L->steps - 1 - s;
        const int first = t == (L->reverse ? L->steps - 1 : 0);
        const float *hp = first ? h0 : hs + (L->reverse ? t + 1 : t - 1) * row;
        float *cur = s % 2 ? dh_next : dh, *prev = s % 2 ? dh : dh_next;
        float *dgh_t = dgh + t * 3 * row;
        for (int64_t k = b0 * n; k < b1 * n; k++) cur[k] += grad_out[t * row + k];
        grads_block(acts + t * 4 * row, hp, cur, dx + t * 3 * row, dgh_t, prev, b0, b1, n);
        if (L->mr) ek_sgemm_pack_a(dgh_t + b0 * 3 * n, 3 * n, 1, b1 - b0, 3 * n, pack);
        rows_product(L, dgh_t, pack, w_hh, prev, n, b0, b1, 3 * n, n, 1);
    }
    if (L->steps % 2)
        memcpy(dh + b0 * n, dh_next + b0 * n, (size_t)((b1 - b0) * n) * sizeof(float));
}

/* ------------------------------------------------------------------ Python wrappers */
/* The row functions as on_row_chunks calls them, on py_gru_layer's / py_gru_layer_backward's
   buffers. */
static void forward_chunk(const layer_shape *L, Py_buffer *v, float *scratch, int64_t b0,
                          int64_t b1, float *pack) {
    (void)scratch;
    forward_rows(L, v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, b0, b1, pack);
}

static void backward_chunk(const layer_shape *L, Py_buffer *v, float *dh_next, int64_t b0,
                           int64_t b1, float *pack) {
    backward_rows(L, v[0].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, v[6].buf, v[7].buf,
                  v[8].buf, dh_next, b0, b1, pack);
}

/* gru_layer(sgemm, gates_x, h0, w_t, bias, acts, hs, reverse, T, B, H): gates_x (T, B, 3H),
   h0 (B, H), w_t = w_hh^T (H, 3H), bias = b_hh (3H, zeros without one), acts (T, B, 4H),
   hs (T, B, H). */
static PyObject *py_gru_layer(PyObject *self, PyObject *args) {
    PyObject *cap, *o[6];
    int reverse;
    Py_ssize_t steps, batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOpnnn", &cap, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &reverse, &steps, &batch, &n))
        return NULL;
    sgemm_t sgemm = get_sgemm(cap);
    if (!sgemm) return NULL;
    const Py_ssize_t row = batch * n;
    const Py_ssize_t sizes[6] = {steps * 3 * row, row, 3 * n * n, 3 * n, steps * 4 * row,
                                 steps * row};
    const int writable[6] = {0, 0, 0, 0, 1, 1};
    Py_buffer v[6];
    if (get_all(o, v, writable, sizes, 6) < 0) return NULL;
    const layer_shape L = {steps, batch, n, reverse, ek_sgemm_mr(), sgemm};
    const int failed = on_row_chunks(&L, n, forward_chunk, v, NULL);
    release(v, 6);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* gru_layer_backward(sgemm, grad_out, grad_h, h0, w_hh, acts, hs, dx, dgh, dh, reverse, T, B,
   H): the steps backwards; dx and dgh (T, B, 3H) get the gradients of the input projection
   and of the recurrent product (plus b_hh) of every step, dh (B, H) that of h0. */
static PyObject *py_gru_layer_backward(PyObject *self, PyObject *args) {
    PyObject *cap, *o[9];
    int reverse;
    Py_ssize_t steps, batch, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOpnnn", &cap, &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &reverse, &steps, &batch, &n))
        return NULL;
    sgemm_t sgemm = get_sgemm(cap);
    if (!sgemm) return NULL;
    const Py_ssize_t row = batch * n;
    const Py_ssize_t sizes[9] = {steps * row, row, row, 3 * n * n, steps * 4 * row,
                                 steps * row, steps * 3 * row, steps * 3 * row, row};
    const int writable[9] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
    Py_buffer v[9];
    if (get_all(o, v, writable, sizes, 9) < 0) return NULL;
    float *dh = v[8].buf;
    float *dh_next = PyMem_Malloc((size_t)(row ? row : 1) * sizeof(float));
    if (!dh_next) {
        release(v, 9);
        return PyErr_NoMemory();
    }
    memcpy(dh, v[1].buf, (size_t)row * sizeof(float));
    const layer_shape L = {steps, batch, n, reverse, ek_sgemm_mr(), sgemm};
    const int failed = on_row_chunks(&L, 3 * n, backward_chunk, v, dh_next);
    PyMem_Free(dh_next);
    release(v, 9);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

PyMethodDef ek_gru_methods[] = {
    {"gru_layer", py_gru_layer, METH_VARARGS,
     "gru_layer(sgemm, gates_x, h0, w_hh_t, b_hh, acts, hs, reverse, T, B, H) (float32)"},
    {"gru_layer_backward", py_gru_layer_backward, METH_VARARGS,
     "gru_layer_backward(sgemm, grad_out, grad_h, h0, w_hh, acts, hs, dx, dgh, dh, reverse, "
     "T, B, H)"},
    {NULL, NULL, 0, NULL}};
