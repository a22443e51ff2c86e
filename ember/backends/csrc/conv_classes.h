/* The float32 convolution of small padded images without the padding's products, included
   by conv.c (after ek_geom, the column helpers and the GEMM's header).

   On ResNet's last layers (8x8 down to 1x1 images, 3x3 windows, padding 1) 16% to 89% of the
   products of im2col's columns multiply a zero of the padding. Here the output positions are
   grouped into classes by the kernel taps that land inside the input: along each spatial dim
   an output reads the taps [a, b), and a class is one such range per dim (a 4x4 image has
   3 x 3 classes: corners, edges, inside). Each class is one GEMM of the weights' columns for
   its taps against columns of only those taps, whose cells all lie inside the input. The
   weights are read in place through a table of the class's taps (gemm.h's ek_sgemm_subset),
   as they are or flipped (the unit-stride input gradient, conv.c's conv_input); the weight
   gradient with many output channels takes the same classes (below).

   Bits: an output's chain over its taps (c, k0, k1, k2) in order loses only the terms whose
   input is padding, 0 times a weight. With finite weights (the caller checks) such a term
   adds exactly 0 to a chain that started at +0 (a chain from +0 never holds -0), so every
   output keeps the bits of the chain over all taps; each output is one chain on one thread,
   so the thread count changes no bit either. */

#define EK_CLASS_OUT_MAX 64   /* outputs per dim */
#define EK_CLASSES_MAX 64     /* classes in all */

typedef struct {
    int64_t count;                                    /* classes along this dim */
    int64_t a[EK_CLASS_OUT_MAX], b[EK_CLASS_OUT_MAX];   /* class t reads taps [a, b) */
    int64_t start[EK_CLASS_OUT_MAX + 1];              /* its outputs: order[start[t]...] */
    int64_t order[EK_CLASS_OUT_MAX];
} ek_dim_classes;

typedef struct {
    ek_dim_classes dim[3];
    int64_t count;                        /* classes: the product of the dims' */
    int64_t taps[EK_CLASSES_MAX];         /* class t's taps per channel */
    int64_t outs[EK_CLASSES_MAX];         /* its output positions per sample */
    int64_t per[EK_CLASSES_MAX];          /* samples per piece */
    int64_t first[EK_CLASSES_MAX + 1];    /* its first piece (pieces of all classes in turn) */
    int64_t tap0[EK_CLASSES_MAX];         /* its taps: from taps[tap0[t]] (class_taps) */
    int64_t rows_max, cols_max, rows_all;
} ek_classes;

static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }   /* b > 0 */

/* The classes of the outputs along dim i: in order of their first output, each class's
   outputs ascending. */
static void dim_classes_of(const ek_geom *g, int i, ek_dim_classes *dc) {
    int64_t cls[EK_CLASS_OUT_MAX];
    dc->count = 0;
    for (int64_t o = 0; o < g->out[i]; o++) {
        /* taps k with 0 <= o * s + k * d - p < in */
        const int64_t lead = g->p[i] - o * g->s[i];
        int64_t a = ceil_div(lead, g->d[i]), b = floor_div(g->in[i] - 1 + lead, g->d[i]) + 1;
        a = a < 0 ? 0 : a;
        b = b > g->k[i] ? g->k[i] : b;
        b = b < a ? a : b;
        int64_t t = 0;
        while (t < dc->count && (dc->a[t] != a || dc->b[t] != b)) t++;
        if (t == dc->count) {
            dc->a[t] = a;
            dc->b[t] = b;
            dc->count++;
        }
        cls[o] = t;
    }
    int64_t at = 0;
    for (int64_t t = 0; t < dc->count; t++) {
        dc->start[t] = at;
        for (int64_t o = 0; o < g->out[i]; o++)
            if (cls[o] == t) dc->order[at++] = o;
    }
    dc->start[dc->count] = at;
}

/* Class t's range along each dim (its index split as t = (t0 * n1 + t1) * n2 + t2) */
static void class_dims(const ek_classes *cl, int64_t t, int64_t td[3]) {
    td[2] = t % cl->dim[2].count;
    td[1] = t / cl->dim[2].count % cl->dim[1].count;
    td[0] = t / (cl->dim[2].count * cl->dim[1].count);
}

/* Whether skipping the padding pays for this convolution (over a tenth of the products read
   padding, classes few and small enough), and the classes with their pieces: runs of whole
   samples with about `piece_bytes` of columns. */
