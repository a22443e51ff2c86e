/* PyTorch 2.13's CPU random kernels, replayed bit for bit.

   Words come from NumPy's MT19937 through its documented bit generator interface, so the
   engine state stays in one place (ember.Generator) whichever path draws from it. How words
   become values follows PyTorch's kernels per CPU capability:

   - every build: the scalar Box-Muller on 16-element blocks (NormalFill16) calls the C
     library's log/cos/sin (float: logf/cosf/sinf) and one std::fma per value;
   - AVX2 build, float32: the Cephes-style 8-lane log/sincos of avx_mathfun.h, where the
     compiler fused some multiply-adds of the intrinsics code; we write those fusions as
     explicit fmaf calls, so this file is compiled with -ffp-contract=off and nothing else
     is ever fused.

   NOTE: the transcendental functions are the C library's on purpose: PyTorch calls them, and
   NumPy's own SIMD loops (chosen per CPU at run time) round differently. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <math.h>
#include <stdint.h>
#include <string.h>


/* ------------------------------------------------------------------ the words */
/* NumPy's MT19937 state (numpy/random/src/mt19937/mt19937.h: the key, then the position of
   the next word). Calling its next_uint32 through the bit generator's function pointer costs
   a call per word, about half of a uniform fill's time; reading the state here lets the
   compiler inline the tempering. The layout is checked once against NumPy's own function
   (direct_words), and the pointer stays the path when the check fails. */
#define MT_N 624
#define MT_M 397
typedef struct {
    uint32_t key[MT_N];
    int pos;
} mt_state;

static int direct_words = -1;   /* -1: not checked yet; 1: read the state here; 0: don't */

static inline uint32_t mt_mix(uint32_t upper, uint32_t lower, uint32_t far) {
    const uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((uint32_t)-(int32_t)(y & 1u) & 0x9908b0dfu);
}

/* The next 624 words of the key (Matsumoto and Nishimura's generation step). */
static void mt_twist(mt_state *s) {
    uint32_t *k = s->key;
    int i = 0;
    for (; i < MT_N - MT_M; i++) k[i] = mt_mix(k[i], k[i + 1], k[i + MT_M]);
    for (; i < MT_N - 1; i++) k[i] = mt_mix(k[i], k[i + 1], k[i + MT_M - MT_N]);
    k[MT_N - 1] = mt_mix(k[MT_N - 1], k[0], k[MT_M - 1]);
    s->pos = 0;
}

