/* Sliding-window kernels: im2col / col2im for convolutions (and F.unfold / F.fold), max and
   average pooling forward and backward, float32 and float64.

   Geometry: every input is seen as (N, C, D, H, W), 1-d and 2-d ones with leading spatial
   sizes of 1; a window has a kernel size, stride, padding in front (lo) and dilation per
   spatial dim, and the caller gives the output sizes (PyTorch's formulas, ceil_mode
   included, are computed in Python once).

   Columns (backends/conv_kernels.py): row r = (group, channel in the group, kernel offset),
   Cg * K rows per group; column j = (sample n, output position l), j = n * L + l over the
   whole batch. A call fills the cnt columns from j0 on, (G * Cg * K, cnt) row-major, so that
   a caller can walk the batch in pieces that stay in cache between im2col and the GEMM that
   reads them (W (Og, Cg*K) times a piece is the forward; a piece times the output gradient
   transposed is the weight gradient).

   Pooling works plane by plane: the geometry's N * C planes, split among the threads. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Work below which one thread is faster: about 25 us of work, 256K cells of columns (a copy
   each), or 64K window elements of pooling (the team's threads are awake inside a training
   step: ember_kernels.h). */
#define EK_COLUMNS_PARALLEL_MIN (1 << 18)
#define EK_POOL_PARALLEL_MIN (1 << 16)
#define WIN_INLINE static inline __attribute__((always_inline))   /* compiled per clone */

typedef struct {
    int64_t n, c, in[3], k[3], s[3], p[3], d[3], out[3], groups;
} ek_geom;

static inline int64_t ek_kvol(const ek_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }
static inline int64_t ek_ck(const ek_geom *g) { return g->c / g->groups * ek_kvol(g); }
static inline int64_t ek_len(const ek_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }

static inline int64_t floor_div(int64_t a, int64_t b) {   /* b > 0 */
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The output positions o in [lo, hi) whose input o * s + off lies in [0, size). */
WIN_INLINE void ek_valid_outputs(int64_t off, int64_t s, int64_t size, int64_t outs,
                                 int64_t *lo, int64_t *hi) {
    int64_t a = s == 1 ? -off : -floor_div(off, s);            /* ceil(-off / s) */
    int64_t b = s == 1 ? size - off : floor_div(size - 1 - off, s) + 1;
    a = a < 0 ? 0 : a;
    b = b > outs ? outs : b;
    *lo = a;
    *hi = b > a ? b : a;
}

/* The valid outputs [lo, hi) of each kernel offset along W (pooling asks per output row:
   kept here, they cost no division in that loop). */
#define EK_SPANS 64
typedef struct {
    int64_t lo[EK_SPANS], hi[EK_SPANS];
} ek_spans;

static void ek_spans_of(const ek_geom *g, ek_spans *sp) {
    for (int64_t kw = 0; kw < g->k[2] && kw < EK_SPANS; kw++)
        ek_valid_outputs(kw * g->d[2] - g->p[2], g->s[2], g->in[2], g->out[2], &sp->lo[kw],
                         &sp->hi[kw]);
}

WIN_INLINE void ek_span(const ek_spans *sp, const ek_geom *g, int64_t kw, int64_t *lo,
                        int64_t *hi) {
    if (kw < EK_SPANS) {
        *lo = sp->lo[kw];
        *hi = sp->hi[kw];
    } else {
        ek_valid_outputs(kw * g->d[2] - g->p[2], g->s[2], g->in[2], g->out[2], lo, hi);
    }
}

/* A column's position: sample n, output position (od, oh, ow). */
typedef struct {
    int64_t n, od, oh, ow;
} ek_pos;

static void ek_position(const ek_geom *g, int64_t j, ek_pos *at) {
    const int64_t l = j % ek_len(g);
    at->n = j / ek_len(g);
    at->od = l / (g->out[1] * g->out[2]);
    at->oh = l / g->out[2] % g->out[1];
    at->ow = l % g->out[2];
}

/* A column row's channel c and kernel offset k, stepped row by row without dividing. */
typedef struct {
    int64_t c, k[3];
} ek_row;

static void ek_row_start(const ek_geom *g, int64_t r, ek_row *rw) {
    const int64_t kk = ek_kvol(g), ck = ek_ck(g), k = r % kk;
    rw->c = (r / ck) * (g->c / g->groups) + (r % ck) / kk;
    rw->k[0] = k / (g->k[1] * g->k[2]);
    rw->k[1] = k / g->k[2] % g->k[1];
    rw->k[2] = k % g->k[2];
}

static inline void ek_row_next(const ek_geom *g, ek_row *rw) {
    if (++rw->k[2] < g->k[2]) return;
    rw->k[2] = 0;
    if (++rw->k[1] < g->k[1]) return;
    rw->k[1] = 0;
    if (++rw->k[0] < g->k[0]) return;
    rw->k[0] = 0;
    rw->c++;   /* (the next group's first channel follows the last of this one) */
}

/* Whether output rows are short enough to gather through a table (ek_gather_table) rather
   than run by run: a run per output row costs more than its few cells (ResNet's last layers
   have 1 to 7 per row). Measured per cell, runs against the table: 3.8 against 1.9 ns on
   1x1 images; same-width rows copied as spans (see walk_row) 0.92 against 0.94 ns on 4x4
   images and 0.59 against 0.86 on 7x7 ones. */
static int ek_short_rows(const ek_geom *g) {
    const int spans = g->s[1] == 1 && g->s[2] == 1 && g->out[2] == g->in[2];
    return g->out[2] < (spans ? 4 : 16);
}

/* For each kernel offset k and output position l of a plane, the input position it reads
   (an offset in the plane; 0 in the padding), then (K, L) more: 1 where that position is
   inside the input, 0 in the padding. (2, K, L) int32, malloc'd; NULL when a plane is too
   large for int32 offsets or memory is short. The same for every channel and sample. */
static int32_t *ek_gather_table(const ek_geom *g) {
    const int64_t len = ek_len(g), kk = ek_kvol(g);
    if (g->in[0] * g->in[1] * g->in[2] > INT32_MAX) return NULL;
    int32_t *tab = malloc((size_t)(2 * kk * len) * sizeof(int32_t));
    if (!tab) return NULL;
    int32_t *t = tab, *ok = tab + kk * len;
    for (int64_t k0 = 0; k0 < g->k[0]; k0++)
        for (int64_t k1 = 0; k1 < g->k[1]; k1++)
            for (int64_t k2 = 0; k2 < g->k[2]; k2++)
                for (int64_t od = 0; od < g->out[0]; od++)
                    for (int64_t oh = 0; oh < g->out[1]; oh++)
                        for (int64_t ow = 0; ow < g->out[2]; ow++) {
                            const int64_t id = od * g->s[0] + k0 * g->d[0] - g->p[0];
                            const int64_t ih = oh * g->s[1] + k1 * g->d[1] - g->p[1];
                            const int64_t iw = ow * g->s[2] + k2 * g->d[2] - g->p[2];
                            const int inside = id >= 0 && id < g->in[0] && ih >= 0 &&
                                               ih < g->in[1] && iw >= 0 && iw < g->in[2];
                            *t++ = inside ? (int32_t)((id * g->in[1] + ih) * g->in[2] + iw) : 0;
                            *ok++ = inside;
                        }
    return tab;
}

/* Output o's window along dim `dim`, clipped to the input as PyTorch's pooling kernels clip
   it: [start, end) stepped by the dilation, start the first position not in the padding. */
WIN_INLINE void ek_window(int64_t o, int dim, const ek_geom *g, int64_t *start, int64_t *end) {
    int64_t a = o * g->s[dim] - g->p[dim];
    int64_t b = a + (g->k[dim] - 1) * g->d[dim] + 1;
    *end = b < g->in[dim] ? b : g->in[dim];
    if (a < 0) a += (-a + g->d[dim] - 1) / g->d[dim] * g->d[dim];
    *start = a;
}

#define T float
#define SUF(name) name##_f32
#include "conv_impl.h"
#undef T
#undef SUF

#define T double
#define SUF(name) name##_f64
#include "conv_impl.h"
#undef T
#undef SUF

/* ------------------------------------------------------------------ float32 convolution */
/* conv_forward: y = W times im2col(x), the whole batch in one call. The batch's columns are
   walked in pieces of about `piece_bytes` (backends/conv_kernels.py; im2col into a buffer of
   the thread's, then the GEMM of gemm.h over it while it is in cache), and the pieces are
   spread over the thread team: every output is one GEMM chain whichever thread or piece
   makes it, so the bits do not depend on the thread count. Threads take the pieces as they
   come (dynamic schedule): on a loaded machine one thread of the team often starts late. */
/* Bytes of one group's weights up to which they stay in cache while the unit-stride path
   walks the samples one by one; larger ones are read once per piece of many samples. */
#define EK_CONV_CACHED_WEIGHTS (1 << 20)

/* Where these kernels beat BLAS (OpenBLAS, one core, measured on ResNet's and LeNet's
   layers). Forward: everywhere (1.1-2.5x) but on images of under 16 positions with many
   channels, where the weights, not the columns, are the large operand (512 channels on 1x1
   images: OpenBLAS's packed GEMM 1.7x faster). Weight gradient: with few output channels per
   group (16: 1.1-1.8x); from 64 on, the 16-lane sums ran 1.5-60x slower than OpenBLAS.
   Elsewhere the callers run their BLAS path (the kernels say False). */
#define EK_CONV_FEW_CHANNELS 32
#define EK_CONV_SMALL_IMAGE 16

static int conv_forward_pays(const ek_geom *g, int64_t og) {
    return og <= EK_CONV_FEW_CHANNELS || ek_len(g) >= EK_CONV_SMALL_IMAGE;
}
/* Flops (2 per multiply-add) from which the pieces go to a thread team: about 20 us of
   work. */
#define EK_CONV_PARALLEL_MIN (1 << 21)

/* The pieces of a batch's columns for pieces of `bytes` of columns: parts of one sample
   (`width` columns, a multiple of the tile width 32, the last part shorter) when a sample has
   more columns than that, else runs of `per` whole samples. */
typedef struct {
    int64_t len, width, parts, per, count, widest;
} ek_pieces;

static void ek_pieces_of(const ek_geom *g, int64_t rows, int64_t bytes, ek_pieces *p) {
    int64_t want = bytes / (rows * (int64_t)sizeof(float));
    /* (deep layers: the weights are read once per piece, and a piece fills the 32-column
       tiles better: 512 channels on 7x7 images, 5 samples (245 columns, 256 computed) took
       23 ms where 2 (98 columns, 128 computed) took 28) */
    want = want < 256 ? 256 : want;
    p->len = ek_len(g);
    if (p->len > want) {
        p->width = want < 32 ? 32 : want / 32 * 32;
        p->parts = (p->len + p->width - 1) / p->width;
        p->per = 0;
        p->count = g->n * p->parts;
        p->widest = p->width;
    } else {
        p->width = p->parts = 0;
        p->per = want / p->len;
        p->count = (g->n + p->per - 1) / p->per;
        p->widest = p->per * p->len;
    }
}

static void ek_piece(const ek_pieces *p, const ek_geom *g, int64_t i, int64_t *j0,
                     int64_t *cnt) {
    if (p->parts) {
        const int64_t s = i / p->parts, a = i % p->parts * p->width;
        *j0 = s * p->len + a;
        *cnt = p->len - a < p->width ? p->len - a : p->width;
    } else {
        const int64_t s = i * p->per, e = s + p->per < g->n ? s + p->per : g->n;
        *j0 = s * p->len;
        *cnt = (e - s) * p->len;
    }
}

/* Piece i of conv_forward: its columns, then per group one GEMM into y (through tmp when the
   piece holds whole samples). */
static void conv_piece_f32(const float *x, const float *ap, int64_t panel, float *y,
                           const ek_geom *g, int64_t og, const ek_pieces *pc,
                           const int32_t *tab, int64_t i, float *cols, float *tmp) {
    const int64_t groups = g->groups, ck = ek_ck(g), rows = groups * ck, len = ek_len(g);
    int64_t j0, cnt;
    ek_piece(pc, g, i, &j0, &cnt);
    if (tab) im2col_table_part_f32(x, cols, g, tab, j0, cnt, 0, rows);
    else im2col_part_f32(x, cols, g, j0, cnt, 0, rows);
    const int64_t n0 = j0 / len, l0 = j0 % len;
    for (int64_t gi = 0; gi < groups; gi++) {
        const float *b = cols + gi * ck * cnt;
        if (l0 + cnt <= len) {
            ek_sgemm_packed(og, cnt, ck, ap + gi * panel, b, cnt, NULL,
                            y + (n0 * groups + gi) * og * len + l0, len, 0);
            continue;
        }
        ek_sgemm_packed(og, cnt, ck, ap + gi * panel, b, cnt, NULL, tmp, cnt, 0);
        for (int64_t s = 0; s < cnt / len; s++)
            for (int64_t o = 0; o < og; o++)
                memcpy(y + ((n0 + s) * groups + gi) * og * len + o * len,
                       tmp + o * cnt + s * len, (size_t)len * sizeof(float));
    }
}

/* Unit strides: no columns at all. The GEMM reads the (padded) input in place: with the
   sample padded to P0 x P1 x P2, kernel tap r = (c, k0, k1, k2) of output position
   (o0, o1, o2) is the padded input at off[r] + p, p = (o0 * P1 + o1) * P2 + o2. So B's row r
   is the padded sample from off[r] on, and the GEMM runs over the grid positions p, the
   outputs of each grid row past out2 (and rows past out1) being computed and dropped. Each
   output is the same chain over the same values as through im2col: the same bits. */
typedef struct {
    int64_t pad[3], lo[3], plane, grid, width;   /* padded sizes, front padding, grid, piece */
    int padded;
} ek_direct;

/* Whether the unit-stride path applies, and its sizes (pieces of `width` grid positions). */
static int ek_direct_of(const ek_geom *g, int64_t og, int64_t piece_bytes, ek_direct *dv) {
    dv->padded = 0;
    if (og * ek_ck(g) * (int64_t)sizeof(float) > EK_CONV_CACHED_WEIGHTS) return 0;
    for (int i = 0; i < 3; i++) {
        if (g->s[i] != 1) return 0;
        dv->pad[i] = g->out[i] + g->d[i] * (g->k[i] - 1);
        dv->lo[i] = g->p[i];
        const int64_t hi = dv->pad[i] - g->in[i] - g->p[i];
        if (hi < 0 || g->out[i] < 1) return 0;
        dv->padded |= g->p[i] > 0 || hi > 0;
    }
    dv->plane = dv->pad[0] * dv->pad[1] * dv->pad[2];
    dv->grid = ((g->out[0] - 1) * dv->pad[1] + g->out[1] - 1) * dv->pad[2] + g->out[2];
    if (dv->grid < 64) return 0;
    if (getenv("NODIRECT") && (dv->grid + 31) / 32 * 32 * 4 > 5 * ek_len(g)) return 0;
    int64_t width = piece_bytes / (og * (int64_t)sizeof(float)) / 32 * 32;
    dv->width = width < 32 ? 32 : width;
    return 1;
}

/* Where each kernel tap (c, k0, k1, k2) of a group reads, from the sample's group start at
   grid position 0 (malloc'd; NULL when memory is short). */
static int64_t *ek_direct_offsets(const ek_geom *g, const ek_direct *dv) {
    const int64_t ck = ek_ck(g), kk = ek_kvol(g), plane = dv->plane;   /* (= x's unpadded) */
    int64_t *off = malloc((size_t)ck * sizeof(int64_t));
    for (int64_t r = 0; off && r < ck; r++) {
        const int64_t c = r / kk, k = r % kk;
        const int64_t k0 = k / (g->k[1] * g->k[2]), k1 = k / g->k[2] % g->k[1], k2 = k % g->k[2];
        off[r] = c * plane + (k0 * g->d[0] * dv->pad[1] + k1 * g->d[1]) * dv->pad[2] +
                 k2 * g->d[2];
    }
    return off;
}

/* Sample n of x (C planes) padded with zeros into xp (C padded planes). */
static void pad_sample_f32(const float *x, float *xp, const ek_geom *g, const ek_direct *dv,
                           int64_t n) {
    const int64_t in_plane = g->in[0] * g->in[1] * g->in[2];
    for (int64_t c = 0; c < g->c; c++) {
        const float *src = x + (n * g->c + c) * in_plane;
        for (int64_t i0 = 0; i0 < dv->pad[0]; i0++)
            for (int64_t i1 = 0; i1 < dv->pad[1]; i1++) {
                float *row = xp + ((c * dv->pad[0] + i0) * dv->pad[1] + i1) * dv->pad[2];
                const int64_t a0 = i0 - dv->lo[0], a1 = i1 - dv->lo[1];
                memset(row, 0, (size_t)dv->pad[2] * sizeof(float));
                if (a0 >= 0 && a0 < g->in[0] && a1 >= 0 && a1 < g->in[1])
                    memcpy(row + dv->lo[2], src + (a0 * g->in[1] + a1) * g->in[2],
                           (size_t)g->in[2] * sizeof(float));
            }
    }
}

/* Piece i (sample n, grid positions [p0, p0 + width)) of the unit-stride forward: per group
   one GEMM into tmp, then each grid row's valid outputs to y. `img` is the padded sample. */
static void conv_direct_piece_f32(const float *img, const float *ap, int64_t panel,
                                  const int64_t *off, float *y, const ek_geom *g, int64_t og,
                                  const ek_direct *dv, int64_t n, int64_t p0, float *tmp) {
    const int64_t groups = g->groups, cg = g->c / groups, ck = ek_ck(g), len = ek_len(g);
    const int64_t cnt = dv->grid - p0 < dv->width ? dv->grid - p0 : dv->width;
    const int64_t p2 = dv->pad[2];
    for (int64_t gi = 0; gi < groups; gi++) {
        ek_sgemm_packed(og, cnt, ck, ap + gi * panel, img + gi * cg * dv->plane + p0, 0, off,
                        tmp, cnt, 0);
        float *yg = y + (n * groups + gi) * og * len;
        for (int64_t r = p0 / p2; r * p2 < p0 + cnt; r++) {
            const int64_t o0 = r / dv->pad[1], o1 = r % dv->pad[1];
            if (o1 >= g->out[1]) continue;
            const int64_t a = r * p2 > p0 ? r * p2 : p0;
            const int64_t b = r * p2 + g->out[2] < p0 + cnt ? r * p2 + g->out[2] : p0 + cnt;
            if (a >= b) continue;
            const int64_t at = (o0 * g->out[1] + o1) * g->out[2] + (a - r * p2);
            for (int64_t o = 0; o < og; o++)
                memcpy(yg + o * len + at, tmp + o * cnt + (a - p0),
                       (size_t)(b - a) * sizeof(float));
        }
    }
}

/* The unit-stride forward; 0, or -1 when memory is short. */
static int conv_direct_f32(const float *x, const float *ap, int64_t panel, float *y,
                           const ek_geom *g, int64_t og, const ek_direct *dv) {
    const int64_t ck = ek_ck(g), in_plane = g->in[0] * g->in[1] * g->in[2];
    int64_t *off = ek_direct_offsets(g, dv);
    if (!off) return -1;
    const int64_t per = (dv->grid + dv->width - 1) / dv->width, count = g->n * per;
    const int parts = 2 * og * g->groups * ck * g->n * ek_len(g) >= EK_CONV_PARALLEL_MIN &&
                      count > 1 ? ek_num_threads() : 1;
    int failed = 0;
#pragma omp parallel num_threads(parts) if (parts > 1) reduction(| : failed)
    {
        float *tmp = malloc((size_t)(og * dv->width) * sizeof(float));
        float *xp = dv->padded ? malloc((size_t)(g->c * dv->plane) * sizeof(float)) : NULL;
        const int short_of_memory = !tmp || (dv->padded && !xp);
        int64_t held = -1;   /* the sample xp holds */
        failed |= short_of_memory;
#pragma omp for schedule(dynamic, per)   /* (whole samples: see conv_forward) */
        for (int64_t i = 0; i < count; i++) {
            if (short_of_memory) continue;
            const int64_t n = i / per;
            if (dv->padded && held != n) {
                pad_sample_f32(x, xp, g, dv, n);
                held = n;
            }
            conv_direct_piece_f32(dv->padded ? xp : x + n * g->c * in_plane, ap, panel, off,
                                  y, g, og, dv, n, i % per * dv->width, tmp);
        }
        free(xp);
        free(tmp);
    }
    free(off);
    return failed ? -1 : 0;
}

#include "conv_classes.h"   /* small padded images: the padding's products skipped */

/* y (N, G, og, L) = W (G, og, Cg*K) times the columns; 0, or -1 when memory is short. */
static int conv_forward_f32(const float *x, const float *w, float *y, const ek_geom *g,
                            int64_t og, int64_t piece_bytes) {
    const int64_t groups = g->groups, ck = ek_ck(g), rows = groups * ck, len = ek_len(g);
    const int64_t mr = ek_sgemm_mr(), panel = (og + mr - 1) / mr * mr * ck;
    ek_pieces pc;
    ek_pieces_of(g, rows, piece_bytes, &pc);
    float *ap = malloc((size_t)(groups * panel) * sizeof(float));
    int32_t *tab = ek_short_rows(g) ? ek_gather_table(g) : NULL;
    int failed = !ap;
    for (int64_t gi = 0; !failed && gi < groups; gi++)
        ek_sgemm_pack_a(w + gi * og * ck, ck, 1, og, ck, ap + gi * panel);
    const int parts = 2 * og * rows * g->n * len >= EK_CONV_PARALLEL_MIN && pc.count > 1
                          ? ek_num_threads() : 1;
    ek_direct dv;
    if (!failed && ek_direct_of(g, og, piece_bytes, &dv)) {
        failed = conv_direct_f32(x, ap, panel, y, g, og, &dv) < 0;
    } else if (!failed) {
#pragma omp parallel num_threads(parts) if (parts > 1) reduction(| : failed)
        {
            float *cols = malloc((size_t)(rows * pc.widest) * sizeof(float));
            float *tmp = pc.per > 1 ? malloc((size_t)(og * pc.widest) * sizeof(float)) : NULL;
            const int short_of_memory = !cols || (pc.per > 1 && !tmp);
            failed |= short_of_memory;
#pragma omp for schedule(dynamic)
            for (int64_t i = 0; i < pc.count; i++)
                if (!short_of_memory)
                    conv_piece_f32(x, ap, panel, y, g, og, &pc, tab, i, cols, tmp);
            free(tmp);
            free(cols);
        }
    }
    free(tab);
    free(ap);
    return failed ? -1 : 0;
}

/* conv_weight: gw (G, og, Cg*K) = the sum over the batch's positions of gy (N, G, og, L)
   times im2col(x). The batch's samples are split into at most WEIGHT_PARTS runs, fixed by the
   shapes alone: each run's sum is one partial (its pieces' products added in order), threads
   take whole runs, and the partials are added in order at the end, so the bits do not depend
   on the thread count. */
#define WEIGHT_PARTS 8
/* Floats of partials the runs may hold; with larger weights the runs are fewer. */
#define WEIGHT_PARTIAL_MAX (1 << 24)

/* Samples [s0, s1)'s share of gw into part (zeroed first). */
static void conv_weight_run_f32(const float *x, const float *gy, float *part, const ek_geom *g,
                                int64_t og, const ek_pieces *pc, const int32_t *tab,
                                int64_t s0, int64_t s1, float *cols, float *gyb) {
    const int64_t groups = g->groups, ck = ek_ck(g), rows = groups * ck, len = ek_len(g);
    memset(part, 0, (size_t)(groups * og * ck) * sizeof(float));
    const int64_t step = pc->parts ? 1 : pc->per;
    for (int64_t s = s0; s < s1; s += step) {
        const int64_t pieces = pc->parts ? pc->parts : 1;
        for (int64_t q = 0; q < pieces; q++) {
            int64_t j0, cnt;
            if (pc->parts) {
                ek_piece(pc, g, s * pc->parts + q, &j0, &cnt);
            } else {
                j0 = s * len;
                cnt = ((s + step < s1 ? s + step : s1) - s) * len;
            }
            if (tab) im2col_table_part_f32(x, cols, g, tab, j0, cnt, 0, rows);
            else im2col_part_f32(x, cols, g, j0, cnt, 0, rows);
            const int64_t l0 = j0 % len, samples = cnt / len;
            for (int64_t gi = 0; gi < groups; gi++) {
                const float *a = gy + (s * groups + gi) * og * len + l0;
                int64_t lda = len;
                if (!pc->parts && samples > 1) {   /* the piece's gradient rows, gathered */
                    for (int64_t o = 0; o < og; o++)
                        for (int64_t t = 0; t < samples; t++)
                            memcpy(gyb + o * cnt + t * len,
                                   gy + ((s + t) * groups + gi) * og * len + o * len,
                                   (size_t)len * sizeof(float));
                    a = gyb;
                    lda = cnt;
                }
                /* the piece's columns as runs of 16 (the kernels' inner loop runs over
                   runs), then the rest */
                const float *b = cols + gi * ck * cnt;
                const int64_t whole = cnt / 16 * 16;
                float *pg = part + gi * og * ck;
                ek_sgemm_nt_add(og, ck, cnt / 16, 16, a, lda, 16, b, cnt, NULL, 16, pg, ck);
                ek_sgemm_nt_add(og, ck, 1, cnt - whole, a + whole, lda, 0, b + whole, cnt, NULL,
                                0, pg, ck);
            }
        }
    }
}

/* Samples [s0, s1)'s share of gw into part (zeroed first), unit strides: no columns. Each
   output row of gy meets the input row its taps read, as runs of out2 products (see
   ek_sgemm_nt_add), so only valid positions are read. */
static void conv_weight_direct_run_f32(const float *x, const float *gy, float *part,
                                       const ek_geom *g, int64_t og, const ek_direct *dv,
                                       const int64_t *off, int64_t s0, int64_t s1, float *xp) {
    const int64_t groups = g->groups, cg = g->c / groups, ck = ek_ck(g), len = ek_len(g);
    const int64_t rows = g->out[1], seg = g->out[2], p2 = dv->pad[2];
    memset(part, 0, (size_t)(groups * og * ck) * sizeof(float));
    for (int64_t n = s0; n < s1; n++) {
        const float *img = x + n * g->c * dv->plane;
        if (dv->padded) {
            pad_sample_f32(x, xp, g, dv, n);
            img = xp;
        }
        for (int64_t gi = 0; gi < groups; gi++)
            for (int64_t o0 = 0; o0 < g->out[0]; o0++)
                ek_sgemm_nt_add(og, ck, rows, seg, gy + (n * groups + gi) * og * len +
                                o0 * rows * seg, len, seg,
                                img + gi * cg * dv->plane + o0 * dv->pad[1] * p2, 0, off, p2,
                                part + gi * og * ck, ck);
    }
}

/* 0, or -1 when memory is short. */
static int conv_weight_f32(const float *x, const float *gy, float *gw, const ek_geom *g,
                           int64_t og, int64_t piece_bytes) {
    const int64_t groups = g->groups, ck = ek_ck(g), rows = groups * ck, size = groups * og * ck;
    ek_pieces pc;
    ek_pieces_of(g, rows, piece_bytes, &pc);
    int64_t runs = g->n < WEIGHT_PARTS ? g->n : WEIGHT_PARTS;
    if (runs * size > WEIGHT_PARTIAL_MAX)
        runs = WEIGHT_PARTIAL_MAX / size > 1 ? WEIGHT_PARTIAL_MAX / size : 1;
    float *parts_buf = runs > 1 ? malloc((size_t)(runs * size) * sizeof(float)) : gw;
    int32_t *tab = ek_short_rows(g) ? ek_gather_table(g) : NULL;
    int failed = !parts_buf;
    const int parts = 2 * og * rows * g->n * ek_len(g) >= EK_CONV_PARALLEL_MIN && runs > 1
                          ? ek_num_threads() : 1;
    ek_direct dv;
    int64_t *off = NULL;
    /* (output rows under 16 wide would leave lanes idle in every run: columns then) */
    if (!failed && g->out[2] >= 16 && ek_direct_of(g, og, piece_bytes, &dv)) {
        off = ek_direct_offsets(g, &dv);
        failed = !off;
    }
    if (!failed && off) {
#pragma omp parallel num_threads(parts) if (parts > 1) reduction(| : failed)
        {
            float *xp = dv.padded ? malloc((size_t)(g->c * dv.plane) * sizeof(float)) : NULL;
            const int short_of_memory = dv.padded && !xp;
            failed |= short_of_memory;
#pragma omp for schedule(dynamic)
            for (int64_t r = 0; r < runs; r++)
                if (!short_of_memory)
                    conv_weight_direct_run_f32(x, gy, parts_buf + r * size, g, og, &dv, off,
                                               g->n * r / runs, g->n * (r + 1) / runs, xp);
            free(xp);
        }
    } else if (!failed) {
#pragma omp parallel num_threads(parts) if (parts > 1) reduction(| : failed)
        {
            float *cols = malloc((size_t)(rows * pc.widest) * sizeof(float));
            float *gyb = pc.per > 1 ? malloc((size_t)(og * pc.widest) * sizeof(float)) : NULL;
            const int short_of_memory = !cols || (pc.per > 1 && !gyb);
            failed |= short_of_memory;
#pragma omp for schedule(dynamic)
            for (int64_t r = 0; r < runs; r++)
                if (!short_of_memory)
                    conv_weight_run_f32(x, gy, parts_buf + r * size, g, og, &pc, tab,
                                        g->n * r / runs, g->n * (r + 1) / runs, cols, gyb);
            free(gyb);
            free(cols);
        }
    }
    if (!failed && runs > 1) {
        memcpy(gw, parts_buf, (size_t)size * sizeof(float));
        for (int64_t r = 1; r < runs; r++)
            for (int64_t i = 0; i < size; i++) gw[i] += parts_buf[r * size + i];
    }
    if (runs > 1) free(parts_buf);
    free(off);
    free(tab);
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ Python wrappers */
static void release_all(Py_buffer *views, int count) {
    for (int k = 0; k < count; k++)
        if (views[k].obj) PyBuffer_Release(&views[k]);
}

/* objs[k] as float buffers of one kind, spec[k] 'r' (read) or 'w' (written); 0, or -1 with
   an exception set and nothing held */
static int float_args(PyObject **objs, Py_buffer *views, const char *spec, char *kind) {
    *kind = 0;
    for (int k = 0; spec[k]; k++) {
        char kk;
        if (ek_float_buffer(objs[k], &views[k], &kk, spec[k] == 'w') < 0) {
            release_all(views, k);
            return -1;
        }
        if (*kind && kk != *kind) {
            release_all(views, k + 1);
            PyErr_SetString(PyExc_TypeError, "the arrays must have one float dtype");
            return -1;
        }
        *kind = kk;
    }
    return 0;
}

/* 0 when `view` holds `count` elements, else -1 with a ValueError naming `what` */
static int check_size(const Py_buffer *view, int64_t count, const char *what) {
    if (view->len == count * view->itemsize) return 0;
    PyErr_Format(PyExc_ValueError, "%s: expected %lld elements, got %lld", what,
                 (long long)count, (long long)(view->len / view->itemsize));
    return -1;
}

/* geometry: (N, C, D, H, W, kD, kH, kW, sD, sH, sW, pD, pH, pW, dD, dH, dW, oD, oH, oW, G) */
static int parse_geom(PyObject *t, ek_geom *g) {
    if (!PyArg_ParseTuple(t, "nnnnnnnnnnnnnnnnnnnnn;geometry: a tuple of 21 ints", &g->n,
                          &g->c, &g->in[0], &g->in[1], &g->in[2], &g->k[0], &g->k[1],
                          &g->k[2], &g->s[0], &g->s[1], &g->s[2], &g->p[0], &g->p[1], &g->p[2],
                          &g->d[0], &g->d[1], &g->d[2], &g->out[0], &g->out[1], &g->out[2],
                          &g->groups))
        return -1;
    int ok = g->n >= 0 && g->c > 0 && g->groups > 0 && g->c % g->groups == 0;
    for (int i = 0; i < 3; i++)
        ok = ok && g->in[i] > 0 && g->k[i] > 0 && g->s[i] > 0 && g->d[i] > 0 &&
             g->p[i] >= 0 && g->out[i] >= 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "invalid window geometry");
        return -1;
    }
    return 0;
}