static int ek_classes_of(const ek_geom *g, int64_t og, int64_t piece_bytes, ek_classes *cl) {
    if (!(g->p[0] || g->p[1] || g->p[2])) return 0;
    cl->count = 1;
    for (int i = 0; i < 3; i++) {
        if (g->out[i] < 1 || g->out[i] > EK_CLASS_OUT_MAX) return 0;
        dim_classes_of(g, i, &cl->dim[i]);
        cl->count *= cl->dim[i].count;
    }
    if (cl->count > EK_CLASSES_MAX) return 0;
    if (g->n * g->c * g->in[0] * g->in[1] * g->in[2] > INT32_MAX) return 0;   /* (xoff) */
    const int64_t cg = g->c / g->groups;
    int64_t products = 0;
    cl->rows_max = cl->cols_max = cl->rows_all = 0;
    cl->first[0] = 0;
    for (int64_t t = 0; t < cl->count; t++) {
        int64_t td[3];
        class_dims(cl, t, td);
        cl->taps[t] = cl->outs[t] = 1;
        for (int i = 0; i < 3; i++) {
            const ek_dim_classes *dc = &cl->dim[i];
            cl->taps[t] *= dc->b[td[i]] - dc->a[td[i]];
            cl->outs[t] *= dc->start[td[i] + 1] - dc->start[td[i]];
        }
        products += cl->taps[t] * cl->outs[t];
        const int64_t rows = cg * cl->taps[t];
        int64_t per = piece_bytes / ((rows > 0 ? rows : 1) * (int64_t)sizeof(float)) /
                      cl->outs[t];
        per = per < 1 ? 1 : per > g->n ? g->n : per;
        cl->per[t] = per;
        cl->first[t + 1] = cl->first[t] + (g->n + per - 1) / per;
        cl->tap0[t] = cl->rows_all;
        cl->rows_all += rows;
        cl->rows_max = rows > cl->rows_max ? rows : cl->rows_max;
        cl->cols_max = per * cl->outs[t] > cl->cols_max ? per * cl->outs[t] : cl->cols_max;
    }
    /* Skipping pays where it saves much (over 30% of the products: 4x4 images and smaller),
       or a tenth where the weights stay in L2 (the GEMM reads them in place, through the
       tap table; 64 channels on 8x8 images, 16% saved: 10-20% faster). On 7x7 images with
       512 channels (18% saved, 9 MiB of weights) it ran 5-15% slower than the packed paths. */
    const int64_t all = ek_kvol(g) * ek_len(g), saved = all - products;
    const int cached = og * g->groups * cg * ek_kvol(g) * (int64_t)sizeof(float) <= (1 << 20);
    return saved * 10 > 3 * all || (cached && saved * 10 > all);
}

/* Whether every value is finite (the weights, or the output gradient for the weight
   gradient): the padding's 0 times an infinity or a NaN is a NaN, which the skipped products
   must not hide. */
EK_CLONES static int all_finite_f32(const float *v, int64_t count) {
    int bad = 0;
    for (int64_t i = 0; i < count; i++) bad |= !(fabsf(v[i]) <= 3.4028235e38f);
    return !bad;
}

/* Along dim i of class td[i]: its j-th output */
#define CLASS_OUT(i, j) (cl->dim[i].order[cl->dim[i].start[td[i]] + (j)])

/* Class t's taps: where each column (c, k0, k1, k2) of a group's weights, in order, lies
   from the start of the group's output channel 0 (output channel o is lda further, see
   conv_classes_f32): W (og, ck) as it is, or `flipped`: W (C, og, K) of the convolution
   whose unit-stride input gradient this is, read in place, its in/out channels swapped and
   its kernel reversed (tap k here is tap K - 1 - k of W). */
static void class_taps(const ek_geom *g, int64_t og, const ek_classes *cl, int64_t t,
                       int flipped, int64_t *taps) {
    int64_t td[3];
    class_dims(cl, t, td);
    const ek_dim_classes *d = cl->dim;
    const int64_t cg = g->c / g->groups, kk = ek_kvol(g);
    for (int64_t c = 0; c < cg; c++)
        for (int64_t k0 = d[0].a[td[0]]; k0 < d[0].b[td[0]]; k0++)
            for (int64_t k1 = d[1].a[td[1]]; k1 < d[1].b[td[1]]; k1++)
                for (int64_t k2 = d[2].a[td[2]]; k2 < d[2].b[td[2]]; k2++) {
                    const int64_t k = (k0 * g->k[1] + k1) * g->k[2] + k2;
                    *taps++ = flipped ? c * og * kk + kk - 1 - k : c * kk + k;
                }
}

/* Class t's columns for samples [s0, s1): for column j (sample, output position of the
   class, in order) the offset xoff[j] of its window's start (tap 0) from the first sample's
   channel plane (negative in the padding: only taps inside are read from it), and the offset
   yoff[j] of its output from the first sample's output plane. */
