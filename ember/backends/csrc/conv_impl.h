/* The window kernels for one float type, included by conv.c once per type with T (float or
   double) and SUF(name) (name_f32, name_f64) defined. See conv.c for the geometry and the
   column layouts. */

/* Short runs are copied in fixed-size pieces, which the compiler turns into vector moves: a
   loop (or memcpy of a variable size) became a library call per run, and runs are as short
   as an output row (1 to 56 elements in a ResNet). Pieces may overlap: dst and src don't. */
#define RUN (64 / (int64_t)sizeof(T))   /* elements in 64 bytes */

WIN_INLINE void SUF(copy_run)(T *d, const T *s, int64_t len) {
    if (len >= RUN) {
        int64_t i = 0;
        for (; i + RUN <= len; i += RUN) memcpy(d + i, s + i, 64);
        if (i < len) memcpy(d + len - RUN, s + len - RUN, 64);
    } else if (len >= RUN / 2) {
        memcpy(d, s, 32);
        memcpy(d + len - RUN / 2, s + len - RUN / 2, 32);
    } else if (len >= RUN / 4) {
        memcpy(d, s, 16);
        memcpy(d + len - RUN / 4, s + len - RUN / 4, 16);
    } else {   /* (at most 3 elements; a loop here became a memcpy call) */
        if (len > 0) d[0] = s[0];
        if (len > 1) d[1] = s[1];
        if (len > 2) d[2] = s[2];
    }
}

WIN_INLINE void SUF(zero_run)(T *d, int64_t len) {
    if (len >= RUN) {
        int64_t i = 0;
        for (; i + RUN <= len; i += RUN) memset(d + i, 0, 64);
        if (i < len) memset(d + len - RUN, 0, 64);
    } else if (len >= RUN / 2) {
        memset(d, 0, 32);
        memset(d + len - RUN / 2, 0, 32);
    } else if (len >= RUN / 4) {
        memset(d, 0, 16);
        memset(d + len - RUN / 4, 0, 16);
    } else {
        if (len > 0) d[0] = 0;
        if (len > 1) d[1] = 0;
        if (len > 2) d[2] = 0;
    }
}

/* One output row of a column row: dst[o - a] = src[o * sw] for the output positions o in
   [a, b) whose input lies inside [lo, hi), 0 for those in the padding. NOTE: src itself may
   point before the input row (a negative offset): it is read only inside [lo, hi). */
WIN_INLINE void SUF(gather_run)(T *dst, const T *src, int64_t sw, int64_t a, int64_t b,
                                int64_t lo, int64_t hi) {
    const int64_t m0 = a > lo ? a : lo, m1 = b < hi ? b : hi;
    if (m0 >= m1) {
        SUF(zero_run)(dst, b - a);
        return;
    }
    SUF(zero_run)(dst, m0 - a);
    if (sw == 1) {
        SUF(copy_run)(dst + m0 - a, src + m0, m1 - m0);
    } else {
        T *d = dst + m0 - a;
        const T *s = src + m0 * sw;
        for (int64_t o = 0; o < m1 - m0; o++) d[o] = s[o * sw];
    }
    SUF(zero_run)(dst + m1 - a, b - m1);
}

/* The adjoint of gather_run: dst[o * sw] += src[o - a] inside [lo, hi). */
WIN_INLINE void SUF(scatter_run)(T *dst, int64_t sw, const T *src, int64_t a, int64_t b,
                                 int64_t lo, int64_t hi) {
    const int64_t m0 = a > lo ? a : lo, m1 = b < hi ? b : hi;
    T *d = dst + m0 * sw;
    const T *s = src + m0 - a;
    if (sw == 1)
        for (int64_t o = 0; o < m1 - m0; o++) d[o] += s[o];
    else
        for (int64_t o = 0; o < m1 - m0; o++) d[o * sw] += s[o];
}

/* Column row r (cols_row: its cells for the columns [j0, j0 + cnt)) from x, or added back
   into x when `adjoint`, for the row's channel c and kernel offset (k0, k1, k2) from the
   chunk's first position `at`. The row is walked one output row (a run along the last
   spatial dim) at a time, the position advancing incrementally: the loop body runs once per
   output row of every column row, so it does little (no division: a 64-bit division cost
   as much as copying a run). Inlined, `adjoint` is a constant. */