static int64_t in_size(const ek_geom *g) { return g->n * g->c * g->in[0] * g->in[1] * g->in[2]; }

/* im2col(x, cols, geometry, j0, cnt) and col2im(cols, x, ...): x += cols' adjoint */
static PyObject *columns_call(PyObject *args, int adjoint) {
    PyObject *objs[2], *geom;
    Py_ssize_t j0, cnt;
    if (!PyArg_ParseTuple(args, "OOOnn", &objs[0], &objs[1], &geom, &j0, &cnt)) return NULL;
    ek_geom g;
    if (parse_geom(geom, &g) < 0) return NULL;
    if (j0 < 0 || cnt < 0 || j0 + cnt > g.n * ek_len(&g)) {
        PyErr_SetString(PyExc_ValueError, "columns out of range");
        return NULL;
    }
    Py_buffer v[2];
    char kind;
    if (float_args(objs, v, "rw", &kind) < 0) return NULL;
    const int x_at = adjoint ? 1 : 0;
    if (check_size(&v[x_at], in_size(&g), "input") < 0 ||
        check_size(&v[1 - x_at], g.groups * ek_ck(&g) * cnt, "columns") < 0) {
        release_all(v, 2);
        return NULL;
    }
    if (adjoint && kind == 'f') col2im_f32(v[0].buf, v[1].buf, &g, j0, cnt);
    else if (adjoint) col2im_f64(v[0].buf, v[1].buf, &g, j0, cnt);
    else if (kind == 'f') im2col_f32(v[0].buf, v[1].buf, &g, j0, cnt);
    else im2col_f64(v[0].buf, v[1].buf, &g, j0, cnt);
    release_all(v, 2);
    Py_RETURN_NONE;
}