static void class_offsets(const ek_geom *g, int64_t og, const ek_classes *cl, int64_t t,
                          int64_t s0, int64_t s1, int32_t *xoff, int64_t *yoff) {
    int64_t td[3];
    class_dims(cl, t, td);
    const ek_dim_classes *d = cl->dim;
    const int64_t hw = g->in[1] * g->in[2], sample = g->c * g->in[0] * hw, len = ek_len(g);
    const int64_t out_sample = g->groups * og * len;
    int64_t j = 0;
    for (int64_t s = 0; s < s1 - s0; s++)
        for (int64_t a = d[0].start[td[0]]; a < d[0].start[td[0] + 1]; a++)
            for (int64_t b = d[1].start[td[1]]; b < d[1].start[td[1] + 1]; b++)
                for (int64_t e = d[2].start[td[2]]; e < d[2].start[td[2] + 1]; e++, j++) {
                    const int64_t o0 = d[0].order[a], o1 = d[1].order[b], o2 = d[2].order[e];
                    xoff[j] = (int32_t)(s * sample + (o0 * g->s[0] - g->p[0]) * hw +
                                        (o1 * g->s[1] - g->p[1]) * g->in[2] +
                                        o2 * g->s[2] - g->p[2]);
                    yoff[j] = s * out_sample + (o0 * g->out[1] + o1) * g->out[2] + o2;
                }
}

/* dst[j] = src[at[j]] (a vector gather where the CPU has one) */
EK_CLONES static void gather_f32(float *restrict dst, const float *restrict src,
                                 const int32_t *restrict at, int64_t cnt) {
    for (int64_t j = 0; j < cnt; j++) dst[j] = src[at[j]];
}

/* The columns of class t for group gi: row (c, k0, k1, k2) over the class's taps, column j
   as class_offsets' (x from the piece's first sample on). */
static void class_columns_f32(const float *x, float *cols, const ek_geom *g,
                              const ek_classes *cl, int64_t t, int64_t gi,
                              const int32_t *xoff, int64_t cnt) {
    int64_t td[3];
    class_dims(cl, t, td);
    const ek_dim_classes *d = cl->dim;
    const int64_t cg = g->c / g->groups, hw = g->in[1] * g->in[2], plane = g->in[0] * hw;
    for (int64_t c = gi * cg; c < (gi + 1) * cg; c++)
        for (int64_t k0 = d[0].a[td[0]]; k0 < d[0].b[td[0]]; k0++)
            for (int64_t k1 = d[1].a[td[1]]; k1 < d[1].b[td[1]]; k1++)
                for (int64_t k2 = d[2].a[td[2]]; k2 < d[2].b[td[2]]; k2++, cols += cnt)
                    gather_f32(cols, x + c * plane + k0 * g->d[0] * hw + k1 * g->d[1] * g->in[2] +
                                         k2 * g->d[2], xoff, cnt);
}

/* y's outputs [o0, o1) of the piece for group gi from the GEMM's tmp (og x cnt), y from the
   piece's first sample on */
static void class_outputs_f32(const float *tmp, float *y, const ek_geom *g, int64_t og,
                              int64_t o0, int64_t o1, int64_t gi, const int64_t *yoff,
                              int64_t cnt) {
    const int64_t len = ek_len(g);
    for (int64_t o = o0; o < o1; o++) {
        float *yo = y + (gi * og + o) * len;
        const float *src = tmp + o * cnt;
        for (int64_t j = 0; j < cnt; j++) yo[yoff[j]] = src[j];
    }
}

/* Piece i (of all classes' pieces) of the forward, output channels [o0, o1): per group its
   columns, the GEMM of the weights' columns of its taps (read in place) by them, then its
   outputs to y. `xoff` and `yoff` hold a piece's columns. */