WIN_INLINE void SUF(walk_row)(T *cols_row, T *x, const ek_geom *g, const ek_pos *at,
                              int64_t cnt, int64_t c, const int64_t *kof, int adjoint) {
    const int64_t ow_n = g->out[2], oh_n = g->out[1], od_n = g->out[0];
    const int64_t w_n = g->in[2], h_n = g->in[1], d_n = g->in[0], hw = h_n * w_n;
    const int64_t offd = kof[0] * g->d[0] - g->p[0], offh = kof[1] * g->d[1] - g->p[1];
    const int64_t offw = kof[2] * g->d[2] - g->p[2];
    int64_t lo, hi;
    ek_valid_outputs(offw, g->s[2], w_n, ow_n, &lo, &hi);
    /* Same-width rows (unit strides along H and W, output width = input width, as in a
       'same' convolution): output rows oh, oh + 1, ... read input rows ih, ih + 1, ..., one
       contiguous span shifted by offw. The gather copies such spans whole and then zeroes
       each row's cells that fall in the padding (they hold a neighbouring row's edge):
       a few long copies instead of one short run per row. */
    const int spans = !adjoint && g->s[1] == 1 && g->s[2] == 1 && ow_n == w_n;
    int64_t od = at->od, oh = at->oh, ow = at->ow;
    int64_t id = od * g->s[0] + offd, ih = oh * g->s[1] + offh;
    T *plane = x + (at->n * g->c + c) * d_n * hw;
    T *cell = cols_row, *end = cols_row + cnt;
    while (cell < end) {
        int64_t seg = ow_n - ow < end - cell ? ow_n - ow : end - cell, rows = 1;
        /* (unsigned: one comparison tests both ends) */
        if ((uint64_t)id < (uint64_t)d_n && (uint64_t)ih < (uint64_t)h_n) {
            T *src = plane + id * hw + ih * w_n + offw;
            if (spans && ow == 0) {
                rows = oh_n - oh < h_n - ih ? oh_n - oh : h_n - ih;
                rows = (end - cell) / ow_n < rows ? (end - cell) / ow_n : rows;
                rows = rows < 1 ? 1 : rows;
            }
            if (rows > 1) {
                seg = rows * ow_n;
                SUF(copy_run)(cell + lo, src + lo, seg - (ow_n - hi) - lo);
                for (int64_t q = 0; q < seg; q += ow_n) {
                    SUF(zero_run)(cell + q, lo);
                    SUF(zero_run)(cell + q + hi, ow_n - hi);
                }
            } else if (adjoint) {
                SUF(scatter_run)(src, g->s[2], cell, ow, ow + seg, lo, hi);
            } else {
                SUF(gather_run)(cell, src, g->s[2], ow, ow + seg, lo, hi);
            }
        } else if (!adjoint) {
            SUF(zero_run)(cell, seg);
        }
        cell += seg;
        ow = 0;
        oh += rows;
        ih += rows * g->s[1];
        if (oh == oh_n) {
            oh = 0;
            ih = offh;
            id += g->s[0];
            if (++od == od_n) {
                od = 0;
                id = offd;
                plane += g->c * d_n * hw;
            }
        }
    }
}

/* Rows [rb, re) of the columns [j0, j0 + cnt), (rows, cnt) row-major. */
EK_CLONES static void SUF(im2col_part)(const T *x, T *cols, const ek_geom *g, int64_t j0,
                                       int64_t cnt, int64_t rb, int64_t re) {
    ek_pos at;
    ek_position(g, j0, &at);
    ek_row rw;
    ek_row_start(g, rb, &rw);
    for (int64_t r = rb; r < re; r++, ek_row_next(g, &rw))
        SUF(walk_row)(cols + r * cnt, (T *)x, g, &at, cnt, rw.c, rw.k, 0);
}

/* The adjoint of im2col for the channels [cb, ce) (all of their rows): x += cols. Channels
   are what threads split, so no two threads add into the same input element. */