static PyObject *py_im2col(PyObject *self, PyObject *args) { return columns_call(args, 0); }
static PyObject *py_col2im(PyObject *self, PyObject *args) { return columns_call(args, 1); }

/* An int64 buffer of `count` elements (writable when asked), or None when allowed. */
static int index_buffer(PyObject *obj, Py_buffer *view, int64_t count, int writable) {
    view->obj = NULL;
    view->buf = NULL;
    if (obj == Py_None) return 0;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (view->itemsize != 8 || !strchr("lqLQ", f[0]) || f[1] != '\0' ||
        view->len != count * 8) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_SetString(PyExc_ValueError, "indices: expected an int64 array of the output size");
        return -1;
    }
    return 0;
}

/* Threads split the planes. */
static int plane_parts(const ek_geom *g, int64_t planes) {
    return planes * ek_len(g) * ek_kvol(g) >= EK_POOL_PARALLEL_MIN ? ek_num_threads() : 1;
}

/* max_pool(x, values, indices or None, geometry) */
static PyObject *py_max_pool(PyObject *self, PyObject *args) {
    PyObject *objs[2], *iobj, *geom;
    if (!PyArg_ParseTuple(args, "OOOO", &objs[0], &objs[1], &iobj, &geom)) return NULL;
    ek_geom g;
    if (parse_geom(geom, &g) < 0) return NULL;
    const int64_t planes = g.n * g.c, outs = planes * ek_len(&g);
    Py_buffer v[2], iv;
    char kind;
    if (float_args(objs, v, "rw", &kind) < 0) return NULL;
    if (check_size(&v[0], in_size(&g), "input") < 0 ||
        check_size(&v[1], outs, "values") < 0 || index_buffer(iobj, &iv, outs, 1) < 0) {
        release_all(v, 2);
        return NULL;
    }
    const int parts = plane_parts(&g, planes);
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        const int64_t pb = planes * t / parts, pe = planes * (t + 1) / parts;
        if (kind == 'f') max_pool_planes_f32(v[0].buf, v[1].buf, iv.buf, &g, pb, pe);
        else max_pool_planes_f64(v[0].buf, v[1].buf, iv.buf, &g, pb, pe);
    }
    if (iv.obj) PyBuffer_Release(&iv);
    release_all(v, 2);
    Py_RETURN_NONE;
}