static void class_piece_f32(const float *x, const float *w, int64_t lda, const int64_t *taps,
                            float *y, const ek_geom *g, int64_t og, int64_t o0, int64_t o1,
                            const ek_classes *cl, int64_t i, float *cols, float *tmp,
                            int32_t *xoff, int64_t *yoff) {
    int64_t t = 0;
    while (cl->first[t + 1] <= i) t++;
    const int64_t s0 = (i - cl->first[t]) * cl->per[t];
    const int64_t s1 = s0 + cl->per[t] < g->n ? s0 + cl->per[t] : g->n;
    const int64_t ck = ek_ck(g), rows = g->c / g->groups * cl->taps[t];
    const int64_t cnt = (s1 - s0) * cl->outs[t];
    class_offsets(g, og, cl, t, s0, s1, xoff, yoff);
    const float *xs = x + s0 * g->c * g->in[0] * g->in[1] * g->in[2];
    float *ys = y + s0 * g->groups * og * ek_len(g);
    for (int64_t gi = 0; gi < g->groups; gi++) {
        /* (no tap inside: the GEMM over k = 0 writes +0, as the chain over zeros) */
        if (rows) class_columns_f32(xs, cols, g, cl, t, gi, xoff, cnt);
        ek_sgemm_subset(o1 - o0, cnt, rows, w + gi * og * ck + o0 * lda, lda, taps + cl->tap0[t],
                        cols, cnt, tmp + o0 * cnt, cnt);
        class_outputs_f32(tmp, ys, g, og, o0, o1, gi, yoff, cnt);
    }
}

