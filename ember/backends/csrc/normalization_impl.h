/* The layer norm and batch norm kernels for one float type, included by normalization.c once
   per type with T (float or double), SUF(name) (name_f32, name_f64), SQRT and LANES_SUM
   defined.

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
#pragma omp parallel for schedule(static) if (m * n >= LN_PARALLEL_MIN) \
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

/* Rows spread over the threads in blocks fixed by (m, n) alone (ln_blocks); each block
   gathers dw and db over its rows in a buffer of its own, and the buffers are added in block
   order: the same sums at every thread count. */
EK_CLONES static int SUF(layer_norm_backward)(const T *restrict g, const T *restrict x,
                                              const T *restrict w, const T *restrict mean,
                                              const T *restrict rstd, const T *restrict gmean,
                                              const T *restrict grstd, T *restrict dx,
                                              T *restrict dw, T *restrict db, int64_t m,
                                              int64_t n) {
    const int64_t blocks = ln_blocks(m, n), per_block = (m + blocks - 1) / blocks;
    T *part = NULL;
    if (dw || db) {
        part = calloc((size_t)blocks * 2 * (size_t)n, sizeof(T));
        if (!part) return -1;
    }
#pragma omp parallel for schedule(static) if (m * n >= LN_PARALLEL_MIN) \
    num_threads(ek_num_threads())
    for (int64_t blk = 0; blk < blocks; blk++) {
        T *pw = part ? part + (size_t)blk * 2 * (size_t)n : NULL, *pb = pw ? pw + n : NULL;
        const int64_t end = (blk + 1) * per_block < m ? (blk + 1) * per_block : m;
        for (int64_t i = blk * per_block; i < end; i++)
            SUF(layer_norm_backward_row)(g + i * n, x + i * n, w, mean[i], rstd[i],
                                         gmean ? gmean[i] : 0, grstd ? grstd[i] : 0,
                                         dx ? dx + i * n : NULL, dw ? pw : NULL,
                                         db ? pb : NULL, n);
    }
    for (int64_t blk = 0; blk < blocks && part; blk++)
        for (int64_t j = 0; j < n; j++) {
            if (dw) dw[j] = blk ? dw[j] + part[(size_t)blk * 2 * n + j] : part[j];
            if (db) db[j] = blk ? db[j] + part[(size_t)blk * 2 * n + n + j] : part[n + j];
        }
    free(part);
    return 0;
}

/* ------------------------------------------------------------------ batch norm
   x is (N, C, L): channel c is N runs of L elements, C L apart. The statistics of a channel
   are sums over n and l, accumulated in double as PyTorch's CPU kernel does (its accumulation
   type for float is double). Every pass walks x row by row (a row: the C L elements of one
   n) and keeps one partial sum per column j = c L + l, so that the inner loop runs over
   contiguous columns for any L (BatchNorm1d's L = 1 included); threads take blocks of
   columns; the columns of a channel are then added in order. */

/* s[j] += x[n, j] over the rows, and (square) q[j] += (x[n, j] - m[j])^2, for the columns of
   block `blk` */
EK_INLINE void SUF(bn_column_sums)(const T *restrict x, const T *restrict m,
                                   double *restrict s, int64_t N, int64_t cols, int64_t blk,
                                   int square) {
    const int64_t j0 = blk * BN_BLOCK, j1 = j0 + BN_BLOCK < cols ? j0 + BN_BLOCK : cols;
    for (int64_t n = 0; n < N; n++) {
        const T *restrict row = x + n * cols;
        if (square)
            for (int64_t j = j0; j < j1; j++) {
                const T d = row[j] - m[j];
                s[j] += (double)(d * d);
            }
        else
            for (int64_t j = j0; j < j1; j++) s[j] += (double)row[j];
    }
}

/* Training-mode forward: mean and biased var per channel (in T, from the double sums), and
   y = (x - mean) scale + b with scale = w / sqrt(var + eps) (w, b may be NULL). 0, or -1
   when out of memory. */
EK_CLONES static int SUF(batch_norm)(const T *restrict x, const T *restrict w,
                                     const T *restrict b, T *restrict y, T *restrict mean,
                                     T *restrict var, int64_t N, int64_t C, int64_t L,
                                     double eps) {
    const int64_t cols = C * L, blocks = (cols + BN_BLOCK - 1) / BN_BLOCK;
    const double count = (double)(N * L);
    double *s = calloc((size_t)cols * 2, sizeof(double));
    T *mj = malloc((size_t)cols * 3 * sizeof(T));
    if (!s || !mj) { free(s); free(mj); return -1; }
    double *q = s + cols;
    T *sj = mj + cols, *bj = sj + cols;
    const int threads = N * cols >= EK_PARALLEL_MIN ? ek_num_threads() : 1;
    (void)threads;   /* (read by OpenMP's pragma only) */
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; blk++)
            SUF(bn_column_sums)(x, NULL, s, N, cols, blk, 0);
