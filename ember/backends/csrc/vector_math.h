/* The vectorisable pieces the kernels share (softmax.c, normalization.c, activations.c,
   recurrent.c): float and double exps that GCC can inline into a vector loop, row
   reductions over a fixed set of lanes, and the rounding of a float to float16 / bfloat16.

   Why lanes: without -ffast-math GCC keeps a plain `s += x[i]` loop scalar (reassociating the
   sum would change its rounding). Summing into EK_LANES partial sums, lane k taking elements
   k, k + EK_LANES, ..., is a vector add per step, and the order of every addition is written
   in the source, so each CPU clone (AVX-512, AVX2, baseline) gives the same bits. The lanes
   are then combined pairwise. */
#ifndef EMBER_VECTOR_MATH_H
#define EMBER_VECTOR_MATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EK_LANES 16   /* one AVX-512 register of floats, two of AVX2 */

/* Put before each loop over the lanes. NOTE: GCC unrolls a 16-trip loop completely and then
   keeps the 16 statements scalar (measured: a row maximum 4x slower); left a loop, it
   vectorises. */
#define EK_LANE_LOOP _Pragma("GCC unroll 1")

/* Row helpers are inlined into the EK_CLONES kernels that call them, so that each clone
   compiles them for its own CPU (a helper left out of line would be baseline code). */
#define EK_INLINE static inline __attribute__((always_inline))

static inline float ek_f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* What ek_expf, ek_expf_normal and recurrent.c's tanh share: n = x / ln 2 rounded to an
   integer (by the 1.5 * 2^23 trick, which vectorises without roundps) and exp(r) - 1 for
   r = x - n ln 2 by a Cephes polynomial, r + r^2 P(r) (relatively accurate: no 1 added
   yet); the caller scales by 2^n. */