EK_CLONES static void SUF(col2im_part)(const T *cols, T *x, const ek_geom *g, int64_t j0,
                                       int64_t cnt, int64_t cb, int64_t ce) {
    const int64_t kk = ek_kvol(g), cg = g->c / g->groups;
    ek_pos at;
    ek_position(g, j0, &at);
    ek_row rw;
    const int64_t rb = (cb / cg) * ek_ck(g) + (cb % cg) * kk;
    ek_row_start(g, rb, &rw);
    /* a channel's rows are consecutive, and so are the channels' */
    for (int64_t r = rb; r < rb + (ce - cb) * kk; r++, ek_row_next(g, &rw))
        SUF(walk_row)((T *)cols + r * cnt, x, g, &at, cnt, rw.c, rw.k, 1);
}

/* im2col through a gather table (see ek_gather_table) for rows [rb, re): per column row and
   sample, one branch-free loop over the output positions (a vector gather and blend). */
EK_CLONES static void SUF(im2col_table_part)(const T *x, T *cols, const ek_geom *g,
                                             const int32_t *tab, int64_t j0, int64_t cnt,
                                             int64_t rb, int64_t re) {
    const int64_t len = ek_len(g), plane = g->in[0] * g->in[1] * g->in[2], kk = ek_kvol(g);
    ek_row rw;
    ek_row_start(g, rb, &rw);
    for (int64_t r = rb; r < re; r++, ek_row_next(g, &rw)) {
        const int32_t *t = tab + (rw.k[0] * g->k[1] + rw.k[1]) * g->k[2] * len + rw.k[2] * len;
        T *cell = cols + r * cnt, *end = cell + cnt;
        if (len <= 4 && j0 % len == 0 && cnt % len == 0) {
            /* a handful of positions per sample (images of 1x1 to 2x2): samples innermost,
               a strided loop per position instead of a tiny one per sample */
            const T *restrict from = x + ((j0 / len) * g->c + rw.c) * plane;
            const int64_t step = g->c * plane, samples = cnt / len;
            for (int64_t l = 0; l < len; l++) {
                T *restrict dst = cell + l;
                if (!t[kk * len + l]) {
                    for (int64_t n = 0; n < samples; n++) dst[n * len] = 0;
                    continue;
                }
                const T *restrict src = from + t[l];
                for (int64_t n = 0; n < samples; n++) dst[n * len] = src[n * step];
            }
            continue;
        }
        int64_t l = j0 % len;
        const T *src = x + ((j0 / len) * g->c + rw.c) * plane;
        while (cell < end) {
            const int64_t m = len - l < end - cell ? len - l : end - cell;
            /* (branch-free: an unconditional load and a select) */
            T *restrict dst = cell;
            const T *restrict from = src;
            const int32_t *restrict at = t + l, *restrict ok = at + kk * len;
            for (int64_t i = 0; i < m; i++) {
                const T v = from[at[i]];
                dst[i] = ok[i] ? v : 0;
            }
            cell += m;
            l = 0;
            src += g->c * plane;
        }
    }
}

static void SUF(im2col)(const T *x, T *cols, const ek_geom *g, int64_t j0, int64_t cnt) {
    const int64_t rows = g->groups * ek_ck(g);
    const int parts = rows * cnt >= EK_COLUMNS_PARALLEL_MIN ? ek_num_threads() : 1;
    int32_t *tab = ek_short_rows(g) ? ek_gather_table(g) : NULL;
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        const int64_t rb = rows * t / parts, re = rows * (t + 1) / parts;
        if (tab) SUF(im2col_table_part)(x, cols, g, tab, j0, cnt, rb, re);
        else SUF(im2col_part)(x, cols, g, j0, cnt, rb, re);
    }
    free(tab);
}

static void SUF(col2im)(const T *cols, T *x, const ek_geom *g, int64_t j0, int64_t cnt) {
    const int64_t cells = g->groups * ek_ck(g) * cnt;
    const int parts = cells >= EK_COLUMNS_PARALLEL_MIN ? ek_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
    for (int t = 0; t < parts; t++)
        SUF(col2im_part)(cols, x, g, j0, cnt, g->c * t / parts, g->c * (t + 1) / parts);
}

#undef RUN

/* ------------------------------------------------------------------ pooling */
/* The pooling loops take one output row (od, oh) of a plane at a time, POOL_BLOCK outputs
   along W at once: for each input row of the window and each kernel offset kw, one loop over
   the outputs, which reads input iw = ow * sw + kw * dw - pw (inside the input for ow in the
   offset's [lo, hi)). That inner loop is branch-free and vectorises; every output still
   visits its window in PyTorch's order (d, then h, then w). */