/* max_pool_backward(g, indices, gx, planes): gx (planes, plane) = the scatter-add of g
   (planes, outs) at the indices within each plane */
static PyObject *py_max_pool_backward(PyObject *self, PyObject *args) {
    PyObject *objs[2], *iobj;
    Py_ssize_t planes;
    if (!PyArg_ParseTuple(args, "OOOn", &objs[0], &iobj, &objs[1], &planes)) return NULL;
    Py_buffer v[2], iv;
    char kind;
    if (float_args(objs, v, "rw", &kind) < 0) return NULL;
    const int64_t outs = planes > 0 ? v[0].len / v[0].itemsize / planes : 0;
    const int64_t plane = planes > 0 ? v[1].len / v[1].itemsize / planes : 0;
    if (planes <= 0 || outs * planes * v[0].itemsize != v[0].len ||
        plane * planes * v[1].itemsize != v[1].len) {
        release_all(v, 2);
        PyErr_SetString(PyExc_ValueError, "max_pool_backward: sizes are not whole planes");
        return NULL;
    }
    if (index_buffer(iobj, &iv, outs * planes, 0) < 0 || !iv.obj) {
        if (!iv.obj && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "max_pool_backward: indices are required");
        release_all(v, 2);
        return NULL;
    }
    const int parts = outs * planes >= EK_POOL_PARALLEL_MIN ? ek_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        const int64_t pb = planes * t / parts, pe = planes * (t + 1) / parts;
        if (kind == 'f') max_pool_backward_planes_f32(v[0].buf, iv.buf, v[1].buf, plane, outs,
                                                      pb, pe);
        else max_pool_backward_planes_f64(v[0].buf, iv.buf, v[1].buf, plane, outs, pb, pe);
    }
    PyBuffer_Release(&iv);
    release_all(v, 2);
    Py_RETURN_NONE;
}

