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
/* The general product's tile: A's packed panel (lda 0) or its rows lda apart */
typedef void (*wide_fn)(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                        float *c, int64_t ldc, int mr, int nr, int accumulate);
/* The wide tile on some of A's columns (A's rows in place, column q at aoff[q]) */
typedef void (*subset_fn)(int64_t k, const float *a, int64_t lda, const int64_t *aoff,
                          const float *b, int64_t ldb, float *c, int64_t ldc, int mr, int nr,
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

/* Packs panels (see pack_panels): all of them when the source lies along l (ls 1), one when
   it lies along k (qs 1); NULL: the scalar loops. */
typedef void (*pack_fn)(const float *src, int64_t qs, int64_t ls, int64_t k, int64_t cols,
                        int width, float *dst);

/* One CPU's kernels and their tile shapes (all 0 where there is none). */
typedef struct {
    tile_fn tile;
    int mr, nr;
    wide_fn wide_tile;   /* the general product's */
    int wide_mr;
    nt_tile_fn nt_tile;
    int nt_ma, nt_nb;
    pack_fn pack;
    subset_fn subset_tile;   /* (its rows: wide_mr) */
} ek_kernels;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TILE_INLINE static inline __attribute__((always_inline))

/* The tiles' sums are named variables, each row's through a macro. NOTE: GCC kept arrays of
   them in memory (a store per multiply-add, half the speed) once any loop over them had a
   run-time bound or condition. Rows past mr load and store nothing (a zero mask). */

/* ---------------------------------------------------------------- AVX-512: 8 x 32, 12 x 32 */
/* 8 rows for the convolutions (16 output channels: two full panels) and the LSTM; 12 for the
   general product, whose 24 sums hide the multiply-adds' latency better and read B's packed
   panels from L2 once per 12 rows. */
#define MR512 8
#define MR512W 12
#define NR512 32

/* (rows past 8 exist in the wide tile only) */
#define T512_HAS(i) (i < MR512 || wide)
#define T512_LOAD(i)                                                                    \
    if (accumulate && T512_HAS(i)) {                                                    \
        const float *at = c + (i < mr ? i : 0) * ldc;                                   \
        c##i##0 = _mm512_maskz_loadu_ps(i < mr ? m0 : 0, at);                           \
        c##i##1 = _mm512_maskz_loadu_ps(i < mr ? m1 : 0, at + 16);                      \
    }
#define T512_FMA(i)                                                                     \
    if (T512_HAS(i)) {                                                                  \
        const __m512 a = _mm512_set1_ps(lda ? ap[(i < mr ? i : 0) * lda + (aoff ? aoff[q] : q)] \
                                            : ap[q * panel + i]);                       \
        c##i##0 = _mm512_fmadd_ps(a, b0, c##i##0);                                      \
        c##i##1 = _mm512_fmadd_ps(a, b1, c##i##1);                                      \
    }
#define T512_STORE(i)                                                                   \
    if (T512_HAS(i)) {                                                                  \
        float *at = c + (i < mr ? i : 0) * ldc;                                         \
        _mm512_mask_storeu_ps(at, i < mr ? m0 : 0, c##i##0);                            \
        _mm512_mask_storeu_ps(at + 16, i < mr ? m1 : 0, c##i##1);                       \
    }

__attribute__((target("avx512f,fma"))) TILE_INLINE void
tile512_body(int64_t k, const float *ap, int64_t lda, const int64_t *aoff, const float *b,
             int64_t ldb, const int64_t *boff, float *c, int64_t ldc, int mr, __mmask16 m0,
             __mmask16 m1, int accumulate, int full, int table, int wide) {
    const int panel = wide ? MR512W : MR512;
    const __m512 z = _mm512_setzero_ps();
    __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
    __m512 c40 = z, c41 = z, c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z;
    __m512 c80 = z, c81 = z, c90 = z, c91 = z, c100 = z, c101 = z, c110 = z, c111 = z;
    T512_LOAD(0) T512_LOAD(1) T512_LOAD(2) T512_LOAD(3)
    T512_LOAD(4) T512_LOAD(5) T512_LOAD(6) T512_LOAD(7)
    T512_LOAD(8) T512_LOAD(9) T512_LOAD(10) T512_LOAD(11)
    /* (unrolled: 4-9% faster, the loop's own instructions no longer crowding the issue of
       its 24 multiply-adds) */
#pragma GCC unroll 4
    for (int64_t q = 0; q < k; q++) {
        const float *row = b + (table ? boff[q] : q * ldb);
        const __m512 b0 = full ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(m0, row);
        const __m512 b1 = full ? _mm512_loadu_ps(row + 16) : _mm512_maskz_loadu_ps(m1, row + 16);
        T512_FMA(0) T512_FMA(1) T512_FMA(2) T512_FMA(3)
        T512_FMA(4) T512_FMA(5) T512_FMA(6) T512_FMA(7)
        T512_FMA(8) T512_FMA(9) T512_FMA(10) T512_FMA(11)
    }
    T512_STORE(0) T512_STORE(1) T512_STORE(2) T512_STORE(3)
    T512_STORE(4) T512_STORE(5) T512_STORE(6) T512_STORE(7)
    T512_STORE(8) T512_STORE(9) T512_STORE(10) T512_STORE(11)
}

#define T512_MASKS                                                                      \
    const __mmask16 m0 = nr >= 16 ? 0xFFFF : (__mmask16)((1u << nr) - 1);               \
    const __mmask16 m1 = nr >= 32 ? 0xFFFF : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);

/* The body for these operands, its flags constant in each call */
#define T512_CALL(a, lda, b, ldb, boff, full, table, wide)                                 \
    tile512_body(k, a, lda, NULL, b, ldb, boff, c, ldc, mr, m0, m1, accumulate, full, table, wide)

__attribute__((target("avx512f,fma"))) static void
tile512(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff, float *c,
        int64_t ldc, int mr, int nr, int accumulate) {
    T512_MASKS
    if (boff && nr == NR512) T512_CALL(ap, 0, b, 0, boff, 1, 1, 0);
    else if (boff) T512_CALL(ap, 0, b, 0, boff, 0, 1, 0);
    else if (nr == NR512) T512_CALL(ap, 0, b, ldb, NULL, 1, 0, 0);
    else T512_CALL(ap, 0, b, ldb, NULL, 0, 0, 0);
}

/* The wide tile: B's rows at a stride, no table; A's packed panel (lda 0), or its rows in
   place, lda apart (row-major A: no transposing pack). */
__attribute__((target("avx512f,fma"))) static void
tile512w(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
         int64_t ldc, int mr, int nr, int accumulate) {
    T512_MASKS
    if (lda && nr == NR512) T512_CALL(a, lda, b, ldb, NULL, 1, 0, 1);
    else if (lda) T512_CALL(a, lda, b, ldb, NULL, 0, 0, 1);
    else if (nr == NR512) T512_CALL(a, 0, b, ldb, NULL, 1, 0, 1);
    else T512_CALL(a, 0, b, ldb, NULL, 0, 0, 1);
}

/* The wide tile on some of A's columns: its rows in place, lda apart, column q at aoff[q] */
__attribute__((target("avx512f,fma"))) static void
tile512s(int64_t k, const float *a, int64_t lda, const int64_t *aoff, const float *b,
         int64_t ldb, float *c, int64_t ldc, int mr, int nr, int accumulate) {
    T512_MASKS
    if (nr == NR512)
        tile512_body(k, a, lda, aoff, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 1, 0, 1);
    else
        tile512_body(k, a, lda, aoff, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 0, 0, 1);
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
        const __m256 a = _mm256_broadcast_ss(lda ? ap + (i < mr ? i : 0) * lda +        \
                                                   (aoff ? aoff[q] : q)                 \
                                             : ap + q * MR256 + i);                     \
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
tile256_body(int64_t k, const float *ap, int64_t lda, const int64_t *aoff, const float *b,
             int64_t ldb, const int64_t *boff, float *c, int64_t ldc, int mr, __m256i m0,
             __m256i m1, int accumulate, int full, int table) {
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

#define T256_MASKS                                                                      \
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                    \
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane);                 \
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane);
#define T256_CALL(a, lda, b, ldb, boff, full, table)                                      \
    tile256_body(k, a, lda, NULL, b, ldb, boff, c, ldc, mr, m0, m1, accumulate, full, table)

__attribute__((target("avx2,fma"))) static void
tile256(int64_t k, const float *ap, const float *b, int64_t ldb, const int64_t *boff, float *c,
        int64_t ldc, int mr, int nr, int accumulate) {
    T256_MASKS
    if (boff && nr == NR256) T256_CALL(ap, 0, b, 0, boff, 1, 1);
    else if (boff) T256_CALL(ap, 0, b, 0, boff, 0, 1);
    else if (nr == NR256) T256_CALL(ap, 0, b, ldb, NULL, 1, 0);
    else T256_CALL(ap, 0, b, ldb, NULL, 0, 0);
}

/* (the general product's: A's packed panel, or its rows in place, as tile512w) */
__attribute__((target("avx2,fma"))) static void
tile256w(int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
         int64_t ldc, int mr, int nr, int accumulate) {
    T256_MASKS
    if (lda && nr == NR256) T256_CALL(a, lda, b, ldb, NULL, 1, 0);
    else if (lda) T256_CALL(a, lda, b, ldb, NULL, 0, 0);
    else if (nr == NR256) T256_CALL(a, 0, b, ldb, NULL, 1, 0);
    else T256_CALL(a, 0, b, ldb, NULL, 0, 0);
}

__attribute__((target("avx2,fma"))) static void
tile256s(int64_t k, const float *a, int64_t lda, const int64_t *aoff, const float *b,
         int64_t ldb, float *c, int64_t ldc, int mr, int nr, int accumulate) {
    T256_MASKS
    if (nr == NR256)
        tile256_body(k, a, lda, aoff, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 1, 0);
    else
        tile256_body(k, a, lda, aoff, b, ldb, NULL, c, ldc, mr, m0, m1, accumulate, 0, 0);
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

/* ---------------------------------------------------------------- packing */
/* AVX-512 packing (see pack_panels). Along l: 16-lane copies, k outermost, so that the
   source is read in its order (a transposed A's rows: g^T's panels, 12 floats a row); along
   k (a panel's rows, or B's columns, that lie along k: nn.Linear's x and W), 16 x 16
   transposes in registers. */
__attribute__((target("avx512f"))) static void
pack512(const float *src, int64_t qs, int64_t ls, int64_t k, int64_t cols, int width,
        float *dst) {
    if (ls == 1) {
        const int64_t panels = (cols + width - 1) / width;
        for (int64_t q = 0; q < k; q++)
            for (int64_t p = 0; p < panels; p++)
                for (int l0 = 0; l0 < width; l0 += 16) {
                    const int64_t left = cols - p * width - l0;
                    const int have = left < 0 ? 0 : left < 16 ? (int)left : 16;
                    const int lanes = width - l0 < 16 ? width - l0 : 16;
                    _mm512_mask_storeu_ps(dst + (p * k + q) * width + l0,
                                          (__mmask16)((1u << lanes) - 1),
                                          _mm512_maskz_loadu_ps((__mmask16)((1u << have) - 1),
                                                                src + q * qs + p * width + l0));
                }
        return;
    }
    for (int l0 = 0; l0 < width; l0 += 16) {
        const int lanes = width - l0 < 16 ? width - l0 : 16;
        const __mmask16 store = (__mmask16)((1u << lanes) - 1);
        for (int64_t q0 = 0; q0 < k; q0 += 16) {
            const int64_t kq = k - q0 < 16 ? k - q0 : 16;
            const __mmask16 load = (__mmask16)((1u << kq) - 1);
            __m512 r[16], t[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = l0 + i < cols ? _mm512_maskz_loadu_ps(load, src + (l0 + i) * ls + q0)
                                     : _mm512_setzero_ps();
            /* pairs of rows interleaved, then quads: t[4g + c] holds rows 4g..4g+3 of the
               columns c, c + 4, c + 8, c + 12, one per 128-bit lane */
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++) {
                const __m512 a0 = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]);
                const __m512 a1 = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
                const __m512 a2 = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
                const __m512 a3 = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
#define PD(x) _mm512_castps_pd(x)
                t[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(PD(a0), PD(a2)));
                t[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(PD(a0), PD(a2)));
                t[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(PD(a1), PD(a3)));
                t[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(PD(a1), PD(a3)));
#undef PD
            }
            /* 128-bit lanes gathered: column c (c + 8) from lanes 0 (2) of the four quads,
               column c + 4 (c + 12) from lanes 1 (3) */
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                const __m512 v0 = _mm512_shuffle_f32x4(t[c], t[4 + c], 0x88);
                const __m512 v1 = _mm512_shuffle_f32x4(t[c], t[4 + c], 0xdd);
                const __m512 v2 = _mm512_shuffle_f32x4(t[8 + c], t[12 + c], 0x88);
                const __m512 v3 = _mm512_shuffle_f32x4(t[8 + c], t[12 + c], 0xdd);
                r[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
                r[c + 8] = _mm512_shuffle_f32x4(v0, v2, 0xdd);
                r[c + 4] = _mm512_shuffle_f32x4(v1, v3, 0x88);
                r[c + 12] = _mm512_shuffle_f32x4(v1, v3, 0xdd);
            }
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++)
                if (j < kq) _mm512_mask_storeu_ps(dst + (q0 + j) * width + l0, store, r[j]);
        }
    }
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
            found = (ek_kernels){tile512, MR512, NR512, tile512w, MR512W, nt_tile512,
                                  NT_MA512, NT_NB512,
                                  pack512, tile512s};
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            found = (ek_kernels){tile256, MR256, NR256, tile256w, MR256, nt_tile256,
                                  NT_MA256, NT_NB256, NULL, tile256s};
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

int ek_sgemm_nr(void) {
    ek_kernels kn;
    choose(&kn);
    return kn.nr;
}

/* Panels of `width` lanes, k-major, one after another (k * width floats each): lane l of
   panel p at k step q, dst[(p * k + q) * width + l], is src[q * qs + (p * width + l) * ls],
   or 0 past `cols` (A's panels: l a row; B's: l a column). */
static void pack_panels(const ek_kernels *kn, const float *src, int64_t qs, int64_t ls,
                        int64_t k, int64_t cols, int width, float *dst) {
    if (kn->pack && ls == 1) {
        kn->pack(src, qs, ls, k, cols, width, dst);
        return;
    }
    for (int64_t p = 0; p * width < cols; p++, src += width * ls, dst += k * width) {
        const int have = cols - p * width < width ? (int)(cols - p * width) : width;
        if (kn->pack && qs == 1 && k > 1) {
            kn->pack(src, qs, ls, k, have, width, dst);
        } else if (ls == 1) {   /* (rows of B, columns of a transposed A: copies) */
            for (int64_t q = 0; q < k; q++) {
                memcpy(dst + q * width, src + q * qs, (size_t)have * sizeof(float));
                memset(dst + q * width + have, 0, (size_t)(width - have) * sizeof(float));
            }
        } else {
            for (int64_t q = 0; q < k; q++)
                for (int l = 0; l < width; l++)
                    dst[q * width + l] = l < have ? src[q * qs + l * ls] : 0.0f;
        }
    }
}

void ek_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *ap) {
    ek_kernels kn;
    choose(&kn);
    pack_panels(&kn, a, cs, rs, k, m, kn.mr, ap);
}

