/* The softmax kernels for one float type, included by softmax.c once per type with
   T (float or double), SUF(name) (name_f32, name_f64), EXP, EXP_SUM (an exp whose results
   below the smallest normal may be 0), LOG, LANES_SUM, LANES_MAX and
   ROUND(v, reduced) (v rounded to float16 or bfloat16 for the tensors of those types, which
   run through float) defined.

   A tensor is seen as (outer, n, inner) with the softmax taken over n: rows of n contiguous
   elements when inner == 1 (the last dim), else columns `inner` apart, which are processed
   CHUNK at a time so that the loops over a chunk vectorise across columns. */

/* The largest element of a row. A nan may be skipped here (ternaries, not fmax, which would
   keep the loop scalar) but still makes every output nan through the sum of exps, as
   PyTorch's does. */
EK_INLINE T SUF(row_max)(const T *restrict x, int64_t n) {
    T acc[EK_LANES];
    for (int k = 0; k < EK_LANES; k++) acc[k] = -INFINITY;
    int64_t i = 0;
    for (; i + EK_LANES <= n; i += EK_LANES)
        EK_LANE_LOOP
        for (int k = 0; k < EK_LANES; k++) acc[k] = x[i + k] > acc[k] ? x[i + k] : acc[k];
    EK_LANE_LOOP
    for (int k = 0; i + k < n; k++) acc[k] = x[i + k] > acc[k] ? x[i + k] : acc[k];
    return LANES_MAX(acc);
}

/* sum of exp(x - m) over a row, each exp stored to e (when not NULL: log_softmax has no use
   for them, and a store stream less is faster). Unstored, the exps take EXP_SUM: the sum is at
   least 1 (the maximum's term), so terms below the smallest normal never change it. */
EK_INLINE T SUF(row_exp_sum)(const T *restrict x, T *restrict e, int64_t n, T m) {
    T acc[EK_LANES] = {0};
    int64_t i = 0;
    if (e) {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) {
                e[i + k] = EXP(x[i + k] - m);
                acc[k] += e[i + k];
            }
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) {
            e[i + k] = EXP(x[i + k] - m);
            acc[k] += e[i + k];
        }
    } else {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) acc[k] += EXP_SUM(x[i + k] - m);
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) acc[k] += EXP_SUM(x[i + k] - m);
    }
    return LANES_SUM(acc);
}

/* sum of a[j] * b[j] over a row (b NULL: of a[j]) */
EK_INLINE T SUF(row_dot)(const T *restrict a, const T *restrict b, int64_t n) {
    T acc[EK_LANES] = {0};
    int64_t i = 0;
    if (b) {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) acc[k] += a[i + k] * b[i + k];
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) acc[k] += a[i + k] * b[i + k];
    } else {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) acc[k] += a[i + k];
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) acc[k] += a[i + k];
    }
    return LANES_SUM(acc);
}

/* softmax: e / sum(e), by one reciprocal as PyTorch's kernel for the last dim; log_softmax:
   (x - m) - log(sum(e)), where PyTorch keeps the sum and its log in the tensor's type */
EK_INLINE void SUF(softmax_row)(const T *restrict x, T *restrict y, int64_t n, int take_log,
                                int reduced) {
    const T m = SUF(row_max)(x, n);
    const T s = SUF(row_exp_sum)(x, take_log ? NULL : y, n, m);
    if (take_log) {
        const T ls = ROUND(LOG(ROUND(s, reduced)), reduced);
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
    } else {
        const T r = 1 / s;
        for (int64_t i = 0; i < n; i++) y[i] *= r;
    }
}

/* softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g) */
EK_INLINE void SUF(softmax_backward_row)(const T *restrict g, const T *restrict y,
                                         T *restrict dx, int64_t n, int take_log) {
    if (take_log) {
        const T s = SUF(row_dot)(g, NULL, n);
        for (int64_t i = 0; i < n; i++) dx[i] = g[i] - EXP(y[i]) * s;
    } else {
        const T s = SUF(row_dot)(g, y, n);
        for (int64_t i = 0; i < n; i++) dx[i] = y[i] * (g[i] - s);
    }
}

/* Columns c0 .. c0 + w of one (n, inner) block, w <= CHUNK: the row kernel's steps, each a
   loop across the columns. softmax divides here, as PyTorch's kernel for other dims does,
   and keeps the exps in the tensor's type. */
