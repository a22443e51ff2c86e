/* Float32 matrix products on gemm.c's kernel and the thread team: 2-D and batched, operands in
   any strides (nn.Linear's x @ W^T, and its backward's g @ W and g^T @ x, read in place), an
   optional bias added to the product (addmm).

   Threads: a batch of products splits by whole products when it has enough of them; one
   product splits by panels of C's rows or columns (gemm.c's ek_sgemm_team). Either way each
   element of C is computed by one thread in one order, so the thread count never changes a
   bit, and no thread waits for another. */
#include "ember_kernels.h"   /* first: it includes Python.h */
#include "gemm.h"

#include <stdlib.h>

/* Multiply-adds from which a product runs on the team: about 10 us on one core (the team's
   threads are awake inside a training step: ember_kernels.h) */
#define PARALLEL_MIN_FMAS (1 << 20)

/* The buffer of a float32 array with its strides: 1, or 0 (nothing held) when obj is not
   one, or its strides are not whole elements. */
static int strided_f32(PyObject *obj, Py_buffer *v) {
    if (PyObject_GetBuffer(obj, v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *f = v->format ? v->format : "B";
    int ok = f[0] == 'f' && f[1] == '\0';
    for (int d = 0; ok && d < v->ndim; d++) ok = v->strides[d] % (Py_ssize_t)sizeof(float) == 0;
    if (!ok) PyBuffer_Release(v);
    return ok;
}

/* Element offset of batch item t in a buffer whose leading `dims` dims are the batch */
static int64_t batch_offset(const Py_buffer *v, int dims, int64_t t) {
    int64_t off = 0;
    for (int d = dims - 1; d >= 0; d--) {
        off += t % v->shape[d] * (v->strides[d] / (Py_ssize_t)sizeof(float));
        t /= v->shape[d];
    }
    return off;
}

typedef struct {
    ek_sgemm_args g;           /* item 0's product */
    const Py_buffer *a, *b;    /* the operands' buffers, for the batch offsets */
    int dims;                  /* batch dims */
    int64_t count, c_step;     /* items, and C's elements per item (C is C-contiguous) */
} batch;

static ek_sgemm_args item(const batch *bt, int64_t t) {
    ek_sgemm_args g = bt->g;
    g.a += batch_offset(bt->a, bt->dims, t);
    g.b += batch_offset(bt->b, bt->dims, t);
    g.c += t * bt->c_step;
    return g;
}

/* Scratch floats kept from call to call (the GIL serialises the calls): the threads' packed
   blocks (about 1.2 MiB each) are over glibc's mmap threshold, so a fresh allocation would
   come from the system, its pages faulted in, on every call. */
static float *scratch;
static int64_t scratch_floats;

static float *scratch_of(int64_t floats) {
    if (floats > scratch_floats) {
        free(scratch);
        scratch = malloc((size_t)floats * sizeof(float));
        scratch_floats = scratch ? floats : 0;
    }
    return scratch;
}

/* 0, or -1 when memory is short. */
static int run(const batch *bt, int parts) {
    const int64_t own_floats = ek_sgemm_own_floats(&bt->g);
    float *buf = scratch_of(parts * own_floats);
    if (!buf) return -1;
    /* many items: whole items per thread; few: each item split among the team */
    const int by_items = bt->count % parts == 0 || bt->count >= 4 * parts;
#pragma omp parallel num_threads(parts) if (parts > 1)
    {
        int id = 0, team = 1;
#ifdef _OPENMP
        id = omp_get_thread_num(), team = omp_get_num_threads();
#endif
        float *own = buf + id * own_floats;
        if (by_items) {
#pragma omp for schedule(static)
            for (int64_t t = 0; t < bt->count; t++) {
                const ek_sgemm_args g = item(bt, t);
                ek_sgemm_team(&g, own, 0, 1);
            }
        } else {
            for (int64_t t = 0; t < bt->count; t++) {
                const ek_sgemm_args g = item(bt, t);
                ek_sgemm_team(&g, own, id, team);
            }
        }
    }
    return 0;
}

/* Multiply-adds up to which OpenBLAS runs a product on the calling thread alone (its
   interface's threshold: 65536 times GEMM_MULTITHREAD_THRESHOLD, 4) */
#define BLAS_ALONE_UP_TO (1 << 18)

/* Whether the tiles take a product, rather than NumPy's BLAS: every matrix product BLAS would
   share among its own threads, and smaller ones where B is read along its columns.
   NOTE: after a shared product OpenBLAS's threads spin for about 2^28 cycles, on the cores
   ember's team needs for the kernels that follow (a LeNet step on 2 threads: 8.0 ms with its
   small Linear backwards on BLAS, 5.0 without), so the tiles take those even where they
   waste lanes (128 x 256 x 10: 12.8 us against BLAS's 8.6 on one thread; 4096 x 1024 x 2,
   memory-bound, 1.6 ms against 1.2). The rule does not look at the thread count: a product's
   bits stay the same on any number of threads. Below the threshold BLAS wins (64 x 64 x 64:
   4.5 us against 3.7; a GPT's attention backward, 64 products of 64 x 64 x 32 with A
   transposed, 156 us against 109: packing and the call cost more than the tiles save),
   except when B is read along its columns (q @ k^T, x @ W^T), which NumPy's matmul handles
   worse (attention's 64 products of 64 x 32 x 64: 131 us against 200; 10 x 128 x 256: 9.3
   against 18.5), and for few rows or columns, whose lanes the tiles would mostly waste. A
   matrix-vector product (one row or column) stays BLAS's gemv: 1 x 4096 x 4096 took 6.8 ms
   on the tiles on 2 threads, against 2.1. */
static int worth_it(int64_t m, int64_t n, int64_t k, int64_t b_cs) {
    const int64_t fmas = m * n * k;
    if (m == 1 || n == 1) return 0;
    if (fmas > BLAS_ALONE_UP_TO) return 1;
    return b_cs != 1 && fmas >= (1 << 14) && 2 * m >= ek_sgemm_mr() && 2 * n >= ek_sgemm_nr();
}

/* numpy.empty and numpy.float32, found on first use (no NumPy headers at build time) */
static PyObject *np_empty, *np_float32;

static PyObject *new_f32(const Py_buffer *like, int dims, int64_t m, int64_t n) {
    if (!np_empty) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np) return NULL;
        np_empty = PyObject_GetAttrString(np, "empty");
        np_float32 = PyObject_GetAttrString(np, "float32");
        Py_DECREF(np);
        if (!np_empty || !np_float32) {
            Py_CLEAR(np_empty);
            Py_CLEAR(np_float32);
            return NULL;
        }
    }
    PyObject *shape = PyTuple_New(dims + 2);
    if (!shape) return NULL;
    for (int d = 0; d < dims + 2; d++) {
        PyObject *size = PyLong_FromLongLong(d < dims ? like->shape[d] : d == dims ? m : n);
        if (!size) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, d, size);
    }
    PyObject *out = PyObject_CallFunctionObjArgs(np_empty, shape, np_float32, NULL);
    Py_DECREF(shape);
    return out;
}