#define POOL_BLOCK 256

/* One input row's part of a block of windows: m[b] (and best[b], the input position, unless
   NULL) take row[b * sw] where it is greater or a NaN, for b in [lo, hi). NOTE: written out
   for strides 1 and 2 (as add_run is) it ran 2x slower on ResNet's and LeNet's pools. */
WIN_INLINE void SUF(max_run)(const T *restrict row, int64_t sw, T *restrict m,
                             int64_t *restrict best, int64_t first, int64_t lo, int64_t hi) {
    if (best) {
        for (int64_t b = lo; b < hi; b++) {
            const T v = row[b * sw];
            const int take = v > m[b] || v != v;
            m[b] = take ? v : m[b];
            best[b] = take ? first + b * sw : best[b];
        }
    } else {
        for (int64_t b = lo; b < hi; b++) {
            const T v = row[b * sw];
            m[b] = v > m[b] || v != v ? v : m[b];
        }
    }
}

/* Max pooling of planes [pb, pe) as PyTorch's CPU kernel: the window clipped to the input,
   a strictly greater value or a NaN replaces the running maximum (so ties keep the first
   position and NaNs the last), which starts at -inf on the first position inside the
   input. idx may be NULL (values only). */
EK_CLONES static void SUF(max_pool_planes)(const T *x, T *y, int64_t *idx, const ek_geom *g,
                                           int64_t pb, int64_t pe) {
    const int64_t w_n = g->in[2], hw = g->in[1] * w_n, plane = g->in[0] * hw;
    const int64_t ow_n = g->out[2], outs = ek_len(g);
    T m[POOL_BLOCK];
    int64_t best[POOL_BLOCK];
    ek_spans spans;
    ek_spans_of(g, &spans);
    for (int64_t p = pb; p < pe; p++) {
        const T *xp = x + p * plane;
        int64_t o = p * outs;
        for (int64_t od = 0; od < g->out[0]; od++) {
            int64_t d0, d1;
            ek_window(od, 0, g, &d0, &d1);
            for (int64_t oh = 0; oh < g->out[1]; oh++, o += ow_n) {
                int64_t h0, h1;
                ek_window(oh, 1, g, &h0, &h1);
                for (int64_t o0 = 0; o0 < ow_n; o0 += POOL_BLOCK) {
                    const int64_t nb = ow_n - o0 < POOL_BLOCK ? ow_n - o0 : POOL_BLOCK;
                    for (int64_t b = 0; b < nb; b++) {
                        int64_t w0, w1;
                        ek_window(o0 + b, 2, g, &w0, &w1);
                        m[b] = -INFINITY;
                        best[b] = d0 * hw + h0 * w_n + w0;
                    }
                    for (int64_t id = d0; id < d1; id += g->d[0])
                        for (int64_t ih = h0; ih < h1; ih += g->d[1])
                            for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                const int64_t off = kw * g->d[2] - g->p[2], sw = g->s[2];
                                const int64_t at = id * hw + ih * w_n + off;
                                int64_t lo, hi;
                                ek_span(&spans, g, kw, &lo, &hi);
                                lo = lo > o0 ? lo - o0 : 0;
                                hi = hi < o0 + nb ? hi - o0 : nb;
                                const T *row = xp + at + o0 * sw;
                                const int64_t first = at + o0 * sw;
                                SUF(max_run)(row, sw, m, idx ? best : NULL, first, lo, hi);
                            }
                    memcpy(y + o + o0, m, (size_t)nb * sizeof(T));
                    if (idx) memcpy(idx + o + o0, best, (size_t)nb * sizeof(int64_t));
                }
            }
        }
    }
}

/* gx = 0, then gx[p, idx[p, o]] += g[p, o] in order (PyTorch's order of summation). */
static void SUF(max_pool_backward_planes)(const T *g, const int64_t *idx, T *gx,
                                          int64_t plane, int64_t outs, int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; p++) {
        T *dst = gx + p * plane;
        memset(dst, 0, (size_t)plane * sizeof(T));
        for (int64_t o = p * outs; o < (p + 1) * outs; o++)
            if (idx[o] >= 0 && idx[o] < plane) dst[idx[o]] += g[o];
    }
}