/* avg_pool(x, y, divisor, geometry) and avg_pool_backward(gy, gx, divisor, geometry); the
   divisor holds one value per output position of a plane */
static PyObject *avg_pool_call(PyObject *args, int backward) {
    PyObject *objs[3], *geom;
    if (!PyArg_ParseTuple(args, "OOOO", &objs[0], &objs[1], &objs[2], &geom)) return NULL;
    ek_geom g;
    if (parse_geom(geom, &g) < 0) return NULL;
    const int64_t planes = g.n * g.c;
    PyObject *ordered[3] = {objs[0], objs[2], objs[1]};   /* read, read, written */
    Py_buffer v[3];
    char kind;
    if (float_args(ordered, v, "rrw", &kind) < 0) return NULL;
    const int64_t sizes[2] = {in_size(&g), planes * ek_len(&g)};
    if (check_size(&v[0], sizes[backward], "source") < 0 ||
        check_size(&v[2], sizes[!backward], "result") < 0 ||
        check_size(&v[1], ek_len(&g), "divisor") < 0) {
        release_all(v, 3);
        return NULL;
    }
    const int parts = plane_parts(&g, planes);
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        const int64_t pb = planes * t / parts, pe = planes * (t + 1) / parts;
        if (backward && kind == 'f')
            avg_pool_backward_planes_f32(v[0].buf, v[2].buf, v[1].buf, &g, pb, pe);
        else if (backward)
            avg_pool_backward_planes_f64(v[0].buf, v[2].buf, v[1].buf, &g, pb, pe);
        else if (kind == 'f') avg_pool_planes_f32(v[0].buf, v[2].buf, v[1].buf, &g, pb, pe);
        else avg_pool_planes_f64(v[0].buf, v[2].buf, v[1].buf, &g, pb, pe);
    }
    release_all(v, 3);
    Py_RETURN_NONE;
}

