/* Recurrent-cell kernels: the gate arithmetic of one LSTM step, forward and backward, in one
   pass over a (B, 4H) row block instead of a dozen NumPy passes, and a whole LSTM layer (every
   step of one direction) with its per-step products, on a thread team.

   Gate order is PyTorch's (input, forget, cell, output). The forward adds the input
   projection to the recurrent product, turns the sums into the activations in place (the
   backward reads them), and writes h', c' and tanh(c'). Each value is rounded as the NumPy
   reference (backends/recurrent.py) rounds it except for exp itself and the order of a
   product's sum, so the two agree within a few ulps. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "gemm.h"
#include "vector_math.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* (ek_expf_normal: below x = -88 the sigmoid is about 6e-39 rather than 0) */
static inline float sigmoid_f32(float x) { return 1.0f / (1.0f + ek_expf_normal(-x)); }

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
    const float m = y > -0.35f ? s : ek_expf_normal(y) - 1.0f;
    const float t = -m / (2.0f + m);
    return copysignf(t, x);
}

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
/* BLAS's sgemm (Fortran calling convention, column-major), from SciPy's cython_blas capsule:
   the layer's products where gemm.c has no kernel for this CPU (no AVX2 and FMA, or not
   x86-64). */
typedef void (*sgemm_t)(char *transa, char *transb, int *m, int *n, int *k, float *alpha,
                        float *a, int *lda, float *b, int *ldb, float *beta, float *c,
                        int *ldc);

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

/* The layer's team meets once per step (the next step's product needs every thread's part of
   this step's h, or of its gate gradients). NOTE: a spinning barrier, not OpenMP's: under the
   passive wait policy ember sets (cpu_kernels.py) libgomp's barrier sleeps at once, and a
   futex wake-up per step is about as long as a step's work; the threads arrive within a
   microsecond of each other. Past 64 spins (a few microseconds) a waiter yields its core (another
   process may hold the core the other thread needs). */
typedef struct {
    atomic_int arrived, phase;
} step_barrier;