EK_INLINE void SUF(softmax_cols)(const T *restrict x, T *restrict y, int64_t n, int64_t inner,
                                 int64_t w, int take_log, int reduced) {
    T m[CHUNK], s[CHUNK];
    for (int64_t c = 0; c < w; c++) { m[c] = -INFINITY; s[c] = 0; }
    for (int64_t j = 0; j < n; j++)
        for (int64_t c = 0; c < w; c++) m[c] = x[j * inner + c] > m[c] ? x[j * inner + c] : m[c];
    for (int64_t j = 0; j < n; j++) {
        const T *restrict xj = x + j * inner;
        T *restrict yj = y + j * inner;
        for (int64_t c = 0; c < w; c++) {
            yj[c] = EXP(xj[c] - m[c]);
            s[c] += yj[c];
        }
        if (reduced && !take_log)   /* (a loop of its own: the plain one stays lean) */
            for (int64_t c = 0; c < w; c++) yj[c] = ROUND(yj[c], reduced);
    }
    if (take_log) {
        for (int64_t c = 0; c < w; c++) s[c] = LOG(s[c]);
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++) y[j * inner + c] = (x[j * inner + c] - m[c]) - s[c];
    } else {
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++) y[j * inner + c] /= s[c];
    }
}

EK_INLINE void SUF(softmax_backward_cols)(const T *restrict g, const T *restrict y,
                                          T *restrict dx, int64_t n, int64_t inner,
                                          int64_t w, int take_log) {
    T s[CHUNK];
    for (int64_t c = 0; c < w; c++) s[c] = 0;
    if (take_log) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++) s[c] += g[j * inner + c];
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++)
                dx[j * inner + c] = g[j * inner + c] - EXP(y[j * inner + c]) * s[c];
    } else {
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++) s[c] += g[j * inner + c] * y[j * inner + c];
        for (int64_t j = 0; j < n; j++)
            for (int64_t c = 0; c < w; c++)
                dx[j * inner + c] = y[j * inner + c] * (g[j * inner + c] - s[c]);
    }
}

/* The drivers: rows, or (outer, column chunk) pairs, spread over the threads. The forward
   takes the row kernel for the last dim only, as PyTorch does (a dim followed by dims of size
   one is not the last: its kernel divides, and keeps a float16 softmax's exps in float16). */
EK_CLONES static void SUF(softmax)(const T *restrict x, T *restrict y, int64_t outer,
                                   int64_t n, int64_t inner, int take_log, int last,
                                   int reduced) {
    const int64_t chunks = (inner + CHUNK - 1) / CHUNK, tasks = outer * chunks;
    if (last) {   /* (inner == 1) */
#pragma omp parallel for schedule(static) if (outer * n >= EK_PARALLEL_MIN) \
    num_threads(ek_num_threads())
        for (int64_t r = 0; r < outer; r++)
            SUF(softmax_row)(x + r * n, y + r * n, n, take_log, reduced);
        return;
    }
#pragma omp parallel for schedule(static) if (outer * n * inner >= EK_PARALLEL_MIN) \
    num_threads(ek_num_threads())
    for (int64_t t = 0; t < tasks; t++) {
        const int64_t o = t / chunks, c0 = (t % chunks) * CHUNK;
        const int64_t w = inner - c0 < CHUNK ? inner - c0 : CHUNK;
        const int64_t at = o * n * inner + c0;
        SUF(softmax_cols)(x + at, y + at, n, inner, w, take_log, reduced);
    }
}

EK_CLONES static void SUF(softmax_backward)(const T *restrict g, const T *restrict y,
                                            T *restrict dx, int64_t outer, int64_t n,
                                            int64_t inner, int take_log) {
    const int64_t chunks = (inner + CHUNK - 1) / CHUNK, tasks = outer * chunks;
    if (inner == 1) {
#pragma omp parallel for schedule(static) if (outer * n >= EK_PARALLEL_MIN) \
    num_threads(ek_num_threads())
        for (int64_t r = 0; r < outer; r++)
            SUF(softmax_backward_row)(g + r * n, y + r * n, dx + r * n, n, take_log);
        return;
    }
#pragma omp parallel for schedule(static) if (outer * n * inner >= EK_PARALLEL_MIN) \
    num_threads(ek_num_threads())
    for (int64_t t = 0; t < tasks; t++) {
        const int64_t o = t / chunks, c0 = (t % chunks) * CHUNK;
        const int64_t w = inner - c0 < CHUNK ? inner - c0 : CHUNK;
        const int64_t at = o * n * inner + c0;
        SUF(softmax_backward_cols)(g + at, y + at, dx + at, n, inner, w, take_log);
    }
}
