/* Activation kernels: GELU (exact and tanh) forward and backward, float32 and float64.

   float32 is computed in float with a vectorisable exp of our own (a C library call per
   element would keep the loop scalar) and the same erfc approximation as the NumPy path
   (backends/normal_cdf.py): Phi(-|x|) = 0.5 t P(t) exp(-x^2/2), t = 1 / (1 + k|x|), P of
   degree 9. float64 calls the C library's erfc/exp/tanh. Loops run on ek_num_threads()
   threads above a size where a thread team pays for itself. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "vector_math.h"

#include <math.h>
#include <string.h>


#define EK_PARALLEL_MIN 32768   /* elements; below this one thread is faster */

/* Phi(x) and exp(-x^2 / 2) in float (see backends/normal_cdf.py for the fit). Past
   |x| = 13.19, where exp(-x^2 / 2) leaves the normal floats, both are 0 (ek_expf_normal):
   GELU and its slope are below FLT_MIN there either way. */
static inline void normal_cdf_gauss_f32(float x, float *cdf, float *gauss) {
    float a = fabsf(x);
    a = a < 20.0f ? a : 20.0f;           /* beyond it both results are exactly 0 or 1 */
    const float t = 1.0f / fmaf(a, 0.332340012f, 1.0f);   /* k = 0.47 / sqrt 2 */
    float q = fmaf(-0.0183221163f, t, 0.0490809539f);     /* t P(t), Horner in t */
    q = fmaf(q, t, 0.0504170323f);
    q = fmaf(q, t, -0.287281151f);
    q = fmaf(q, t, 0.248250223f);
    q = fmaf(q, t, -0.0143283285f);
    q = fmaf(q, t, 0.211597225f);
    q = fmaf(q, t, 0.229648797f);
    q = fmaf(q, t, 0.265794844f);
    q = fmaf(q, t, 0.265142502f);
    const float tail = q * t;
    /* x^2 = hi + lo exactly; exp(-(hi + lo)/2) = exp(-hi/2) (1 - lo/2) to float precision */
    const float hi = a * a;
    const float lo = fmaf(a, a, -hi);
    const float g = ek_expf_normal(-0.5f * hi) * fmaf(-0.5f, lo, 1.0f);
    const float left = 0.5f * tail * g;                     /* Phi(-|x|) */
    *cdf = x < 0.0f ? left : 1.0f - left;
    *gauss = g;
}

#define SQRT_2_OVER_PI 0.7978845608028654
#define GELU_C 0.044715
#define INV_SQRT_2PI 0.3989422804014327

/* 0.5 (1 + tanh(u)) = sigmoid(2u) = 1 / (1 + exp(-2u)), and 0.5 (1 - tanh(u)) = exp(-2u) times
   that: written this way neither half cancels, so the tanh form keeps its relative precision
   where 1 + tanh(u) is small (x < -2), unlike 1 + tanh(u) itself. exp's argument is capped
   (ek_expf_normal, at 88, as the NumPy path's) so that the second stays finite. NOTE: not
   with fminf, whose call kept the loops scalar (the tanh form took 7.2 ms for 512K floats). */
static inline float sigmoid2_f32(float u, float *rest) {
    const float e = ek_expf_normal(-2.0f * u);
    const float s = 1.0f / (1.0f + e);
    *rest = e * s;
    return s;
}

/* (two loops, not a test inside one: a vectorised loop would compute both forms and blend) */
EK_CLONES static void gelu_f32(const float *x, float *y, int64_t n, int tanh_form) {
    if (tanh_form) {
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i];
            float rest;
            y[i] = v * sigmoid2_f32((float)SQRT_2_OVER_PI * (v + (float)GELU_C * v * v * v),
                                    &rest);
        }
        return;
    }
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
    for (int64_t i = 0; i < n; i++) {
        float cdf, gauss;
        normal_cdf_gauss_f32(x[i], &cdf, &gauss);
        y[i] = x[i] * cdf;
    }
}