static void step_barrier_wait(step_barrier *bar, int size) {
    if (size == 1) return;
    const int phase = atomic_load_explicit(&bar->phase, memory_order_acquire);
    if (atomic_fetch_add_explicit(&bar->arrived, 1, memory_order_acq_rel) == size - 1) {
        atomic_store_explicit(&bar->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&bar->phase, phase + 1, memory_order_release);
        return;
    }
    for (int spins = 0; atomic_load_explicit(&bar->phase, memory_order_acquire) == phase;
         spins++) {
        if (spins >= 64) {
            sched_yield();
        } else {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
}

/* What a layer's threads share. Each thread owns the hidden units [j0, j1) of every step: the
   four gate columns of each unit, and in the backward the unit's column of the hidden-state
   gradient. The step's left operand (h, or the gate gradients d) goes to gemm.h's packed
   layout as its columns are made, double-buffered: step s reads pack[s % 2], writes
   pack[(s + 1) % 2], and the barrier between steps keeps a buffer from being overwritten
   while another thread still reads it. */
typedef struct {
    int64_t steps, batch, n;
    int reverse, mr;     /* mr: gemm.h's panel rows; 0 where BLAS runs the products */
    sgemm_t sgemm;
    float *pack[2];
    step_barrier bar;
} layer_team;

/* This thread's hidden units [*j0, *j1): the units in chunks of 16 (a vector of floats), as
   evenly as those allow. */
static void team_part(int64_t n, int parts, int part, int64_t *j0, int64_t *j1) {
    const int64_t chunk = ((n + parts - 1) / parts + 15) / 16 * 16;
    *j0 = part * chunk < n ? part * chunk : n;
    *j1 = *j0 + chunk < n ? *j0 + chunk : n;
}

/* Columns [j0, j1) of the (batch, ld) row-major `src` into the packed left operand `ap` of K
   columns (gemm.h), at the same column numbers. */
static void pack_columns(const float *src, int64_t ld, int64_t batch, int64_t j0, int64_t j1,
                         int64_t mr, int64_t k, float *ap) {
    for (int64_t b = 0; b < batch; b++) {
        float *dst = ap + (b / mr) * mr * k + b % mr;
        for (int64_t j = j0; j < j1; j++) dst[j * mr] = src[b * ld + j];
    }
}

static int team_size(const layer_team *L) {
    /* one thread where BLAS runs the products, or while a step's product is too small to
       share: 8 B H^2 flops, about 5 us on one core from B H^2 = 64K */
    if (!L->mr || L->batch * L->n * L->n < 65536 || L->n < 32) return 1;
    const int most = (int)((L->n + 15) / 16);
    return ek_num_threads() < most ? ek_num_threads() : most;
}

/* This thread's number and the team's size (inside a parallel region; 0 and 1 outside). */
static void team_place(int *part, int *parts) {
#ifdef _OPENMP
    *part = omp_get_thread_num();
    *parts = omp_get_num_threads();
#else
    *part = 0;
    *parts = 1;
#endif
}

/* The forward's steps for hidden units [j0, j1). w_t = w_hh^T (H, 4H). */
static void layer_forward_part(layer_team *L, const float *gates_x, const float *h0,
                               const float *c0, const float *w_t, float *acts, float *hs,
                               float *cs, float *tcs, int part, int parts) {
    const int64_t n = L->n, batch = L->batch, row = batch * n;
    int64_t j0, j1;
    team_part(n, parts, part, &j0, &j1);
    const int64_t width = j1 - j0;
    const float *h = h0, *c = c0;
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? L->steps - 1 - s : s;
        float *act = acts + t * 4 * row;
        if (width > 0) {
            if (!L->mr) {
                gates_matmul(L->sgemm, h, w_t, act, (int)batch, (int)n);
            } else {
                for (int64_t q = 0; q < 4; q++)
                    ek_sgemm_packed(batch, width, n, L->pack[s % 2], w_t + q * n + j0, 4 * n,
                                    NULL, act + q * n + j0, 4 * n, 0);
            }
            gates_block(act, gates_x + t * 4 * row, c, hs + t * row, cs + t * row,
                        tcs + t * row, 0, batch, n, j0, width);
            if (L->mr)
                pack_columns(hs + t * row, n, batch, j0, j1, L->mr, n, L->pack[(s + 1) % 2]);
        }
        step_barrier_wait(&L->bar, parts);
        h = hs + t * row;
        c = cs + t * row;
    }
}

/* The backward's steps for hidden units [j0, j1): dh and dc start as the gradients of the
   last h and c and end as those of h0 and c0; dc_next is scratch. */
static void layer_backward_part(layer_team *L, const float *grad_out, const float *c0,
                                const float *w_hh, const float *acts, const float *cs,
                                const float *tcs, float *d, float *dh, float *dc,
                                float *dc_next, int part, int parts) {
    const int64_t n = L->n, batch = L->batch, row = batch * n;
    int64_t j0, j1;
    team_part(n, parts, part, &j0, &j1);
    const int64_t width = j1 - j0;
    const float *d_prev = NULL;
    for (int64_t s = 0; s < L->steps; s++) {
        const int64_t t = L->reverse ? s : L->steps - 1 - s;
        const int first = t == (L->reverse ? L->steps - 1 : 0);
        const float *c_prev = first ? c0 : cs + (L->reverse ? t + 1 : t - 1) * row;
        float *d_t = d + t * 4 * row;
        if (width > 0) {
            if (d_prev && !L->mr)
                hidden_grad_matmul(L->sgemm, d_prev, w_hh, dh, (int)batch, (int)n);
            else if (d_prev)
                ek_sgemm_packed(batch, width, 4 * n, L->pack[s % 2], w_hh + j0, n, NULL,
                                dh + j0, n, 0);
            for (int64_t b = 0; b < batch; b++)
                for (int64_t j = j0; j < j1; j++) dh[b * n + j] += grad_out[t * row + b * n + j];
            /* (the cell-state gradient alternates between dc and dc_next: the row function
               reads one and writes the other) */
            const float *dc_in = s % 2 ? dc_next : dc;
            gate_grads_block(acts + t * 4 * row, tcs + t * row, c_prev, dh, dc_in, d_t,
                             s % 2 ? dc : dc_next, 0, batch, n, j0, width);
            for (int64_t q = 0; L->mr && q < 4; q++)
                pack_columns(d_t + q * n, 4 * n, batch, j0, j1, L->mr, 4 * n,
                             L->pack[(s + 1) % 2] + q * n * L->mr);
        }
        step_barrier_wait(&L->bar, parts);
        d_prev = d_t;
    }
    if (width > 0 && !L->mr) {
        hidden_grad_matmul(L->sgemm, d_prev, w_hh, dh, (int)batch, (int)n);
    } else if (width > 0) {
        ek_sgemm_packed(batch, width, 4 * n, L->pack[L->steps % 2], w_hh + j0, n, NULL,
                        dh + j0, n, 0);
    }
    if (width > 0 && L->steps % 2)
        for (int64_t b = 0; b < batch; b++)
            memcpy(dc + b * n + j0, dc_next + b * n + j0, (size_t)width * sizeof(float));
}

/* The team and its packed buffers (k: the packed operand's columns); -1 on no memory. */
static int team_start(layer_team *L, int64_t steps, int64_t batch, int64_t n, int reverse,
                      sgemm_t sgemm, int64_t k) {
    *L = (layer_team){steps, batch, n, reverse, ek_sgemm_mr(), sgemm, {NULL, NULL}};
    atomic_init(&L->bar.arrived, 0);
    atomic_init(&L->bar.phase, 0);
    if (!L->mr) return 0;
    const size_t floats = (size_t)((batch + L->mr - 1) / L->mr * L->mr * k);
    for (int b = 0; b < 2; b++) {
        /* (zeroed: a panel's rows past the batch are read, not stored) */
        L->pack[b] = PyMem_Calloc(floats ? floats : 1, sizeof(float));
        if (!L->pack[b]) return -1;
    }
    return 0;
}

static void team_end(layer_team *L) {
    PyMem_Free(L->pack[0]);
    PyMem_Free(L->pack[1]);
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
    const float *gates_x = v[0].buf, *h0 = v[1].buf, *c0 = v[2].buf, *w_t = v[3].buf;
    float *acts = v[4].buf, *hs = v[5].buf, *cs = v[6].buf, *tcs = v[7].buf;
    layer_team L;
    if (team_start(&L, steps, batch, n, reverse, sgemm, n) < 0) {
        team_end(&L);
        release(v, 8);
        return PyErr_NoMemory();
    }
    if (L.mr) ek_sgemm_pack_a(h0, n, 1, batch, n, L.pack[0]);
    const int parts = team_size(&L);
#pragma omp parallel num_threads(parts) if (parts > 1)
    {
        int part, size;
        team_place(&part, &size);
        layer_forward_part(&L, gates_x, h0, c0, w_t, acts, hs, cs, tcs, part, size);
    }
    team_end(&L);
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
    layer_team L;
    float *dc_next = PyMem_Malloc((size_t)(row ? row : 1) * sizeof(float));
    if (!dc_next || team_start(&L, steps, batch, n, reverse, sgemm, 4 * n) < 0) {
        if (dc_next) team_end(&L);
        PyMem_Free(dc_next);
        release(v, 11);
        return PyErr_NoMemory();
    }
    memcpy(dh, v[1].buf, (size_t)row * sizeof(float));
    memcpy(dc, v[2].buf, (size_t)row * sizeof(float));
    const int parts = team_size(&L);
#pragma omp parallel num_threads(parts) if (parts > 1)
    {
        int part, size;
        team_place(&part, &size);
        layer_backward_part(&L, grad_out, c0, w_hh, acts, cs, tcs, d, dh, dc, dc_next, part,
                            size);
    }
    team_end(&L);
    PyMem_Free(dc_next);
    release(v, 11);
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