EK_INLINE float ek_expm1f_reduced(float x, float *n_out) {
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = fmaf(n, -0.693359375f, x);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = fmaf(1.9875691500e-4f, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    *n_out = n;
    return fmaf(p, r * r, r);
}

/* exp(x - n ln 2), n as above */
EK_INLINE float ek_expf_reduced(float x, float *n_out) {
    return ek_expm1f_reduced(x, n_out) + 1.0f;
}

/* exp(x) in float, within 1 ulp (measured), branch-free (Cephes' polynomial on a 2^n range
   split). The whole range of results, subnormal ones included: 2^n is applied as two factors,
   each a normal float, so that a normal result is exact scaling and a subnormal one rounds
   once; past ln(FLT_MAX) the product overflows to inf, below -104 it is 0. nan for nan.
   NOTE: below -104 the lane computes exp(0) and is then set to 0: computed from -104, its
   product is a subnormal, and each vector with one costs a microcode assist on Intel CPUs
   (a causal softmax, half its inputs -inf, ran 4x slower). */
static inline float ek_expf(float x) {
    const float in = x;
    x = x < -104.0f ? 0.0f : (x > 89.0f ? 89.0f : x);
    float n;
    float p = ek_expf_reduced(x, &n);
    const int32_t whole = (int32_t)n, half = whole >> 1;   /* n in [-150, 128] */
    p *= ek_f32_from_bits((uint32_t)(half + 127) << 23);
    p *= ek_f32_from_bits((uint32_t)(whole - half + 127) << 23);
    return in != in ? in : (in < -104.0f ? 0.0f : p);
}

/* exp(x) for callers to whom results below FLT_MIN or near overflow do not matter (GELU's
   Gaussian factor, a sigmoid's 1 + exp(-x)): 0 below -87, and x capped at 88 (exp(88) ~
   1.7e38), so that every result computed is a normal float and 2^n one factor built from
   bits; ek_expf's bits in [-87, 88], with fewer vector instructions (exp-heavy loops are
   bound by them: GELU 390 -> 330 us for 512K floats). nan stays nan (through the
   arithmetic). */
static inline float ek_expf_normal(float x) {
    const float in = x;
    x = x < -87.0f ? 0.0f : (x > 88.0f ? 88.0f : x);
    float n;
    float p = ek_expf_reduced(x, &n);
    p *= ek_f32_from_bits((uint32_t)((int32_t)n + 127) << 23);   /* n in [-125, 127] */
    return in < -87.0f ? 0.0f : p;
}

static inline double ek_f64_from_bits(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t ek_f64_bits(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

/* exp(x) in double, within 1 ulp, branch-free (the C library's exp is a call per element,
   which keeps a loop scalar: 5 ns each): x = n ln 2 + r with |r| <= ln(2) / 2 (ln 2 in two
   parts, fdlibm's), exp(r) by its Taylor series to degree 13 (truncation below 0.03 ulp),
   2^n applied as two factors built from bits, as ek_expf does: subnormal results included,
   inf past ln(DBL_MAX), 0 below -746 (computed from 0: see ek_expf). nan for nan. */
static inline double ek_exp(double x) {
    const double in = x;
    x = x < -746.0 ? 0.0 : (x > 710.0 ? 710.0 : x);   /* (below -746: 0, as in ek_expf) */
    /* x / ln 2 rounded to an integer n by adding 1.5 * 2^52: n is then the low bits of the
       sum's mantissa, read below without a float-to-integer conversion (none in AVX2) */
    const double big = 6755399441055744.0;
    const double shifted = x * 1.4426950408889634 + big;
    const double n = shifted - big;
    double r = fma(n, -6.93147180369123816490e-01, x);
    r = fma(n, -1.90821492927058770002e-10, r);
    double p = 1.0 / 6227020800.0;               /* 1/13!, Horner down to 1/2! */
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r * r, r) + 1.0;
    /* n in [-1076, 1024] as h + (n - h), h = n / 2 rounded the same way (exact: n * 0.5 has
       one bit after the point), each factor a normal double; the sums' mantissas hold h and
       n as integers, so their bits give the exponents */
    const double halved = n * 0.5 + big;
    const uint64_t h_bits = ek_f64_bits(halved);
    p *= ek_f64_from_bits((h_bits + 1023) << 52);
    p *= ek_f64_from_bits((ek_f64_bits(shifted) - h_bits + 1023) << 52);
    return in != in ? in : (in < -746.0 ? 0.0 : p);
}

static inline uint32_t ek_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* For float16 and bfloat16 tensors, computed in float: PyTorch keeps some intermediates in the
   tensor's own type (a row's log-sum-exp, a softmax's exps), rounding them there. */
enum { EK_FLOAT = 0, EK_HALF = 1, EK_BFLOAT16 = 2 };

/* v rounded to the nearest float16 (EK_HALF) or bfloat16 (EK_BFLOAT16), ties to even */
static inline float ek_round_reduced(float v, int kind) {
    if (kind == EK_BFLOAT16) {
        const uint32_t b = ek_f32_bits(v);
        const uint32_t r = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
        return v != v ? v : ek_f32_from_bits(r);
    }
#ifdef __FLT16_MAX__
    if (kind == EK_HALF) return (float)(_Float16)v;
#endif
    return v;   /* (a compiler without _Float16 leaves float16's intermediates unrounded) */
}

/* The lanes' sum and maximum, pairwise (16 -> 8 -> 4 -> 2 -> 1; a chain of 15 would wait on
   each step in turn). NOTE: written as four loops of constant length, which GCC turns into a
   few vector instructions; a loop over the halving width stayed a scalar loop in memory. */
#define EK_LANES_REDUCE(T, name, op)                                                   \
    static inline T name(T *a) {                                                       \
        for (int k = 0; k < 8; k++) a[k] = op(a[k], a[k + 8]);                         \
        for (int k = 0; k < 4; k++) a[k] = op(a[k], a[k + 4]);                         \
        for (int k = 0; k < 2; k++) a[k] = op(a[k], a[k + 2]);                         \
        return op(a[0], a[1]);                                                         \
    }
#define EK_ADD(a, b) ((a) + (b))
#define EK_MAX(a, b) ((b) > (a) ? (b) : (a))
_Static_assert(EK_LANES == 16, "the lane reductions below are written for 16 lanes");
EK_LANES_REDUCE(float, ek_lanes_sum_f32, EK_ADD)
EK_LANES_REDUCE(double, ek_lanes_sum_f64, EK_ADD)
EK_LANES_REDUCE(float, ek_lanes_max_f32, EK_MAX)
EK_LANES_REDUCE(double, ek_lanes_max_f64, EK_MAX)

#endif