#pragma omp single
        for (int64_t c = 0; c < C; c++) {
            double t = 0;
            for (int64_t l = 0; l < L; l++) t += s[c * L + l];
            mean[c] = (T)(t / count);
            for (int64_t l = 0; l < L; l++) mj[c * L + l] = mean[c];
        }
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; blk++) SUF(bn_column_sums)(x, mj, q, N, cols, blk, 1);
#pragma omp single
        for (int64_t c = 0; c < C; c++) {
            double t = 0;
            for (int64_t l = 0; l < L; l++) t += q[c * L + l];
            var[c] = (T)(t / count);
            const T invstd = (T)(1.0 / sqrt(t / count + eps));
            const T scale = w ? invstd * w[c] : invstd;
            for (int64_t l = 0; l < L; l++) {
                sj[c * L + l] = scale;
                bj[c * L + l] = b ? b[c] : 0;
            }
        }
#pragma omp for schedule(static)
        for (int64_t t = 0; t < N * blocks; t++) {   /* (row, column block) pairs */
            const int64_t n = t / blocks, j0 = (t % blocks) * BN_BLOCK;
            const int64_t j1 = j0 + BN_BLOCK < cols ? j0 + BN_BLOCK : cols;
            const T *restrict row = x + n * cols;
            T *restrict out = y + n * cols;
            if (b)
                for (int64_t j = j0; j < j1; j++) out[j] = (row[j] - mj[j]) * sj[j] + bj[j];
            else
                for (int64_t j = j0; j < j1; j++) out[j] = (row[j] - mj[j]) * sj[j];
        }
    }
    free(s);
    free(mj);
    return 0;
}

/* The backward, from y's gradient g and the statistics' gmean, gvar (NULL: zero), with
   gsum = sum(g) and dot = sum(g (x - mean)) per channel (double sums, then T):
     dx = g scale - (x - mean) (scale invstd^2 dot - 2 gvar) / count
          + (gmean - scale gsum) / count
     dw = dot invstd, db = gsum          (dx, dw, db NULL when not wanted) */
EK_CLONES static int SUF(batch_norm_backward)(const T *restrict g, const T *restrict x,
                                              const T *restrict w, const T *restrict mean,
                                              const T *restrict var, const T *restrict gmean,
                                              const T *restrict gvar, T *restrict dx,
                                              T *restrict dw, T *restrict db, int64_t N,
                                              int64_t C, int64_t L, double eps) {
    const int64_t cols = C * L, blocks = (cols + BN_BLOCK - 1) / BN_BLOCK;
    const T count = (T)(N * L);
    double *s = calloc((size_t)cols * 2, sizeof(double));
    T *mj = malloc((size_t)cols * 4 * sizeof(T));
    if (!s || !mj) { free(s); free(mj); return -1; }
    double *q = s + cols;
    T *sj = mj + cols, *c1j = sj + cols, *c2j = c1j + cols;
    for (int64_t c = 0; c < C; c++)
        for (int64_t l = 0; l < L; l++) mj[c * L + l] = mean[c];
    const int threads = N * cols >= EK_PARALLEL_MIN ? ek_num_threads() : 1;
    (void)threads;   /* (read by OpenMP's pragma only) */
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; blk++) {
            const int64_t j0 = blk * BN_BLOCK;
            const int64_t j1 = j0 + BN_BLOCK < cols ? j0 + BN_BLOCK : cols;
            for (int64_t n = 0; n < N; n++) {
                const T *restrict gr = g + n * cols, *restrict xr = x + n * cols;
                for (int64_t j = j0; j < j1; j++) {
                    s[j] += (double)gr[j];
                    q[j] += (double)(gr[j] * (xr[j] - mj[j]));
                }
            }
        }
#pragma omp single
        for (int64_t c = 0; c < C; c++) {
            double ts = 0, tq = 0;
            for (int64_t l = 0; l < L; l++) {
                ts += s[c * L + l];
                tq += q[c * L + l];
            }
            const T gsum = (T)ts, dot = (T)tq;
            const T invstd = (T)(1.0 / sqrt((double)var[c] + eps));
            const T scale = w ? invstd * w[c] : invstd;
            if (dw) dw[c] = dot * invstd;
            if (db) db[c] = gsum;
            const T c1 = ((gmean ? gmean[c] : 0) - scale * gsum) / count;
            const T c2 = (scale * invstd * invstd * dot - 2 * (gvar ? gvar[c] : 0)) / count;
            for (int64_t l = 0; l < L; l++) {
                sj[c * L + l] = scale;
                c1j[c * L + l] = c1;
                c2j[c * L + l] = c2;
            }
        }
        if (dx) {
#pragma omp for schedule(static)
            for (int64_t t = 0; t < N * blocks; t++) {
                const int64_t n = t / blocks, j0 = (t % blocks) * BN_BLOCK;
                const int64_t j1 = j0 + BN_BLOCK < cols ? j0 + BN_BLOCK : cols;
                const T *restrict gr = g + n * cols, *restrict xr = x + n * cols;
                T *restrict out = dx + n * cols;
                for (int64_t j = j0; j < j1; j++)
                    out[j] = gr[j] * sj[j] - (xr[j] - mj[j]) * c2j[j] + c1j[j];
            }
        }
    }
    free(s);
    free(mj);
    return 0;
}
