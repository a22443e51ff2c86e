/* The small float32 GEMM of gemm.h: register-blocked tiles of C, one per call of a kernel
   written for AVX-512 (8 x 32 tiles) and one for AVX2 with FMA (6 x 16), chosen once by the
   CPU's features. Each tile keeps its MR x NR sums in registers over a block of K, reading a
   broadcast of A's panel and NR values of a row of B per k. */
#include "gemm.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* k per pass over a tile: a block of B (KC x NR) stays in L1 while the tile's panels of A
   pass over it. */
#define KC 256

typedef void (*tile_fn)(int64_t k, const float *ap, const float *b, int64_t ldb,
                        const int64_t *boff, float *c, int64_t ldc, int mr, int nr,
                        int accumulate);
/* The segments: `rows` runs of `seg` products, run s of row i of A at ar[i] + s * a_step
   (of B: br[j] + s * b_step). Lane l of a sum takes the products at q = l of every run in
   turn, then q = l + 16 of every run, ... (the last vector of a run masked); fold16 then
   adds its lanes into C. */
typedef struct nt_runs {
    int64_t rows, seg, a_step, b_step;
} nt_runs;

typedef void (*nt_tile_fn)(const nt_runs *rn, const float *const *ar, const float *const *br,
                           float *c, int64_t ldc, int ma, int nb);

/* One CPU's kernels and their tile shapes (all 0 where there is none). */
typedef struct {
    tile_fn tile;
    int mr, nr;
    nt_tile_fn nt_tile;
    int nt_ma, nt_nb;
} ek_kernels;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TILE_INLINE static inline __attribute__((always_inline))

/* The tiles' sums are named variables, each row's through a macro. NOTE: GCC kept arrays of
   them in memory (a store per multiply-add, half the speed) once any loop over them had a
   run-time bound or condition. Rows past mr load and store nothing (a zero mask). */

/* ---------------------------------------------------------------- AVX-512: 8 x 32 */
#define MR512 8
#define NR512 32

#define T512_LOAD(i)                                                                    \
    if (accumulate) {                                                                   \
        const float *at = c + (i < mr ? i : 0) * ldc;                                   \
        c##i##0 = _mm512_maskz_loadu_ps(i < mr ? m0 : 0, at);                           \
        c##i##1 = _mm512_maskz_loadu_ps(i < mr ? m1 : 0, at + 16);                      \
    }
#define T512_FMA(i)                                                                     \
    {                                                                                   \
        const __m512 a = _mm512_set1_ps(ap[q * MR512 + i]);                             \
        c##i##0 = _mm512_fmadd_ps(a, b0, c##i##0);                                      \
        c##i##1 = _mm512_fmadd_ps(a, b1, c##i##1);                                      \
    }
