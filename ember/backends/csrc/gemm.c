/* The small float32 GEMM of gemm.h: register-blocked tiles of C, one per call of a kernel
   written for AVX-512 (8 x 32 tiles) and one for AVX2 with FMA (6 x 16), chosen once by the
   CPU's features. Each tile keeps its MR x NR sums in registers over a block of K, reading a
   broadcast of A's panel and NR values of a row of B per k. */
#include "gemm.h"

#include <stddef.h>

/* k per pass over a tile: a block of B (KC x NR) stays in L1 while the tile's panels of A
   pass over it. */
#define KC 256

typedef void (*tile_fn)(int64_t k, const float *ap, const float *b, int64_t ldb,
                        const int64_t *boff, float *c, int64_t ldc, int mr, int nr,
                        int accumulate);
typedef void (*nt_tile_fn)(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
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

/* ---------------------------------------------------------------- AVX-512: 8 x 32 */
#define MR512 8
#define NR512 32

__attribute__((target("avx512f,fma"))) TILE_INLINE void
tile512_body(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff,
             float *c, int64_t ldc, int mr, __mmask16 m0, __mmask16 m1, int accumulate,
             int full, int table) {
    __m512 c0[MR512], c1[MR512];
    for (int i = 0; i < MR512; i++) {
        c0[i] = _mm512_setzero_ps();
        c1[i] = _mm512_setzero_ps();
    }
    if (accumulate)
        for (int i = 0; i < mr; i++) {
            c0[i] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
            c1[i] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
        }
    for (int64_t q = 0; q < k; q++) {
        const float *row = b + (table ? boff[q] : q * ldb);
        const __m512 b0 = full ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(m0, row);
        const __m512 b1 = full ? _mm512_loadu_ps(row + 16) : _mm512_maskz_loadu_ps(m1, row + 16);
        for (int i = 0; i < MR512; i++) {
            const __m512 a = _mm512_set1_ps(ap[q * MR512 + i]);
            c0[i] = _mm512_fmadd_ps(a, b0, c0[i]);
            c1[i] = _mm512_fmadd_ps(a, b1, c1[i]);
        }
    }
    for (int i = 0; i < mr; i++) {
        _mm512_mask_storeu_ps(c + i * ldc, m0, c0[i]);
        _mm512_mask_storeu_ps(c + i * ldc + 16, m1, c1[i]);
    }
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

__attribute__((target("avx2,fma"))) TILE_INLINE void
tile256_body(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff,
             float *c, int64_t ldc, int mr, __m256i m0, __m256i m1, int accumulate, int full,
             int table) {
    __m256 c0[MR256], c1[MR256];
    for (int i = 0; i < MR256; i++) {
        c0[i] = _mm256_setzero_ps();
        c1[i] = _mm256_setzero_ps();
    }
    if (accumulate)
        for (int i = 0; i < mr; i++) {
            c0[i] = _mm256_maskload_ps(c + i * ldc, m0);
            c1[i] = _mm256_maskload_ps(c + i * ldc + 8, m1);
        }
    for (int64_t q = 0; q < k; q++) {
        const float *row = b + (table ? boff[q] : q * ldb);
        const __m256 b0 = full ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, m0);
        const __m256 b1 = full ? _mm256_loadu_ps(row + 8) : _mm256_maskload_ps(row + 8, m1);
        for (int i = 0; i < MR256; i++) {
            const __m256 a = _mm256_broadcast_ss(ap + q * MR256 + i);
            c0[i] = _mm256_fmadd_ps(a, b0, c0[i]);
            c1[i] = _mm256_fmadd_ps(a, b1, c1[i]);
        }
    }
    for (int i = 0; i < mr; i++) {
        _mm256_maskstore_ps(c + i * ldc, m0, c0[i]);
        _mm256_maskstore_ps(c + i * ldc + 8, m1, c1[i]);
    }
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

/* AVX-512: 4 rows of A by 4 rows of B, one 16-lane register per sum. Rows past ma / nb
   repeat row 0 and are not stored. */
#define NT_MA512 4
#define NT_NB512 4

__attribute__((target("avx512f,fma"))) static void
nt_tile512(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
           int64_t ldc, int ma, int nb) {
    const float *ar[NT_MA512], *br[NT_NB512];
    for (int i = 0; i < NT_MA512; i++) ar[i] = a + (i < ma ? i : 0) * lda;
    for (int j = 0; j < NT_NB512; j++) br[j] = b + (j < nb ? j : 0) * ldb;
    __m512 acc[NT_MA512][NT_NB512];
    for (int i = 0; i < NT_MA512; i++)
        for (int j = 0; j < NT_NB512; j++) acc[i][j] = _mm512_setzero_ps();
    int64_t q = 0;
    for (; q + 16 <= k; q += 16) {
        __m512 av[NT_MA512], bv[NT_NB512];
        for (int i = 0; i < NT_MA512; i++) av[i] = _mm512_loadu_ps(ar[i] + q);
        for (int j = 0; j < NT_NB512; j++) bv[j] = _mm512_loadu_ps(br[j] + q);
        for (int i = 0; i < NT_MA512; i++)
            for (int j = 0; j < NT_NB512; j++)
                acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
    if (q < k) {
        const __mmask16 mask = (__mmask16)((1u << (k - q)) - 1);
        __m512 av[NT_MA512], bv[NT_NB512];
        for (int i = 0; i < NT_MA512; i++) av[i] = _mm512_maskz_loadu_ps(mask, ar[i] + q);
        for (int j = 0; j < NT_NB512; j++) bv[j] = _mm512_maskz_loadu_ps(mask, br[j] + q);
        for (int i = 0; i < NT_MA512; i++)
            for (int j = 0; j < NT_NB512; j++)
                acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
    float lanes[16];
    for (int i = 0; i < ma; i++)
        for (int j = 0; j < nb; j++) {
            _mm512_storeu_ps(lanes, acc[i][j]);
            c[i * ldc + j] += fold16(lanes);
        }
}

/* AVX2: 2 rows of A by 3 rows of B, each sum's 16 lanes in two registers. */
#define NT_MA256 2
#define NT_NB256 3

__attribute__((target("avx2,fma"))) static void
nt_tile256(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
           int64_t ldc, int ma, int nb) {
    const float *ar[NT_MA256], *br[NT_NB256];
    for (int i = 0; i < NT_MA256; i++) ar[i] = a + (i < ma ? i : 0) * lda;
    for (int j = 0; j < NT_NB256; j++) br[j] = b + (j < nb ? j : 0) * ldb;
    __m256 lo[NT_MA256][NT_NB256], hi[NT_MA256][NT_NB256];
    for (int i = 0; i < NT_MA256; i++)
        for (int j = 0; j < NT_NB256; j++) lo[i][j] = hi[i][j] = _mm256_setzero_ps();
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t q = 0; q < k; q += 16) {
        const int64_t left = k - q;
        const int in0 = left > 16 ? 16 : (int)left;
        const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(in0), lane);
        const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(in0 - 8), lane);
        const int full = left >= 16;
        __m256 a0[NT_MA256], a1[NT_MA256];
        for (int i = 0; i < NT_MA256; i++) {
            a0[i] = full ? _mm256_loadu_ps(ar[i] + q) : _mm256_maskload_ps(ar[i] + q, m0);
            a1[i] = full ? _mm256_loadu_ps(ar[i] + q + 8) : _mm256_maskload_ps(ar[i] + q + 8, m1);
        }
        for (int j = 0; j < NT_NB256; j++) {
            const __m256 b0 =
                full ? _mm256_loadu_ps(br[j] + q) : _mm256_maskload_ps(br[j] + q, m0);
            const __m256 b1 =
                full ? _mm256_loadu_ps(br[j] + q + 8) : _mm256_maskload_ps(br[j] + q + 8, m1);
            for (int i = 0; i < NT_MA256; i++) {
                lo[i][j] = _mm256_fmadd_ps(a0[i], b0, lo[i][j]);
                hi[i][j] = _mm256_fmadd_ps(a1[i], b1, hi[i][j]);
            }
        }
    }
    float lanes[16];
    for (int i = 0; i < ma; i++)
        for (int j = 0; j < nb; j++) {
            _mm256_storeu_ps(lanes, lo[i][j]);
            _mm256_storeu_ps(lanes + 8, hi[i][j]);
            c[i * ldc + j] += fold16(lanes);
        }
}

/* The kernels for this CPU, found once. */
static void choose(ek_kernels *kn) {
    static ek_kernels found;
    static int done;
    if (!done) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) {
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

void ek_sgemm_nt_add(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float *c, int64_t ldc) {
    ek_kernels kn;
    choose(&kn);
    if (k == 0) return;
    /* B's rows outer: a block of them stays in L1 while A's rows pass */
    for (int64_t j = 0; j < n; j += kn.nt_nb)
        for (int64_t i = 0; i < m; i += kn.nt_ma)
            kn.nt_tile(k, a + i * lda, lda, b + j * ldb, ldb, c + i * ldc + j, ldc,
                       m - i < kn.nt_ma ? (int)(m - i) : kn.nt_ma,
                       n - j < kn.nt_nb ? (int)(n - j) : kn.nt_nb);
}