/* C = 0 (m x n, row stride ldc): a product over no terms. */
static void zero_fill(int64_t m, int64_t n, float *c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0.0f;
}

void ek_sgemm_packed(int64_t m, int64_t n, int64_t k, const float *ap, const float *b,
                     int64_t ldb, const int64_t *boff, float *c, int64_t ldc, int accumulate) {
    ek_kernels kn;
    choose(&kn);
    if (k == 0 && !accumulate) {
        zero_fill(m, n, c, ldc);
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

void ek_sgemm_subset(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const int64_t *aoff, const float *b, int64_t ldb, float *c, int64_t ldc) {
    ek_kernels kn;
    choose(&kn);
    if (k == 0) {
        zero_fill(m, n, c, ldc);
        return;
    }
    /* (as ek_sgemm_packed: a block of B in L1 while the panels of A's rows pass over it) */
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
        const int64_t kc = k - k0 < KC ? k - k0 : KC;
        for (int64_t j = 0; j < n; j += kn.nr) {
            const int w = n - j < kn.nr ? (int)(n - j) : kn.nr;
            for (int64_t i = 0; i < m; i += kn.wide_mr)
                kn.subset_tile(kc, a + i * lda, lda, aoff + k0, b + k0 * ldb + j, ldb,
                               c + i * ldc + j, ldc,
                               m - i < kn.wide_mr ? (int)(m - i) : kn.wide_mr, w, k0 > 0);
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


/* ---------------------------------------------------------------- the general product */
/* k per pass: at most WIDE_KC, in equal passes (a short last pass would load and store C's
   tiles for few multiply-adds). A's panel (12 x 512 floats, 24 KiB) stays in L1 while it
   passes over B's packed block. */
#define WIDE_KC 512
/* Floats of B's packed block (one pass's rows of up to this many columns): 1 MiB, in L2 from
   its packing until the last panel of A has passed over it. */
#define B_BLOCK_FLOATS (1 << 18)
/* A is packed this many panels at a time (8 x 12 x 512 floats: 192 KiB, in L2), so that a
   transposed A (g^T @ x) is read along its rows, not 12 floats a row per panel: the strided
   reads, one cache line each, took 10-20% of the time at 384 x 1024 x 128. */
#define A_BLOCK_PANELS 8

static int64_t pass_k(int64_t k) {
    const int64_t passes = (k + WIDE_KC - 1) / WIDE_KC;
    return passes > 1 ? (k + passes - 1) / passes : WIDE_KC;
}

static int64_t block_cols(const ek_kernels *kn, int64_t kp) {
    return B_BLOCK_FLOATS / kp / kn->nr * kn->nr;
}

int64_t ek_sgemm_own_floats(const ek_sgemm_args *g) {
    ek_kernels kn;
    choose(&kn);
    const int64_t kp = pass_k(g->k);
    return kp * (A_BLOCK_PANELS * kn.wide_mr + block_cols(&kn, kp));
}

/* C's rows [i, i + rows), columns [j0, j1) += the bias */
static void add_bias(const ek_sgemm_args *g, int64_t i, int rows, int64_t j0, int64_t j1) {
    for (int64_t r = i; r < i + rows; r++) {
        float *c = g->c + r * g->ldc;
        const float *b = g->bias + r * g->bias_rs;
        if (g->bias_cs == 1)
            for (int64_t j = j0; j < j1; j++) c[j] += b[j];
        else
            for (int64_t j = j0; j < j1; j++) c[j] += b[j * g->bias_cs];
    }
}

/* C's rows [i0, i1) and columns [j0, j1) (i0 a multiple of the panel rows, j0 of NR). B is
   packed a block at a time, except that rows of B lying along n are read in place for a few
   rows of C: the tiles ran 5-10% slower on B in place (1200 x 392 x 512: 180-194 GFLOP/s
   against 211), but packing B costs a pass over it from memory before the first product
   (75 us of 128 x 784 x 512's 600, which PyTorch does not pay). */
#define IN_PLACE_ROWS 256
static void product_block(const ek_kernels *kn, wide_fn tile, int64_t mr, const ek_sgemm_args *g,
                          int64_t i0, int64_t i1, int64_t j0, int64_t j1, float *own) {
    const int64_t k = g->k, kp = pass_k(k), nc = block_cols(kn, kp), mc = A_BLOCK_PANELS * mr;
    const int in_place = g->b_cs == 1 && i1 - i0 < IN_PLACE_ROWS;
    /* A's rows lying along k are read in place, a row per broadcast, unless k is short and
       many tiles share each packed panel: transposing A into panels took 3-5% at k 512-784,
       and saved 2-4% at k 128 with 384 columns or more (1 thread, both measured in turn).
       (Rows 0 apart, a broadcast row, are packed: the tile reads lda 0 as a packed panel.) */
    const int a_in_place =
        g->a_cs == 1 && g->a_rs != 0 && (k >= 256 || j1 - j0 <= 4 * kn->nr);
    float *ap = own, *bp = own + mc * kp;
    for (int64_t jc = j0; jc < j1; jc += nc) {
        const int64_t jend = j1 - jc < nc ? j1 : jc + nc;
        for (int64_t pc = 0; pc == 0 || pc < k; pc += kp) {   /* (once when k is 0) */
            const int64_t kc = k - pc < kp ? k - pc : kp;
            if (!in_place)
                pack_panels(kn, g->b + pc * g->b_rs + jc * g->b_cs, g->b_rs, g->b_cs, kc,
                            jend - jc, kn->nr, bp);
            for (int64_t ib = i0; ib < i1; ib += mc) {
                const int64_t iend = i1 - ib < mc ? i1 : ib + mc;
                if (!a_in_place)
                    pack_panels(kn, g->a + ib * g->a_rs + pc * g->a_cs, g->a_cs, g->a_rs, kc,
                                iend - ib, (int)mr, ap);
                for (int64_t i = ib; i < iend; i += mr) {
                    const int rows = iend - i < mr ? (int)(iend - i) : (int)mr;
                    for (int64_t j = jc; j < jend; j += kn->nr)
                        tile(kc, a_in_place ? g->a + i * g->a_rs + pc : ap + (i - ib) * kc,
                             a_in_place ? g->a_rs : 0,
                             in_place ? g->b + pc * g->b_rs + j : bp + (j - jc) * kc,
                             in_place ? g->b_rs : kn->nr, g->c + i * g->ldc + j, g->ldc, rows,
                             jend - j < kn->nr ? (int)(jend - j) : kn->nr, pc > 0);
                    if (g->bias && pc + kc >= k) add_bias(g, i, rows, jc, jend);
                }
            }
        }
    }
}

void ek_sgemm_team(const ek_sgemm_args *g, float *own, int id, int team) {
    ek_kernels kn;
    choose(&kn);
    /* (the wide tile: the 8-row one ran 10% slower at nn.Linear's shapes, and no faster
       where 12 rows fit a product's rows worse, 64 of them) */
    const wide_fn tile = kn.wide_tile;
    const int64_t mr = kn.wide_mr;
    /* the threads split C's rows or its columns, whichever has more panels (the finer split
       balances better: 512 x 128 x 784 splits 43 panels of rows 21/22, where its 25 of
       columns would split 12/13); each packs whole the operand it shares (B when they split
       rows, A when columns), at most a few percent of its work at these shapes */
    const int64_t row_panels = (g->m + mr - 1) / mr, col_panels = (g->n + kn.nr - 1) / kn.nr;
    if (row_panels >= col_panels) {
        const int64_t i0 = id * row_panels / team * mr, i1 = (id + 1) * row_panels / team * mr;
        product_block(&kn, tile, mr, g, i0, i1 < g->m ? i1 : g->m, 0, g->n, own);
    } else {
        const int64_t j0 = id * col_panels / team * kn.nr;
        const int64_t j1 = (id + 1) * col_panels / team * kn.nr;
        product_block(&kn, tile, mr, g, 0, g->m, j0, j1 < g->n ? j1 : g->n, own);
    }
}
