/* The layer norm kernels for one float type, included by normalization.c once per type with
   T (float or double), SUF(name) (name_f32, name_f64), SQRT and LANES_SUM defined.

   A tensor is seen as m rows of n elements, each row normalised on its own:
   xhat = (x - mean) rstd, rstd = 1 / sqrt(var + eps) (var biased), y = xhat w + b. */

/* sum of x[j], or of (x[j] - c)^2 when square */
EK_INLINE T SUF(row_sum)(const T *restrict x, int64_t n, T c, int square) {
    T acc[EK_LANES] = {0};
    int64_t i = 0;
    if (square) {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) acc[k] += (x[i + k] - c) * (x[i + k] - c);
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) acc[k] += (x[i + k] - c) * (x[i + k] - c);
    } else {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) acc[k] += x[i + k];
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) acc[k] += x[i + k];
    }
    return LANES_SUM(acc);
}

/* One row: the statistics, by two passes (the mean, then the centred squares: no
   cancellation, as a one-pass sum of squares would have), then y. */
EK_INLINE void SUF(layer_norm_row)(const T *restrict x, const T *restrict w,
                                   const T *restrict b, T *restrict y, T *mean, T *rstd,
                                   int64_t n, T eps) {
    const T mu = SUF(row_sum)(x, n, 0, 0) / (T)n;
    const T r = 1 / SQRT(SUF(row_sum)(x, n, mu, 1) / (T)n + eps);
    *mean = mu;
    *rstd = r;
    /* (four loops, not tests inside one: each stays a plain vector loop) */
    if (w && b)
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mu) * r * w[j] + b[j];
    else if (w)
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mu) * r * w[j];
    else if (b)
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mu) * r + b[j];
    else
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mu) * r;
}

EK_CLONES static void SUF(layer_norm)(const T *restrict x, const T *restrict w,
                                      const T *restrict b, T *restrict y, T *restrict mean,
                                      T *restrict rstd, int64_t m, int64_t n, T eps) {
#pragma omp parallel for schedule(static) if (m * n >= EK_PARALLEL_MIN) \
    num_threads(ek_num_threads())
    for (int64_t i = 0; i < m; i++)
        SUF(layer_norm_row)(x + i * n, w, b, y + i * n, mean + i, rstd + i, n, eps);
}

/* One row of the backward. With gw = g w (g without a weight) and the row sums
   a = sum(gw), s = sum(gw xhat):
     dx = gw rstd - xhat (rstd s + grstd rstd^2) / n + (gmean - rstd a) / n
   (the last two terms carry the gradients reaching the mean and rstd outputs, 0 without).
   dw and db (NULL when not wanted) gather g xhat and g, row after row. */
EK_INLINE void SUF(layer_norm_backward_row)(const T *restrict g, const T *restrict x,
                                            const T *restrict w, T mu, T r, T gmean, T grstd,
                                            T *restrict dx, T *restrict dw, T *restrict db,
                                            int64_t n) {
    if (dw)
        for (int64_t j = 0; j < n; j++) dw[j] += g[j] * ((x[j] - mu) * r);
    if (db)
        for (int64_t j = 0; j < n; j++) db[j] += g[j];
    if (!dx) return;
    T acc_a[EK_LANES] = {0}, acc_s[EK_LANES] = {0};
    int64_t i = 0;
    if (w) {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) {
                const T gw = g[i + k] * w[i + k];
                acc_a[k] += gw;
                acc_s[k] += gw * ((x[i + k] - mu) * r);
            }
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) {
            const T gw = g[i + k] * w[i + k];
            acc_a[k] += gw;
            acc_s[k] += gw * ((x[i + k] - mu) * r);
        }
    } else {
        for (; i + EK_LANES <= n; i += EK_LANES)
            EK_LANE_LOOP
            for (int k = 0; k < EK_LANES; k++) {
                acc_a[k] += g[i + k];
                acc_s[k] += g[i + k] * ((x[i + k] - mu) * r);
            }
        EK_LANE_LOOP
        for (int k = 0; i + k < n; k++) {
            acc_a[k] += g[i + k];
            acc_s[k] += g[i + k] * ((x[i + k] - mu) * r);
        }
    }
    const T a = LANES_SUM(acc_a), s = LANES_SUM(acc_s);
    const T c1 = (gmean - r * a) / (T)n;
    const T c2 = (r * s + grstd * r * r) / (T)n;
    if (w)
        for (int64_t j = 0; j < n; j++) dx[j] = g[j] * w[j] * r - ((x[j] - mu) * r) * c2 + c1;
    else
        for (int64_t j = 0; j < n; j++) dx[j] = g[j] * r - ((x[j] - mu) * r) * c2 + c1;
}

/* Rows spread over the threads; each thread gathers dw and db over its rows in a buffer of
   its own, and the buffers are added in thread order (the same sums for a thread count). */
EK_CLONES static int SUF(layer_norm_backward)(const T *restrict g, const T *restrict x,
                                              const T *restrict w, const T *restrict mean,
                                              const T *restrict rstd, const T *restrict gmean,
                                              const T *restrict grstd, T *restrict dx,
                                              T *restrict dw, T *restrict db, int64_t m,
                                              int64_t n) {
    const int threads = m * n >= EK_PARALLEL_MIN ? ek_num_threads() : 1;
    T *part = NULL;
    if (dw || db) {
        part = calloc((size_t)threads * 2 * (size_t)n, sizeof(T));
        if (!part) return -1;
    }
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        T *pw = NULL, *pb = NULL;
        if (part) {
            pw = part + (size_t)EK_THREAD_NUM() * 2 * (size_t)n;
            pb = pw + n;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < m; i++)
            SUF(layer_norm_backward_row)(g + i * n, x + i * n, w, mean[i], rstd[i],
                                         gmean ? gmean[i] : 0, grstd ? grstd[i] : 0,
                                         dx ? dx + i * n : NULL, dw ? pw : NULL,
                                         db ? pb : NULL, n);
    }
    for (int t = 0; t < threads && part; t++)
        for (int64_t j = 0; j < n; j++) {
            if (dw) dw[j] = t ? dw[j] + part[(size_t)t * 2 * n + j] : part[j];
            if (db) db[j] = t ? db[j] + part[(size_t)t * 2 * n + n + j] : part[n + j];
        }
    free(part);
    return 0;
}