static PyObject *py_avg_pool(PyObject *self, PyObject *args) { return avg_pool_call(args, 0); }
static PyObject *py_avg_pool_backward(PyObject *self, PyObject *args) {
    return avg_pool_call(args, 1);
}

/* conv_forward(x, w, y, geometry, piece_bytes): y = the convolution of float32 x with w (no
   bias). conv_weight(x, gy, gw, geometry, piece_bytes): gw = the weight gradient of that
   convolution for the output gradient gy. conv_input(gy, w, gx, geometry, piece_bytes): gx =
   the convolution of gy with w's kernel flipped and its channels swapped, w read in place
   (the unit-stride input gradient of the convolution with weights w; geometry: that
   flipped convolution's), only where conv_classes.h's path applies. Each says False when
   this CPU has no GEMM kernel or BLAS is faster at these shapes (conv_forward_pays,
   EK_CONV_FEW_CHANNELS): the caller then runs its BLAS path. `weight`: 0 conv_forward, 1
   conv_weight, 2 conv_input. */
static PyObject *conv_call(PyObject *args, int weight) {
    const int flipped = weight == 2;
    if (flipped) weight = 0;
    PyObject *objs[3], *geom;
    Py_ssize_t piece_bytes;
    if (!PyArg_ParseTuple(args, "OOOOn", &objs[0], &objs[1], &objs[2], &geom, &piece_bytes))
        return NULL;
    ek_geom g;
    if (parse_geom(geom, &g) < 0) return NULL;
    if (!ek_sgemm_mr()) Py_RETURN_FALSE;
    Py_buffer v[3];
    char kind;
    if (float_args(objs, v, "rrw", &kind) < 0) return NULL;
    /* the weight (or its gradient) is objs[1] (objs[2]); the output (gradient) the other */
    const int w_at = weight ? 2 : 1, y_at = weight ? 1 : 2;
    const int64_t ck = ek_ck(&g), og = v[w_at].len / v[w_at].itemsize / (g.groups * ck);
    if (kind != 'f' || og < 1 || check_size(&v[0], in_size(&g), "input") < 0 ||
        check_size(&v[w_at], g.groups * og * ck, "weight") < 0 ||
        check_size(&v[y_at], g.n * g.groups * og * ek_len(&g), "output") < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "conv kernels: float32 arrays and a weight");
        release_all(v, 3);
        return NULL;
    }
    /* small padded images: the padding's products skipped (conv_classes.h), where no
       infinity or NaN would meet the padding's zeros */
    ek_classes cl;
    const int classes =
        ek_classes_of(&g, og, piece_bytes, &cl) &&
        (weight ? og > EK_CONV_FEW_CHANNELS && ek_classes_weight_fits(&g, &cl) &&
                      all_finite_f32(v[1].buf, g.n * g.groups * og * ek_len(&g))
                : all_finite_f32(v[1].buf, g.groups * og * ck));
    const int blas_faster = weight ? og > EK_CONV_FEW_CHANNELS : !conv_forward_pays(&g, og);
    if (!classes && (flipped || blas_faster)) {
        release_all(v, 3);
        Py_RETURN_FALSE;
    }
    const float *x = v[0].buf, *wy = v[1].buf;   /* (the weight, or the output gradient) */
    float *out = v[2].buf;
    int rc;
    if (weight && classes) rc = conv_weight_classes_f32(x, wy, out, &g, og, &cl);
    else if (weight) rc = conv_weight_f32(x, wy, out, &g, og, piece_bytes);
    else if (classes) rc = conv_classes_f32(x, wy, out, &g, og, &cl, flipped);
    else rc = conv_forward_f32(x, wy, out, &g, og, piece_bytes);
    release_all(v, 3);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_TRUE;
}

