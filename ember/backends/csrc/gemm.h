/* A small float32 GEMM for the convolution kernels (conv.c): C = A B or C += A B, A packed.

   Why not BLAS: at a convolution's shapes (16 output channels, 144 = 16 x 3 x 3 inner, a
   piece of a batch's columns) OpenBLAS ran at 66-71 GFLOP/s where this kernel runs at 150
   (AVX-512, one core, same machine), and BLAS cannot run inside the convolution's own
   thread team without oversubscribing.

   Rounding: every element of C is one chain of fused multiply-adds over k = 0, 1, ..., K-1 in
   order, starting from 0 (or from C's value when accumulating). That fixes its bits: they do
   not depend on the vector width (the AVX-512 and AVX2 kernels block differently but give the
   same bits), on how callers split N among threads, or on the K blocking (a chain resumes
   from the stored value, which is exact). Without FMA hardware (or off x86-64) the kernel is
   unavailable and callers keep their BLAS path. */
#ifndef EMBER_GEMM_H
#define EMBER_GEMM_H
#include <stdint.h>

/* The rows of A's panels (0 when this CPU has no kernel). */
int ek_sgemm_mr(void);
/* The columns of a tile (0 likewise). */
int ek_sgemm_nr(void);

/* A's M x K elements (element (m, k) at a[m * rs + k * cs]) as panels of MR rows: panel p
   holds k-major MR values per k (rows past M are 0); ap holds ceil(M / MR) * MR * K floats. */
void ek_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *ap);

/* C (M x N, row stride ldc) = A B over some of A's columns: element (m, q) of A at
   a[m * lda + aoff[q]] (a convolution's weights for the kernel taps that read inside the
   input), B K x N row-major (ldb). Each element of C is one chain as above. Needs
   ek_sgemm_mr() > 0. */
void ek_sgemm_subset(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const int64_t *aoff, const float *b, int64_t ldb, float *c, int64_t ldc);

/* C (M x N, row stride ldc) = A B, or C += A B when `accumulate`; A packed, B K x N: its row
   q at b + q * ldb, or at b + boff[q] when boff is given (a convolution's input read in
   place, one offset per kernel tap). */
void ek_sgemm_packed(int64_t m, int64_t n, int64_t k, const float *ap, const float *b,
                     int64_t ldb, const int64_t *boff, float *c, int64_t ldc, int accumulate);

/* C (M x N, row stride ldc) += A B^T, A M x K and B N x K: the products along rows, as a
   convolution's weight gradient needs them (the output gradient times the input, positions
   along the rows). K is `rows` runs of `seg` elements: run s of A's row i at
   a + i * lda + s * a_step, of B's row j at b + boff[j] (or j * ldb) + s * b_step (a
   convolution's output rows against the input rows they read). Each element's sum runs in 16
   lanes (lane l takes element l of every run in turn, then element l + 16 of every run, ...:
   one fused multiply-add chain each), then the lanes are added in a fixed tree (l and l + 8,
   then + 4, + 2, + 1) and the result is added to C: the same bits on both kernels. Needs
   ek_sgemm_mr() > 0. */
void ek_sgemm_nt_add(int64_t m, int64_t n, int64_t rows, int64_t seg, const float *a,
                     int64_t lda, int64_t a_step, const float *b, int64_t ldb,
                     const int64_t *boff, int64_t b_step, float *c, int64_t ldc);

/* The general product: C (M x N, row stride ldc) = A B, plus the bias when given. Element
   (m, k) of A at a[m * a_rs + k * a_cs], (k, n) of B at b[k * b_rs + n * b_cs], (m, n) of the
   bias at bias[m * bias_rs + n * bias_cs] (any strides: 0 broadcasts, a transposed operand
   swaps them). Each element of C is one chain as above, then the bias added (one rounding). */
typedef struct {
    int64_t m, n, k;
    const float *a;
    int64_t a_rs, a_cs;
    const float *b;
    int64_t b_rs, b_cs;
    float *c;
    int64_t ldc;
    const float *bias;   /* NULL: none */
    int64_t bias_rs, bias_cs;
} ek_sgemm_args;

/* Floats of each thread's buffer for ek_sgemm_team (a panel of A, a block of B packed). */
int64_t ek_sgemm_own_floats(const ek_sgemm_args *g);

/* The product of g on a team of threads: each of `team` threads calls this with its `id` and
   computes its share of C (whole panels of rows, or of columns when C is wider than tall):
   no thread waits for another, and each element of C is computed by one thread as above, so
   the bits do not depend on the team. Needs ek_sgemm_mr() > 0. */
void ek_sgemm_team(const ek_sgemm_args *g, float *own, int id, int team);

#endif