#define T512_STORE(i)                                                                   \
    {                                                                                   \
        float *at = c + (i < mr ? i : 0) * ldc;                                         \
        _mm512_mask_storeu_ps(at, i < mr ? m0 : 0, c##i##0);                            \
        _mm512_mask_storeu_ps(at + 16, i < mr ? m1 : 0, c##i##1);                       \
    }

__attribute__((target("avx512f,fma"))) TILE_INLINE void
tile512_body(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff,
             float *c, int64_t ldc, int mr, __mmask16 m0, __mmask16 m1, int accumulate,
             int full, int table) {
    const __m512 z = _mm512_setzero_ps();
    __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
    __m512 c40 = z, c41 = z, c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z;
    T512_LOAD(0) T512_LOAD(1) T512_LOAD(2) T512_LOAD(3)
    T512_LOAD(4) T512_LOAD(5) T512_LOAD(6) T512_LOAD(7)
    for (int64_t q = 0; q < k; q++) {
        const float *row = b + (table ? boff[q] : q * ldb);
        const __m512 b0 = full ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(m0, row);
        const __m512 b1 = full ? _mm512_loadu_ps(row + 16) : _mm512_maskz_loadu_ps(m1, row + 16);
        T512_FMA(0) T512_FMA(1) T512_FMA(2) T512_FMA(3)
        T512_FMA(4) T512_FMA(5) T512_FMA(6) T512_FMA(7)
    }
    T512_STORE(0) T512_STORE(1) T512_STORE(2) T512_STORE(3)
    T512_STORE(4) T512_STORE(5) T512_STORE(6) T512_STORE(7)
}

__attribute__((target("avx512f,fma"))) static void
tile512(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff, float *c,
        int64_t ldc, int mr, int nr, int accumulate) {
    const __mmask16 m0 = nr >= 16 ? 0xFFFF : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? 0xFFFF : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
    if (boff && nr == NR512) tile512_body(k, ap, b, 0, boff, c, ldc, mr, m0, m1, accumulate, 1, 1);
    else if (boff) tile512_body(k, ap, b, 0, boff, c, ldc, mr, m0, m1, accumulate, 0, 1);
    else if (nr == NR512) tile512_body(k, ap, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 1, 0);
    else tile512_body(k, ap, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 0, 0);
}

/* ---------------------------------------------------------------- AVX2 + FMA: 6 x 16 */
#define MR256 6
#define NR256 16

#define T256_LOAD(i)                                                                    \
    if (accumulate) {                                                                   \
        const float *at = c + (i < mr ? i : 0) * ldc;                                   \
        c##i##0 = _mm256_maskload_ps(at, i < mr ? m0 : none);                           \
        c##i##1 = _mm256_maskload_ps(at + 8, i < mr ? m1 : none);                       \
    }
#define T256_FMA(i)                                                                     \
    {                                                                                   \
        const __m256 a = _mm256_broadcast_ss(ap + q * MR256 + i);                       \
        c##i##0 = _mm256_fmadd_ps(a, b0, c##i##0);                                      \
        c##i##1 = _mm256_fmadd_ps(a, b1, c##i##1);                                      \
    }
#define T256_STORE(i)                                                                   \
    {                                                                                   \
        float *at = c + (i < mr ? i : 0) * ldc;                                         \
        _mm256_maskstore_ps(at, i < mr ? m0 : none, c##i##0);                           \
        _mm256_maskstore_ps(at + 8, i < mr ? m1 : none, c##i##1);                       \
    }

__attribute__((target("avx2,fma"))) TILE_INLINE void
tile256_body(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff,
             float *c, int64_t ldc, int mr, __m256i m0, __m256i m1, int accumulate, int full,
             int table) {
    const __m256i none = _mm256_setzero_si256();
    const __m256 z = _mm256_setzero_ps();
    __m256 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z;
    __m256 c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    T256_LOAD(0) T256_LOAD(1) T256_LOAD(2) T256_LOAD(3) T256_LOAD(4) T256_LOAD(5)
    for (int64_t q = 0; q < k; q++) {
        const float *row = b + (table ? boff[q] : q * ldb);
        const __m256 b0 = full ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, m0);
        const __m256 b1 = full ? _mm256_loadu_ps(row + 8) : _mm256_maskload_ps(row + 8, m1);
        T256_FMA(0) T256_FMA(1) T256_FMA(2) T256_FMA(3) T256_FMA(4) T256_FMA(5)
    }
    T256_STORE(0) T256_STORE(1) T256_STORE(2) T256_STORE(3) T256_STORE(4) T256_STORE(5)
}

__attribute__((target("avx2,fma"))) static void
tile256(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff, float *c,
        int64_t ldc, int mr, int nr, int accumulate) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane);
    if (boff && nr == NR256) tile256_body(k, ap, b, 0, boff, c, ldc, mr, m0, m1, accumulate, 1, 1);
    else if (boff) tile256_body(k, ap, b, 0, boff, c, ldc, mr, m0, m1, accumulate, 0, 1);
    else if (nr == NR256) tile256_body(k, ap, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 1, 0);
    else tile256_body(k, ap, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 0, 0);
}

/* ---------------------------------------------------------------- C += A B^T */
/* The 16 lanes of a sum added in gemm.h's tree; inlined into each kernel as scalar adds. */
TILE_INLINE float fold16(const float *v) {
    float t8[8], t4[4];
    for (int i = 0; i < 8; i++) t8[i] = v[i] + v[i + 8];
    for (int i = 0; i < 4; i++) t4[i] = t8[i] + t8[i + 4];
    return (t4[0] + t4[2]) + (t4[1] + t4[3]);
}

/* AVX-512: 4 rows of A by 4 rows of B, one 16-lane register per sum (named, see above; the
   loop over runs innermost: a loop whose body branched at each run's end also kept them in
   memory). */
#define NT_MA512 4
#define NT_NB512 4

__attribute__((target("avx512f,fma"))) static void
nt_tile512(const nt_runs *rn, const float *const *ar, const float *const *br, float *c,
           int64_t ldc, int ma, int nb) {
    const __m512 z = _mm512_setzero_ps();
    __m512 c00 = z, c01 = z, c02 = z, c03 = z,
           c10 = z, c11 = z, c12 = z, c13 = z,
           c20 = z, c21 = z, c22 = z, c23 = z,
           c30 = z, c31 = z, c32 = z, c33 = z;
    const __mmask16 tail = (__mmask16)((1u << (rn->seg % 16)) - 1);
    for (int64_t q = 0; q < rn->seg; q += 16) {
        const __mmask16 mk = q + 16 <= rn->seg ? (__mmask16)0xFFFF : tail;
        const float *pa0 = ar[0] + q, *pa1 = ar[1] + q, *pa2 = ar[2] + q, *pa3 = ar[3] + q;
        const float *pb0 = br[0] + q, *pb1 = br[1] + q, *pb2 = br[2] + q, *pb3 = br[3] + q;
        for (int64_t s = 0; s < rn->rows; s++) {
            const __m512 a0 = _mm512_maskz_loadu_ps(mk, pa0), a1 = _mm512_maskz_loadu_ps(mk, pa1);
            const __m512 a2 = _mm512_maskz_loadu_ps(mk, pa2), a3 = _mm512_maskz_loadu_ps(mk, pa3);
            const __m512 b0 = _mm512_maskz_loadu_ps(mk, pb0), b1 = _mm512_maskz_loadu_ps(mk, pb1);
            const __m512 b2 = _mm512_maskz_loadu_ps(mk, pb2), b3 = _mm512_maskz_loadu_ps(mk, pb3);
            c00 = _mm512_fmadd_ps(a0, b0, c00); c01 = _mm512_fmadd_ps(a0, b1, c01);
            c02 = _mm512_fmadd_ps(a0, b2, c02); c03 = _mm512_fmadd_ps(a0, b3, c03);
            c10 = _mm512_fmadd_ps(a1, b0, c10); c11 = _mm512_fmadd_ps(a1, b1, c11);
            c12 = _mm512_fmadd_ps(a1, b2, c12); c13 = _mm512_fmadd_ps(a1, b3, c13);
            c20 = _mm512_fmadd_ps(a2, b0, c20); c21 = _mm512_fmadd_ps(a2, b1, c21);
            c22 = _mm512_fmadd_ps(a2, b2, c22); c23 = _mm512_fmadd_ps(a2, b3, c23);
            c30 = _mm512_fmadd_ps(a3, b0, c30); c31 = _mm512_fmadd_ps(a3, b1, c31);
            c32 = _mm512_fmadd_ps(a3, b2, c32); c33 = _mm512_fmadd_ps(a3, b3, c33);
            pa0 += rn->a_step, pa1 += rn->a_step, pa2 += rn->a_step, pa3 += rn->a_step;
            pb0 += rn->b_step, pb1 += rn->b_step, pb2 += rn->b_step, pb3 += rn->b_step;
        }
    }
    float lanes[NT_MA512][NT_NB512][16];
    _mm512_storeu_ps(lanes[0][0], c00); _mm512_storeu_ps(lanes[0][1], c01);
    _mm512_storeu_ps(lanes[0][2], c02); _mm512_storeu_ps(lanes[0][3], c03);
    _mm512_storeu_ps(lanes[1][0], c10); _mm512_storeu_ps(lanes[1][1], c11);
    _mm512_storeu_ps(lanes[1][2], c12); _mm512_storeu_ps(lanes[1][3], c13);
    _mm512_storeu_ps(lanes[2][0], c20); _mm512_storeu_ps(lanes[2][1], c21);
    _mm512_storeu_ps(lanes[2][2], c22); _mm512_storeu_ps(lanes[2][3], c23);
    _mm512_storeu_ps(lanes[3][0], c30); _mm512_storeu_ps(lanes[3][1], c31);
    _mm512_storeu_ps(lanes[3][2], c32); _mm512_storeu_ps(lanes[3][3], c33);
    for (int i = 0; i < ma; i++)
        for (int j = 0; j < nb; j++) c[i * ldc + j] += fold16(lanes[i][j]);
}

/* AVX2: 2 rows of A by 2 rows of B, each sum's 16 lanes in two registers (l: lanes 0-7,
   h: 8-15); with 16 registers a third row of B spilled. */
#define NT_MA256 2
#define NT_NB256 2

__attribute__((target("avx2,fma"))) static void
nt_tile256(const nt_runs *rn, const float *const *ar, const float *const *br, float *c,
           int64_t ldc, int ma, int nb) {
    const __m256 z = _mm256_setzero_ps();
    __m256 l00 = z, l01 = z, l10 = z, l11 = z, h00 = z, h01 = z, h10 = z, h11 = z;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i ones = _mm256_set1_epi32(-1);
    const int left = (int)(rn->seg % 16);
    const __m256i t0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
    const __m256i t1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 8), lane);
    for (int64_t q = 0; q < rn->seg; q += 16) {
        const int full = q + 16 <= rn->seg;
        const __m256i m0 = full ? ones : t0, m1 = full ? ones : t1;
        const float *pa0 = ar[0] + q, *pa1 = ar[1] + q, *pb0 = br[0] + q, *pb1 = br[1] + q;
        for (int64_t s = 0; s < rn->rows; s++) {
            const __m256 a0 = _mm256_maskload_ps(pa0, m0), a1 = _mm256_maskload_ps(pa1, m0);
            const __m256 b0 = _mm256_maskload_ps(pb0, m0), b1 = _mm256_maskload_ps(pb1, m0);
            l00 = _mm256_fmadd_ps(a0, b0, l00), l01 = _mm256_fmadd_ps(a0, b1, l01);
            l10 = _mm256_fmadd_ps(a1, b0, l10), l11 = _mm256_fmadd_ps(a1, b1, l11);
            const __m256 e0 = _mm256_maskload_ps(pa0 + 8, m1);
            const __m256 e1 = _mm256_maskload_ps(pa1 + 8, m1);
            const __m256 f0 = _mm256_maskload_ps(pb0 + 8, m1);
            const __m256 f1 = _mm256_maskload_ps(pb1 + 8, m1);
            h00 = _mm256_fmadd_ps(e0, f0, h00), h01 = _mm256_fmadd_ps(e0, f1, h01);
            h10 = _mm256_fmadd_ps(e1, f0, h10), h11 = _mm256_fmadd_ps(e1, f1, h11);
            pa0 += rn->a_step, pa1 += rn->a_step;
            pb0 += rn->b_step, pb1 += rn->b_step;
        }
    }
    float lanes[NT_MA256][NT_NB256][16];
    _mm256_storeu_ps(lanes[0][0], l00), _mm256_storeu_ps(lanes[0][0] + 8, h00);
    _mm256_storeu_ps(lanes[0][1], l01), _mm256_storeu_ps(lanes[0][1] + 8, h01);
    _mm256_storeu_ps(lanes[1][0], l10), _mm256_storeu_ps(lanes[1][0] + 8, h10);
    _mm256_storeu_ps(lanes[1][1], l11), _mm256_storeu_ps(lanes[1][1] + 8, h11);
    for (int i = 0; i < ma; i++)
        for (int j = 0; j < nb; j++) c[i * ldc + j] += fold16(lanes[i][j]);
}