static inline uint32_t mt_next(mt_state *s) {
    if (s->pos >= MT_N) mt_twist(s);
    uint32_t y = s->key[s->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* Whether mt_next on a copy of g's state gives the words NumPy's function gives on another
   copy, over more than two generation steps. */
static int words_match(bitgen_t *g) {
    mt_state mine, numpys;
    memcpy(&mine, g->state, sizeof mine);
    if (mine.pos < 0 || mine.pos > MT_N) return 0;
    numpys = mine;
    for (int i = 0; i < 3 * MT_N; i++)
        if (mt_next(&mine) != g->next_uint32(&numpys)) return 0;
    return 1;
}

static inline uint32_t next32(bitgen_t *g) {
    return direct_words > 0 ? mt_next((mt_state *)g->state) : g->next_uint32(g->state);
}

/* PyTorch's random64(): two 32-bit words, the first one high. */
static inline uint64_t next64(bitgen_t *g) {
    uint64_t hi = next32(g);
    uint64_t lo = next32(g);
    return (hi << 32) | lo;
}

static inline float uniform24(bitgen_t *g) {
    return (float)(next32(g) & 0xFFFFFFu) * 0x1p-24f;
}

static inline double uniform53(bitgen_t *g) {
    return (double)(next64(g) & 0x1FFFFFFFFFFFFFull) * 0x1p-53;
}

/* ------------------------------------------------------------------ uniform_ */
EK_CLONES static void ek_uniform_f32(bitgen_t *g, float *out, int64_t n, int bits, float low,
                                     float span, int fused) {
    const uint32_t mask = (bits >= 32) ? 0xFFFFFFFFu : ((1u << bits) - 1u);
    const float scale = ldexpf(1.0f, -bits);
    const int identity = (span == 1.0f && low == 0.0f);
    for (int64_t i = 0; i < n; i++) {
        float x = (float)(next32(g) & mask) * scale;
        if (!identity)
            x = fused ? fmaf(x, span, low) : x * span + low;
        out[i] = x;
    }
}

EK_CLONES static void ek_uniform_f64(bitgen_t *g, double *out, int64_t n, double low,
                                     double span, int fused) {
    const int identity = (span == 1.0 && low == 0.0);
    for (int64_t i = 0; i < n; i++) {
        double x = uniform53(g);
        if (!identity)
            x = fused ? fma(x, span, low) : x * span + low;
        out[i] = x;
    }
}

/* ------------------------------------------------------------------ dropout's mask */
/* bernoulli_(keep) then div_(keep) in one pass: element i draws the float64 uniform that
   uniform_double's element i would (two words), and is `scale` (1 / keep, rounded in the
   array's type by the caller, as div_ rounds it) when the draw is below `keep`, else 0. */
static void ek_bernoulli_scaled_f64(bitgen_t *g, double *out, int64_t n, double keep,
                                    double scale) {
    for (int64_t i = 0; i < n; i++) out[i] = uniform53(g) < keep ? scale : 0.0;
}

static void ek_bernoulli_scaled_f32(bitgen_t *g, float *out, int64_t n, double keep,
                                    float scale) {
    for (int64_t i = 0; i < n; i++) out[i] = uniform53(g) < keep ? scale : 0.0f;
}

/* ------------------------------------------------------------------ scalar NormalFill16 */
static inline void normal16_f32(float *d, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        const float u1 = 1.0f - d[j];
        const float u2 = d[j + 8];
        const float radius = sqrtf(-2.0f * logf(u1));
        /* NOTE: 2.0f * c10::pi<double> * u2 is a double product, rounded once to float. */
        const float theta = (float)(6.283185307179586 * (double)u2);
        d[j] = fmaf(radius * cosf(theta), std, mean);
        d[j + 8] = fmaf(radius * sinf(theta), std, mean);
    }
}

static inline void normal16_f64(double *d, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        const double u1 = 1.0 - d[j];
        const double u2 = d[j + 8];
        const double radius = sqrt(-2.0 * log(u1));
        const double theta = 6.283185307179586 * u2;
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* ------------------------------------------------------------------ AVX2 NormalFill16 */
static const float LOG_P[9] = {
    7.0376836292E-2f, -1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f,
    1.4249322787E-1f, -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f,
    3.3333331174E-1f};

static inline float bits_to_float(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t float_to_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* log256_ps on one lane, x in (0, 1]. */
static inline float log_avx2(float x) {
    const float min_norm = bits_to_float(0x00800000u);
    x = x < min_norm ? min_norm : x;
    uint32_t b = float_to_bits(x);
    float e = (float)((int32_t)(b >> 23) - 126);
    x = bits_to_float((b & ~0x7F800000u) | 0x3F000000u);
    const int small = x < 0.707106781186547524f;
    x = (x - 1.0f) + (small ? x : 0.0f);
    e -= small ? 1.0f : 0.0f;
    const float z = x * x;
    /* (unrolled by hand: a loop over the table keeps the 8 lanes from vectorising) */
    float y = fmaf(LOG_P[0], x, LOG_P[1]);
    y = fmaf(y, x, LOG_P[2]);
    y = fmaf(y, x, LOG_P[3]);
    y = fmaf(y, x, LOG_P[4]);
    y = fmaf(y, x, LOG_P[5]);
    y = fmaf(y, x, LOG_P[6]);
    y = fmaf(y, x, LOG_P[7]);
    y = fmaf(y, x, LOG_P[8]);
    y *= x;
    y = fmaf(y, z, e * -2.12194440e-4f);   /* the compiler fused this product, not e * q1 */
    y -= z * 0.5f;                          /* exact product: fused or not is the same */
    return fmaf(e, 0.693359375f, x + y);
}

/* sincos256_ps on one lane, x >= 0. */
static inline void sincos_avx2(float x, float *sin_out, float *cos_out) {
    float y = x * 1.27323954473516f;
    const int32_t j = ((int32_t)y + 1) & ~1;
    y = (float)j;
    const uint32_t sign_sin = ((uint32_t)j & 4u) << 29;
    const uint32_t sign_cos = (~(uint32_t)(j - 2) & 4u) << 29;
    const int poly = (j & 2) == 0;
    x = fmaf(y, -0.78515625f, x);
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    const float z = x * x;
    float c = fmaf(z, 2.443315711809948E-005f, -1.388731625493765E-003f);
    c = fmaf(c, z, 4.166664568298827E-002f);
    c *= z;
    c = fmaf(c, z, -(z * 0.5f)) + 1.0f;
    float s = fmaf(z, -1.9515295891E-4f, 8.3321608736E-3f);
    s = fmaf(s, z, -1.6666654611E-1f);
    s *= z;
    s = fmaf(s, x, x);
    *sin_out = bits_to_float(float_to_bits(poly ? s : c) ^ sign_sin);
    *cos_out = bits_to_float(float_to_bits(poly ? c : s) ^ sign_cos);
}

static inline void normal16_avx2(float *d, float mean, float std) {
    const float two_pi = (float)6.283185307179586;
    for (int j = 0; j < 8; j++) {
        const float radius = sqrtf(-2.0f * log_avx2(1.0f - d[j]));
        float s, c;
        sincos_avx2(two_pi * d[j + 8], &s, &c);
        d[j] = fmaf(radius * c, std, mean);
        d[j + 8] = fmaf(radius * s, std, mean);
    }
}

/* ------------------------------------------------------------------ normal_ fills */
/* The uniforms are drawn in order on one thread; the transform of each block of 16 depends on
   that block alone, so the blocks go to the thread team (the same bits at any thread count;
   PyTorch's normal_fill runs them on one). About 10 ns an element: worth a team from 8K. */
#define EK_NORMAL_BLOCKS(whole, threads) \
    _Pragma("omp parallel for schedule(static) if ((whole) >= 8192 && (threads) > 1) num_threads(threads)")

/* normal_fill on n >= 16 contiguous float32 values: n uniforms, the transform on each whole
   block of 16, and a partial last block redone on 16 fresh uniforms over the last 16 places.
   `reduced`: PyTorch's float16/bfloat16 variant, which draws 16 uniforms per block (so the
   leftover ones are never drawn) and runs the same float transform. */
EK_CLONES static void ek_normal_f32(bitgen_t *g, float *d, int64_t n, float mean, float std,
                                    int avx2, int reduced) {
    const int64_t whole = n - n % 16;
    for (int64_t i = 0; i < (reduced ? whole : n); i++) d[i] = uniform24(g);
    const int threads = ek_num_threads();
    EK_NORMAL_BLOCKS(whole, threads)
    for (int64_t i = 0; i < whole; i += 16) {
        if (avx2) normal16_avx2(d + i, mean, std);
        else normal16_f32(d + i, mean, std);
    }
    if (n % 16) {
        float *tail = d + n - 16;
        for (int k = 0; k < 16; k++) tail[k] = uniform24(g);
        if (avx2) normal16_avx2(tail, mean, std);
        else normal16_f32(tail, mean, std);
    }
}

EK_CLONES static void ek_normal_f64(bitgen_t *g, double *d, int64_t n, double mean, double std) {
    const int64_t whole = n - n % 16;
    for (int64_t i = 0; i < n; i++) d[i] = uniform53(g);
    const int threads = ek_num_threads();
    EK_NORMAL_BLOCKS(whole, threads)
    for (int64_t i = 0; i < whole; i += 16) normal16_f64(d + i, mean, std);
    if (n % 16) {
        double *tail = d + n - 16;
        for (int k = 0; k < 16; k++) tail[k] = uniform53(g);
        normal16_f64(tail, mean, std);
    }
}

/* ------------------------------------------------------------------ the C library, exactly */
typedef double (*unary64)(double);
typedef float (*unary32)(float);

static const struct { const char *name; unary64 fn; } LIBM64[] = {
    {"log", log}, {"log1p", log1p}, {"exp", exp}, {"sin", sin}, {"cos", cos}, {"tan", tan},
    {NULL, NULL}};
static const struct { const char *name; unary32 fn; } LIBM32[] = {
    {"log", logf}, {"log1p", log1pf}, {"exp", expf}, {"sin", sinf}, {"cos", cosf},
    {"tan", tanf}, {NULL, NULL}};

static int ek_libm_f64(const char *name, double *x, int64_t n) {
    for (int k = 0; LIBM64[k].name; k++) {
        if (strcmp(LIBM64[k].name, name) == 0) {
            unary64 fn = LIBM64[k].fn;
            for (int64_t i = 0; i < n; i++) x[i] = fn(x[i]);
            return 0;
        }
    }
    return -1;
}

static int ek_libm_f32(const char *name, float *x, int64_t n) {
    for (int k = 0; LIBM32[k].name; k++) {
        if (strcmp(LIBM32[k].name, name) == 0) {
            unary32 fn = LIBM32[k].fn;
            for (int64_t i = 0; i < n; i++) x[i] = fn(x[i]);
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ Python wrappers */
/* The generator behind `capsule` and the writable float32/float64 array `out` to fill (its
   element count in *n); NULL with the Python error set otherwise. The caller releases v. */
static bitgen_t *fill_target(PyObject *capsule, PyObject *out, Py_buffer *v, char *kind,
                             int64_t *n) {
    bitgen_t *g = (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator");
    if (!g || ek_float_buffer(out, v, kind, 1) < 0) return NULL;
    if (direct_words < 0) direct_words = words_match(g);
    *n = v->len / v->itemsize;
    return g;
}

static PyObject *py_uniform(PyObject *self, PyObject *args) {
    PyObject *capsule, *out;
    int bits, fused;
    double low, span;
    if (!PyArg_ParseTuple(args, "OOiddp", &capsule, &out, &bits, &low, &span, &fused))
        return NULL;
    Py_buffer v;
    char kind;
    int64_t n;
    bitgen_t *g = fill_target(capsule, out, &v, &kind, &n);
    if (!g) return NULL;
    if (kind == 'd')
        ek_uniform_f64(g, (double *)v.buf, n, low, span, fused);
    else
        ek_uniform_f32(g, (float *)v.buf, n, bits, (float)low, (float)span, fused);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

static PyObject *py_bernoulli_scaled(PyObject *self, PyObject *args) {
    PyObject *capsule, *out;
    double keep, scale;
    if (!PyArg_ParseTuple(args, "OOdd", &capsule, &out, &keep, &scale)) return NULL;
    Py_buffer v;
    char kind;
    int64_t n;
    bitgen_t *g = fill_target(capsule, out, &v, &kind, &n);
    if (!g) return NULL;
    if (kind == 'd')
        ek_bernoulli_scaled_f64(g, (double *)v.buf, n, keep, scale);
    else
        ek_bernoulli_scaled_f32(g, (float *)v.buf, n, keep, (float)scale);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

static PyObject *py_normal(PyObject *self, PyObject *args) {
    PyObject *capsule, *out;
    double mean, std;
    int avx2, reduced;
    if (!PyArg_ParseTuple(args, "OOddpp", &capsule, &out, &mean, &std, &avx2, &reduced))
        return NULL;
    Py_buffer v;
    char kind;
    int64_t n;
    bitgen_t *g = fill_target(capsule, out, &v, &kind, &n);
    if (!g) return NULL;
    if (n < 16) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_ValueError, "normal fill needs at least 16 elements");
        return NULL;
    }
    if (kind == 'd')
        ek_normal_f64(g, (double *)v.buf, n, mean, std);
    else
        ek_normal_f32(g, (float *)v.buf, n, (float)mean, (float)std, avx2, reduced);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

static PyObject *py_libm(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *arr;
    if (!PyArg_ParseTuple(args, "sO", &name, &arr)) return NULL;
    Py_buffer v;
    char kind;
    if (ek_float_buffer(arr, &v, &kind, 1) < 0) return NULL;
    int64_t n = v.len / v.itemsize;
    int rc = kind == 'd' ? ek_libm_f64(name, (double *)v.buf, n)
                         : ek_libm_f32(name, (float *)v.buf, n);
    PyBuffer_Release(&v);
    if (rc < 0) {
        PyErr_Format(PyExc_ValueError, "no C library function '%s'", name);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_direct_words(PyObject *self, PyObject *noargs) {
    return PyLong_FromLong(direct_words);
}

PyMethodDef ek_random_methods[] = {
    {"direct_words", py_direct_words, METH_NOARGS,
     "direct_words(): 1 when the fills read MT19937's state inline, 0 when they call NumPy's "
     "function, -1 before the first fill"},
    {"uniform", py_uniform, METH_VARARGS,
     "uniform(bitgen_capsule, out, bits, low, span, fused): uniform_ into out, in place"},
    {"bernoulli_scaled", py_bernoulli_scaled, METH_VARARGS,
     "bernoulli_scaled(bitgen_capsule, out, keep, scale): dropout's scaled mask into out"},
    {"normal", py_normal, METH_VARARGS,
     "normal(bitgen_capsule, out, mean, std, avx2, reduced): normal_fill into out (n >= 16)"},
    {"libm", py_libm, METH_VARARGS,
     "libm(name, array): the C library's function applied in place (float32 or float64)"},
    {NULL, NULL, 0, NULL}};