/* The bias's strides as an (m, n) array, broadcasting as NumPy does; 0 when it does not
   broadcast to (m, n). */
static int bias_strides(const Py_buffer *v, int64_t m, int64_t n, int64_t *rs, int64_t *cs) {
    int64_t size[2] = {1, 1}, st[2] = {0, 0};
    if (v->ndim > 2) return 0;
    for (int d = 0; d < v->ndim; d++) {
        size[2 - v->ndim + d] = v->shape[d];
        st[2 - v->ndim + d] = v->strides[d] / (Py_ssize_t)sizeof(float);
    }
    if ((size[0] != m && size[0] != 1) || (size[1] != n && size[1] != 1)) return 0;
    *rs = size[0] == 1 ? 0 : st[0];
    *cs = size[1] == 1 ? 0 : st[1];
    return 1;
}

/* sgemm(a, b, bias): a @ b (+ bias), a new float32 array, or None, leaving the product to
   NumPy, when this CPU has no kernel, the arrays are not all float32, their shapes do not
   multiply or BLAS is faster at them (worth_it). a (..., M, K) and b (..., K, N) in any
   strides, with the same batch dims (the caller broadcasts them); bias None or broadcasting
   to (M, N), in any strides, with 2-D a and b. */
static PyObject *py_sgemm(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "sgemm(a, b, bias)");
        return NULL;
    }
    if (!ek_sgemm_mr()) Py_RETURN_NONE;
    Py_buffer v[3];
    const int nviews = args[2] == Py_None ? 2 : 3;
    int held = 0;
    while (held < nviews && strided_f32(args[held], &v[held])) held++;
    PyObject *out = NULL;
    int nd = held == nviews ? v[0].ndim : 0;
    int ok = nd >= 2 && v[1].ndim == nd && (nviews == 2 || nd == 2);
    for (int d = 0; ok && d < nd - 2; d++) ok = v[0].shape[d] == v[1].shape[d];
    const int64_t m = ok ? v[0].shape[nd - 2] : 0, k = ok ? v[0].shape[nd - 1] : 0;
    const int64_t n = ok ? v[1].shape[nd - 1] : 0;
#define ST(i, d) (int64_t)(v[i].strides[d] / (Py_ssize_t)sizeof(float))
    ok = ok && v[1].shape[nd - 2] == k && worth_it(m, n, k, ST(1, nd - 1));
    batch bt = {{m, n, k, NULL, 0, 0, NULL, 0, 0, NULL, n, NULL, 0, 0}, &v[0], &v[1], nd - 2,
                1, m * n};
    ok = ok && (nviews == 2 || bias_strides(&v[2], m, n, &bt.g.bias_rs, &bt.g.bias_cs));
    if (ok) out = new_f32(&v[0], nd - 2, m, n);
    Py_buffer vc;
    if (out && PyObject_GetBuffer(out, &vc, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0)
        Py_CLEAR(out);
    if (out) {
        bt.g.a = v[0].buf, bt.g.a_rs = ST(0, nd - 2), bt.g.a_cs = ST(0, nd - 1);
        bt.g.b = v[1].buf, bt.g.b_rs = ST(1, nd - 2), bt.g.b_cs = ST(1, nd - 1);
        bt.g.c = vc.buf;
        bt.g.bias = nviews == 3 ? v[2].buf : NULL;
        for (int d = 0; d < nd - 2; d++) bt.count *= v[0].shape[d];
        const int64_t fmas = bt.count * m * n * k;
        const int parts = fmas >= PARALLEL_MIN_FMAS ? ek_num_threads() : 1;
        if (bt.count * m * n && run(&bt, parts) < 0) {
            Py_CLEAR(out);
            PyErr_NoMemory();
        }
        PyBuffer_Release(&vc);
    }
#undef ST
    for (int i = 0; i < held; i++) PyBuffer_Release(&v[i]);
    if (!out && !PyErr_Occurred()) Py_RETURN_NONE;
    return out;
}

PyMethodDef ek_matmul_methods[] = {
    {"sgemm", (PyCFunction)(void (*)(void))py_sgemm, METH_FASTCALL,
     "sgemm(a, b, bias): a @ b (+ bias) for float32 arrays in any strides, a new array (None: "
     "NumPy instead)"},
    {NULL, NULL, 0, NULL}};
