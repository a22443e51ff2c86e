/* Recurrent-cell kernels: the gate arithmetic of one LSTM step, forward and backward, in one
   pass over a (B, 4H) row block instead of a dozen NumPy passes.

   Gate order is PyTorch's (input, forget, cell, output). The forward turns the
   pre-activations into the activations in place (the backward reads them), and writes h',
   c' and tanh(c'). Each value is rounded as the NumPy reference (backends/recurrent.py)
   rounds it except for exp itself, so the two agree within a few ulps. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <math.h>
#include <string.h>

static inline float f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* exp(x) in float within 2 ulp, branch-free; 0 below -87.3, inf above 88.7. */
static inline float expf_fast(float x) {
    const float in = x;
    x = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = fmaf(n, -0.693359375f, x);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = fmaf(1.9875691500e-4f, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r * r, r) + 1.0f;
    p *= f32_from_bits((uint32_t)((int32_t)n + 127) << 23);
    p = in < -87.3f ? 0.0f : p;
    p = in > 88.7f ? INFINITY : p;
    return in != in ? in : p;
}

static inline float sigmoid_f32(float x) { return 1.0f / (1.0f + expf_fast(-x)); }

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
    const float m = y > -0.35f ? s : expf_fast(y) - 1.0f;
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

PyMethodDef ek_recurrent_methods[] = {
    {"lstm_gates", py_lstm_gates, METH_VARARGS,
     "lstm_gates(act, c, h_out, c_out, tc_out, batch, n): one LSTM step's gates (float32)"},
    {"lstm_gate_grads", py_lstm_gate_grads, METH_VARARGS,
     "lstm_gate_grads(act, tc, c, grad_h, grad_c, d, grad_c_prev, batch, n): their backward"},
    {NULL, NULL, 0, NULL}};