/* The forward by classes (`flipped`: see class_taps); 0, or -1 when memory is short. */
static int conv_classes_f32(const float *x, const float *w, float *y, const ek_geom *g,
                            int64_t og, const ek_classes *cl, int flipped) {
    int64_t *taps = malloc((size_t)(cl->rows_all + 1) * sizeof(int64_t));
    int failed = !taps;
    for (int64_t t = 0; !failed && t < cl->count; t++)
        class_taps(g, og, cl, t, flipped, taps + cl->tap0[t]);
    const int64_t lda = flipped ? ek_kvol(g) : ek_ck(g);   /* (between output channels) */
    const int64_t pieces = cl->first[cl->count];
    const int parts = 2 * og * g->c * ek_kvol(g) * g->n * ek_len(g) >= EK_CONV_PARALLEL_MIN
                          ? ek_num_threads() : 1;
    /* fewer pieces than threads (512 channels on 1x1 images: one): the output channels split
       too, each item gathering its piece's columns (each output still one chain) */
    const int64_t blocks = pieces >= parts ? 1 : (parts + pieces - 1) / pieces;
    const int64_t count = pieces * blocks;
    if (!failed) {
#pragma omp parallel num_threads(parts) if (parts > 1 && count > 1) reduction(| : failed)
        {
            const size_t most = (size_t)cl->cols_max;
            float *cols = malloc((size_t)(cl->rows_max * cl->cols_max + 1) * sizeof(float));
            float *tmp = malloc((size_t)og * most * sizeof(float));
            int32_t *xoff = malloc(most * sizeof(int32_t));
            int64_t *yoff = malloc(most * sizeof(int64_t));
            const int short_of_memory = !cols || !tmp || !xoff || !yoff;
            failed |= short_of_memory;
#pragma omp for schedule(dynamic)
            for (int64_t i = 0; i < count; i++) {
                const int64_t b = i % blocks, o0 = og * b / blocks, o1 = og * (b + 1) / blocks;
                if (!short_of_memory)
                    class_piece_f32(x, w, lda, taps, y, g, og, o0, o1, cl, i / blocks, cols, tmp,
                                    xoff, yoff);
            }
            free(yoff);
            free(xoff);
            free(tmp);
            free(cols);
        }
    }
    free(taps);
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ weight gradient */
/* gw (G, og, Cg*K) = the sum over the batch's positions of gy times the columns, by classes:
   per class and group, the output gradient at the class's positions times the columns of the
   whole batch (transposed), (og x taps) = (og x positions) (positions x taps), a chain over
   the positions in order per element on one thread; then the classes' partials added into
   gw in class order. Bits: fixed by the shapes, not by the thread count. With a
   non-finite gradient (gy times the padding's 0 would be a NaN) the caller declines. */

/* Cells of one class's columns for the whole batch beyond which the path declines */
#define EK_CLASS_WEIGHT_CELLS_MAX (1 << 23)

/* gyc (o1 - o0 x cnt) = gy's output channels [o0, o1) of group gi at the piece's positions
   (yoff, from sample 0 on) */
static void class_gradient_rows_f32(const float *gy, float *gyc, const ek_geom *g, int64_t og,
                                    int64_t o0, int64_t o1, int64_t gi, const int64_t *yoff,
                                    int64_t cnt) {
    const int64_t len = ek_len(g);
    for (int64_t o = o0; o < o1; o++, gyc += cnt) {
        const float *at = gy + (gi * og + o) * len;
        for (int64_t j = 0; j < cnt; j++) gyc[j] = at[yoff[j]];
    }
}

/* Class t's partial for group gi, output channels [o0, o1): part's rows (og x taps) */
static int class_weight_part_f32(const float *x, const float *gy, float *part, const ek_geom *g,
                                 int64_t og, int64_t o0, int64_t o1, const ek_classes *cl,
                                 int64_t t, int64_t gi, float *cols, float *gyc, int32_t *xoff,
                                 int64_t *yoff) {
    const int64_t rows = g->c / g->groups * cl->taps[t], cnt = g->n * cl->outs[t];
    class_offsets(g, og, cl, t, 0, g->n, xoff, yoff);
    class_columns_f32(x, cols, g, cl, t, gi, xoff, cnt);
    class_gradient_rows_f32(gy, gyc, g, og, o0, o1, gi, yoff, cnt);
    /* (the columns read transposed: B's element (j, r) at cols[r * cnt + j]) */
    const ek_sgemm_args prod = {o1 - o0, rows, cnt, gyc, cnt, 1, cols, 1, cnt,
                                part + o0 * rows, rows, NULL, 0, 0};
    float *own = malloc((size_t)ek_sgemm_own_floats(&prod) * sizeof(float));
    if (!own) return -1;
    ek_sgemm_team(&prod, own, 0, 1);
    free(own);
    return 0;
}

/* Whether the weight gradient by classes takes this convolution (besides ek_classes_of) */
static int ek_classes_weight_fits(const ek_geom *g, const ek_classes *cl) {
    return cl->rows_max * g->n * ek_len(g) <= EK_CLASS_WEIGHT_CELLS_MAX;
}

/* 0, or -1 when memory is short. */
static int conv_weight_classes_f32(const float *x, const float *gy, float *gw, const ek_geom *g,
                                   int64_t og, const ek_classes *cl) {
    const int64_t ck = ek_ck(g), most = g->n * ek_len(g), pieces = cl->count * g->groups;
    int64_t *taps = malloc((size_t)(cl->rows_all + 1) * sizeof(int64_t));
    float *parts_buf = malloc((size_t)(g->groups * cl->rows_all * og + 1) * sizeof(float));
    int failed = !taps || !parts_buf;
    for (int64_t t = 0; !failed && t < cl->count; t++)
        class_taps(g, og, cl, t, 0, taps + cl->tap0[t]);
    const int parts = 2 * og * g->c * ek_kvol(g) * most >= EK_CONV_PARALLEL_MIN
                          ? ek_num_threads() : 1;
    /* (fewer classes than threads: their output channels split, as in conv_classes_f32) */
    const int64_t blocks = pieces >= parts ? 1 : (parts + pieces - 1) / pieces;
    const int64_t items = pieces * blocks;
    if (!failed) {
#pragma omp parallel num_threads(parts) if (parts > 1 && items > 1) reduction(| : failed)
        {
            float *cols = malloc((size_t)(cl->rows_max * most + 1) * sizeof(float));
            float *gyc = malloc((size_t)(most * og) * sizeof(float));
            int32_t *xoff = malloc((size_t)most * sizeof(int32_t));
            int64_t *yoff = malloc((size_t)most * sizeof(int64_t));
            int short_of_memory = !cols || !gyc || !xoff || !yoff;
#pragma omp for schedule(dynamic)
            for (int64_t i = 0; i < items; i++) {
                const int64_t t = i / blocks / g->groups, gi = i / blocks % g->groups;
                const int64_t b = i % blocks, o0 = og * b / blocks, o1 = og * (b + 1) / blocks;
                float *part = parts_buf + (g->groups * cl->tap0[t] + gi * cl->taps[t] *
                                           (g->c / g->groups)) * og;
                if (!short_of_memory)
                    short_of_memory = class_weight_part_f32(x, gy, part, g, og, o0, o1, cl, t, gi,
                                                            cols, gyc, xoff, yoff) < 0;
            }
            failed |= short_of_memory;
            free(yoff);
            free(xoff);
            free(gyc);
            free(cols);
        }
    }
    if (!failed) {   /* the partials added in class order */
        memset(gw, 0, (size_t)(g->groups * og * ck) * sizeof(float));
        const int64_t cg = g->c / g->groups;
        for (int64_t t = 0; t < cl->count; t++)
            for (int64_t gi = 0; gi < g->groups; gi++) {
                const int64_t rows = cg * cl->taps[t];
                const float *part = parts_buf + (g->groups * cl->tap0[t] + gi * rows) * og;
                float *gg = gw + gi * og * ck;
                const int64_t *at = taps + cl->tap0[t];
                for (int64_t o = 0; o < og; o++)
                    for (int64_t r = 0; r < rows; r++) gg[o * ck + at[r]] += part[o * rows + r];
            }
    }
    free(parts_buf);
    free(taps);
    return failed ? -1 : 0;
}

#undef CLASS_OUT