/* acc[b] += row[b * sw] for b in [lo, hi), or row[b * sw] += acc[b] when `scatter`. Called
   with the stride written out (1, 2) where it is, so that the loop vectorises with plain or
   paired loads: with a stride known only at run time it stayed scalar. */
WIN_INLINE void SUF(add_run)(T *restrict row, int64_t sw, T *restrict acc, int64_t lo,
                             int64_t hi, int scatter) {
    if (scatter)
        for (int64_t b = lo; b < hi; b++) row[b * sw] += acc[b];
    else
        for (int64_t b = lo; b < hi; b++) acc[b] += row[b * sw];
}

/* Average pooling: each window clipped to the input summed in PyTorch's order, divided by
   div (the caller's divisor per output position of a plane: PyTorch's count). With `adjoint`,
   the backward instead: gx = 0, then each output's gy / div added over its clipped window
   (outputs of a row together: overlapping windows add in another order than PyTorch's). */
WIN_INLINE void SUF(avg_pool_rows)(const T *src, T *dst, const T *div, const ek_geom *g,
                                   int64_t pb, int64_t pe, int adjoint) {
    const int64_t w_n = g->in[2], hw = g->in[1] * w_n, plane = g->in[0] * hw;
    const int64_t ow_n = g->out[2], outs = ek_len(g);
    T acc[POOL_BLOCK];
    ek_spans spans;
    ek_spans_of(g, &spans);
    for (int64_t p = pb; p < pe; p++) {
        const T *in = adjoint ? src + p * outs : src + p * plane;
        T *res = adjoint ? dst + p * plane : dst + p * outs;
        if (adjoint) memset(res, 0, (size_t)plane * sizeof(T));
        int64_t o = 0;
        for (int64_t od = 0; od < g->out[0]; od++) {
            int64_t d0, d1;
            ek_window(od, 0, g, &d0, &d1);
            for (int64_t oh = 0; oh < g->out[1]; oh++, o += ow_n) {
                int64_t h0, h1;
                ek_window(oh, 1, g, &h0, &h1);
                for (int64_t o0 = 0; o0 < ow_n; o0 += POOL_BLOCK) {
                    const int64_t nb = ow_n - o0 < POOL_BLOCK ? ow_n - o0 : POOL_BLOCK;
                    for (int64_t b = 0; b < nb; b++)
                        acc[b] = adjoint ? in[o + o0 + b] / div[o + o0 + b] : 0;
                    for (int64_t id = d0; id < d1; id++)
                        for (int64_t ih = h0; ih < h1; ih++)
                            for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                const int64_t off = kw - g->p[2], sw = g->s[2];
                                int64_t lo, hi;
                                ek_span(&spans, g, kw, &lo, &hi);
                                lo = lo > o0 ? lo - o0 : 0;
                                hi = hi < o0 + nb ? hi - o0 : nb;
                                const int64_t at = id * hw + ih * w_n + off + o0 * sw;
                                if (adjoint && sw == 1) SUF(add_run)(res + at, 1, acc, lo, hi, 1);
                                else if (adjoint && sw == 2)
                                    SUF(add_run)(res + at, 2, acc, lo, hi, 1);
                                else if (adjoint) SUF(add_run)(res + at, sw, acc, lo, hi, 1);
                                else if (sw == 1) SUF(add_run)((T *)in + at, 1, acc, lo, hi, 0);
                                else if (sw == 2) SUF(add_run)((T *)in + at, 2, acc, lo, hi, 0);
                                else SUF(add_run)((T *)in + at, sw, acc, lo, hi, 0);
                            }
                    if (!adjoint)
                        for (int64_t b = 0; b < nb; b++)
                            res[o + o0 + b] = acc[b] / div[o + o0 + b];
                }
            }
        }
    }
}

EK_CLONES static void SUF(avg_pool_planes)(const T *x, T *y, const T *div, const ek_geom *g,
                                           int64_t pb, int64_t pe) {
    SUF(avg_pool_rows)(x, y, div, g, pb, pe, 0);
}

EK_CLONES static void SUF(avg_pool_backward_planes)(const T *gy, T *gx, const T *div,
                                                    const ek_geom *g, int64_t pb, int64_t pe) {
    SUF(avg_pool_rows)(gy, gx, div, g, pb, pe, 1);
}

#undef POOL_BLOCK