/* d/dx of x s(x), s = sigmoid(2u), u = k (x + c x^3): s + 2 x s (1 - s) k (1 + 3 c x^2) */
EK_CLONES static void gelu_backward_f32(const float *g, const float *x, float *out, int64_t n,
                                        int tanh_form) {
    if (tanh_form) {
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i], v2 = v * v;
            float rest;
            const float s = sigmoid2_f32((float)SQRT_2_OVER_PI * (v + (float)GELU_C * v2 * v),
                                         &rest);
            out[i] = g[i] * (s + 2.0f * v * s * rest * (float)SQRT_2_OVER_PI *
                             (1.0f + (float)(3 * GELU_C) * v2));
        }
        return;
    }
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
    for (int64_t i = 0; i < n; i++) {
        float cdf, gauss;
        normal_cdf_gauss_f32(x[i], &cdf, &gauss);
        out[i] = g[i] * (cdf + x[i] * (float)INV_SQRT_2PI * gauss);
    }
}

static void gelu_f64(const double *x, double *y, int64_t n, int tanh_form) {
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
    for (int64_t i = 0; i < n; i++) {
        const double v = x[i];
        y[i] = tanh_form ? v / (1.0 + exp(fmin(-2.0 * SQRT_2_OVER_PI * (v + GELU_C * v * v * v),
                                               709.0)))
                         : v * 0.5 * erfc(-v * 0.7071067811865476);
    }
}

static void gelu_backward_f64(const double *g, const double *x, double *out, int64_t n,
                              int tanh_form) {
#pragma omp parallel for schedule(static) if (n >= EK_PARALLEL_MIN) num_threads(ek_num_threads())
    for (int64_t i = 0; i < n; i++) {
        const double v = x[i];
        double d;
        if (tanh_form) {
            const double v2 = v * v;
            const double e = exp(fmin(-2.0 * SQRT_2_OVER_PI * (v + GELU_C * v2 * v), 709.0));
            const double s = 1.0 / (1.0 + e);
            d = s + 2.0 * v * s * (e * s) * SQRT_2_OVER_PI * (1.0 + 3 * GELU_C * v2);
        } else {
            d = 0.5 * erfc(-v * 0.7071067811865476) + v * INV_SQRT_2PI * exp(-0.5 * v * v);
        }
        out[i] = g[i] * d;
    }
}

/* ------------------------------------------------------------------ Python wrappers */
/* Buffers of one float kind and one length: `count` objects, the last `nout` written. */
static int same_floats(PyObject **objs, Py_buffer *views, int count, int nout, char *kind) {
    for (int k = 0; k < count; k++) {
        char kk;
        if (ek_float_buffer(objs[k], &views[k], &kk, k >= count - nout) < 0) {
            for (int j = 0; j < k; j++) PyBuffer_Release(&views[j]);
            return -1;
        }
        if ((k && (kk != *kind || views[k].len != views[0].len))) {
            for (int j = 0; j <= k; j++) PyBuffer_Release(&views[j]);
            PyErr_SetString(PyExc_ValueError, "arrays of one float dtype and size expected");
            return -1;
        }
        *kind = kk;
    }
    return 0;
}

static PyObject *py_gelu(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    int tanh_form;
    if (!PyArg_ParseTuple(args, "OOp", &objs[0], &objs[1], &tanh_form)) return NULL;
    Py_buffer v[2];
    char kind = 0;
    if (same_floats(objs, v, 2, 1, &kind) < 0) return NULL;
    const int64_t n = v[0].len / v[0].itemsize;
    if (kind == 'f') gelu_f32(v[0].buf, v[1].buf, n, tanh_form);
    else gelu_f64(v[0].buf, v[1].buf, n, tanh_form);
    PyBuffer_Release(&v[0]);
    PyBuffer_Release(&v[1]);
    Py_RETURN_NONE;
}

static PyObject *py_gelu_backward(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    int tanh_form;
    if (!PyArg_ParseTuple(args, "OOOp", &objs[0], &objs[1], &objs[2], &tanh_form)) return NULL;
    Py_buffer v[3];
    char kind = 0;
    if (same_floats(objs, v, 3, 1, &kind) < 0) return NULL;
    const int64_t n = v[0].len / v[0].itemsize;
    if (kind == 'f') gelu_backward_f32(v[0].buf, v[1].buf, v[2].buf, n, tanh_form);
    else gelu_backward_f64(v[0].buf, v[1].buf, v[2].buf, n, tanh_form);
    for (int k = 0; k < 3; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
}

PyMethodDef ek_activation_methods[] = {
    {"gelu", py_gelu, METH_VARARGS, "gelu(x, out, tanh_form): GELU of x into out"},
    {"gelu_backward", py_gelu_backward, METH_VARARGS,
     "gelu_backward(g, x, out, tanh_form): g * GELU'(x) into out"},
    {NULL, NULL, 0, NULL}};