/* The kernels for this CPU, found once. */
static void choose(ek_kernels *kn) {
    static ek_kernels found;
    static int done;
    if (!done) {
        __builtin_cpu_init();
        /* EMBER_GEMM_KERNEL=avx2 takes the AVX2 kernel on an AVX-512 CPU: the tests compare
           the two kernels' bits */
        const char *pick = getenv("EMBER_GEMM_KERNEL");
        const int avx2_only = pick && strcmp(pick, "avx2") == 0;
        if (__builtin_cpu_supports("avx512f") && !avx2_only) {
            found = (ek_kernels){tile512, MR512, NR512, nt_tile512, NT_MA512, NT_NB512};
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            found = (ek_kernels){tile256, MR256, NR256, nt_tile256, NT_MA256, NT_NB256};
        }
        done = 1;
    }
    *kn = found;
}
#else
static void choose(ek_kernels *kn) { *kn = (ek_kernels){0}; }
#endif

int ek_sgemm_mr(void) {
    ek_kernels kn;
    choose(&kn);
    return kn.mr;
}

void ek_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *ap) {
    const int64_t mr = ek_sgemm_mr();
    for (int64_t p = 0; p < m; p += mr, ap += mr * k)
        for (int64_t q = 0; q < k; q++)
            for (int64_t i = 0; i < mr; i++)
                ap[q * mr + i] = p + i < m ? a[(p + i) * rs + q * cs] : 0.0f;
}