static PyObject *py_conv_forward(PyObject *self, PyObject *args) { return conv_call(args, 0); }
static PyObject *py_conv_weight(PyObject *self, PyObject *args) { return conv_call(args, 1); }
static PyObject *py_conv_input(PyObject *self, PyObject *args) { return conv_call(args, 2); }

PyMethodDef ek_conv_methods[] = {
    {"im2col", py_im2col, METH_VARARGS,
     "im2col(x, cols, geometry, j0, cnt): the columns j0..j0+cnt of x into cols"},
    {"col2im", py_col2im, METH_VARARGS,
     "col2im(cols, x, geometry, j0, cnt): x += the adjoint of those columns"},
    {"conv_forward", py_conv_forward, METH_VARARGS,
     "conv_forward(x, w, y, geometry, piece_bytes): y = the float32 convolution (False: BLAS "
     "instead)"},
    {"conv_weight", py_conv_weight, METH_VARARGS,
     "conv_weight(x, gy, gw, geometry, piece_bytes): gw = the float32 weight gradient "
     "(False: BLAS instead)"},
    {"conv_input", py_conv_input, METH_VARARGS,
     "conv_input(gy, w, gx, geometry, piece_bytes): gx = the float32 convolution of gy with w's "
     "kernel flipped and its in/out channels swapped, read in place (the unit-stride input "
     "gradient); only on small padded images (False: elsewhere)"},
    {"max_pool", py_max_pool, METH_VARARGS,
     "max_pool(x, values, indices or None, geometry): PyTorch's max pooling per plane"},
    {"max_pool_backward", py_max_pool_backward, METH_VARARGS,
     "max_pool_backward(g, indices, gx, planes): gx = g scattered at the indices"},
    {"avg_pool", py_avg_pool, METH_VARARGS,
     "avg_pool(x, y, divisor, geometry): window sums over the clipped windows / divisor"},
    {"avg_pool_backward", py_avg_pool_backward, METH_VARARGS,
     "avg_pool_backward(gy, gx, divisor, geometry): gx = the adjoint of avg_pool"},
    {NULL, NULL, 0, NULL}};