void ek_sgemm_packed(int64_t m, int64_t n, int64_t k, const float *ap, const float *b,
                     int64_t ldb, const int64_t *boff, float *c, int64_t ldc, int accumulate) {
    ek_kernels kn;
    choose(&kn);
    if (k == 0 && !accumulate) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0.0f;
        return;
    }
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
        const int64_t kc = k - k0 < KC ? k - k0 : KC;
        for (int64_t j = 0; j < n; j += kn.nr) {
            const int w = n - j < kn.nr ? (int)(n - j) : kn.nr;
            for (int64_t i = 0; i < m; i += kn.mr)
                kn.tile(kc, ap + i * k + k0 * kn.mr, boff ? b + j : b + k0 * ldb + j, ldb,
                        boff ? boff + k0 : NULL, c + i * ldc + j, ldc,
                        m - i < kn.mr ? (int)(m - i) : kn.mr, w, accumulate || k0 > 0);
        }
    }
}

void ek_sgemm_nt_add(int64_t m, int64_t n, int64_t rows, int64_t seg, const float *a,
                     int64_t lda, int64_t a_step, const float *b, int64_t ldb,
                     const int64_t *boff, int64_t b_step, float *c, int64_t ldc) {
    ek_kernels kn;
    choose(&kn);
    const nt_runs rn = {rows, seg, a_step, b_step};
    if (rows == 0 || seg == 0) return;
    const float *ar[8], *br[8];   /* (rows past the edge repeat the first; not stored) */
    /* A's rows outer: a block of them (a few output channels' gradients) stays in L1 while
       B's rows (the input's taps, mostly the same cache lines) pass */
    for (int64_t i = 0; i < m; i += kn.nt_ma) {
        const int ma = m - i < kn.nt_ma ? (int)(m - i) : kn.nt_ma;
        for (int t = 0; t < kn.nt_ma; t++) ar[t] = a + (i + (t < ma ? t : 0)) * lda;
        for (int64_t j = 0; j < n; j += kn.nt_nb) {
            const int nb = n - j < kn.nt_nb ? (int)(n - j) : kn.nt_nb;
            for (int t = 0; t < kn.nt_nb; t++) {
                const int64_t row = j + (t < nb ? t : 0);
                br[t] = b + (boff ? boff[row] : row * ldb);
            }
            kn.nt_tile(&rn, ar, br, c + i * ldc + j, ldc, ma, nb);
        }
    }
}
