/* Fused elementwise chains: what ember.compile runs in place of a captured run of
   elementwise ops (_compile/fusion.py builds the program).

   A program is a list of instructions (op, dst, a, b) over registers: first the input
   arrays, then the scalars, then the output arrays, then scratch registers that hold the
   chain's intermediate values, which are never written to memory as arrays. The elements go
   in blocks of EF_BLOCK: every instruction runs over one block before the next block starts,
   so the intermediates stay in L1 and the whole chain is one call instead of one per op.

   Each instruction computes exactly what the eager op's kernel computes, one IEEE operation
   per element (the file is built with -ffp-contract=off): relu is NumPy's maximum(x, 0) (nan
   kept, -0 to +0), threshold_backward is PyTorch's select (0 where output <= 0, else g). So a
   fused chain gives eager's bits, at any thread count (elements are independent). */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <stdlib.h>
#include <string.h>

enum { EF_ADD, EF_SUB, EF_MUL, EF_DIV, EF_NEG, EF_RELU, EF_THRESHOLD_BACKWARD, EF_OPS };

#define EF_BLOCK 512

static int thread_index(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* One block of `len` elements through every instruction. `d` never shares a register with
   `x` or `y` (fusion.py allocates a destination before freeing its sources). */
#define RUN_BLOCK(NAME, T)                                                                    \
    EK_CLONES static void NAME(const int32_t *prog, int count, T **reg, int64_t len) {      \
        for (int k = 0; k < count; k++) {                                                    \
            const int32_t *q = prog + 4 * k;                                                 \
            T *restrict d = reg[q[1]];                                                       \
            const T *x = reg[q[2]], *y = reg[q[3]];                                          \
            switch (q[0]) {                                                                  \
            case EF_ADD: for (int64_t i = 0; i < len; i++) d[i] = x[i] + y[i]; break;        \
            case EF_SUB: for (int64_t i = 0; i < len; i++) d[i] = x[i] - y[i]; break;        \
            case EF_MUL: for (int64_t i = 0; i < len; i++) d[i] = x[i] * y[i]; break;        \
            case EF_DIV: for (int64_t i = 0; i < len; i++) d[i] = x[i] / y[i]; break;        \
            case EF_NEG: for (int64_t i = 0; i < len; i++) d[i] = -x[i]; break;              \
            case EF_RELU:                                                                    \
                for (int64_t i = 0; i < len; i++)                                            \
                    d[i] = x[i] != x[i] ? x[i] : (x[i] > 0 ? x[i] : (T)0);                   \
                break;                                                                       \
            default:                                                                         \
                for (int64_t i = 0; i < len; i++) d[i] = y[i] <= 0 ? (T)0 : x[i];             \
            }                                                                                \
        }                                                                                    \
    }
RUN_BLOCK(block_f32, float)
RUN_BLOCK(block_f64, double)

typedef struct {
    const int32_t *prog;
    int count, inputs, scalars, outputs, scratch;
    void **bufs;           /* the inputs' then the outputs' memory */
    const double *values;  /* the scalars */
    const char *single;    /* per input: 1 when it is one element standing for all n */
    int64_t n;
} chain_t;

/* The chain over all n elements, blocks shared by the team from the threshold where + - * /
   use it. Each thread has its own scalar and scratch registers. 0, or -1 without memory. */
#define RUN_CHAIN(NAME, BLOCKFN, T, MIN_PARALLEL)                                             \
    static int NAME(const chain_t *c) {                                                       \
        const int nreg = c->inputs + c->scalars + c->outputs + c->scratch;                   \
        const int threads = c->n >= (MIN_PARALLEL) ? ek_num_threads() : 1;                   \
        const int64_t blocks = (c->n + EF_BLOCK - 1) / EF_BLOCK;                             \
        int singles = 0;                                                                     \
        for (int i = 0; i < c->inputs; i++) singles += c->single[i];                         \
        const size_t own = (size_t)(c->scalars + c->scratch + singles) * EF_BLOCK;           \
        T *work = malloc((size_t)threads * (own ? own : 1) * sizeof(T));                     \
        T **regs = malloc((size_t)threads * nreg * sizeof(T *));                             \
        if (!work || !regs) {                                                                \
            free(work);                                                                      \
            free(regs);                                                                      \
            return -1;                                                                       \
        }                                                                                    \
        _Pragma("omp parallel num_threads(threads) if (threads > 1)")                       \
        {                                                                                    \
            const int t = thread_index();                                                 \
            T *mine = work + (size_t)t * own;                                                \
            T **reg = regs + (size_t)t * nreg;                                               \
            for (int s = 0; s < c->scalars; s++) {                                           \
                reg[c->inputs + s] = mine + (size_t)s * EF_BLOCK;                            \
                for (int i = 0; i < EF_BLOCK; i++) reg[c->inputs + s][i] = (T)c->values[s];  \
            }                                                                                \
            const int first_scratch = c->inputs + c->scalars + c->outputs;                   \
            for (int s = 0; s < c->scratch; s++)                                             \
                reg[first_scratch + s] = mine + (size_t)(c->scalars + s) * EF_BLOCK;         \
            T *fill = mine + (size_t)(c->scalars + c->scratch) * EF_BLOCK;                   \
            for (int i = 0; i < c->inputs; i++) {                                            \
                if (!c->single[i]) continue;                                                 \
                reg[i] = fill;                                                               \
                for (int j = 0; j < EF_BLOCK; j++) fill[j] = *(const T *)c->bufs[i];         \
                fill += EF_BLOCK;                                                            \
            }                                                                                \
            _Pragma("omp for schedule(static)")                                              \
            for (int64_t b = 0; b < blocks; b++) {                                           \
                const int64_t start = b * EF_BLOCK;                                          \
                const int64_t len = c->n - start < EF_BLOCK ? c->n - start : EF_BLOCK;       \
                for (int i = 0; i < c->inputs; i++)                                          \
                    if (!c->single[i]) reg[i] = (T *)c->bufs[i] + start;                     \
                for (int o = 0; o < c->outputs; o++)                                         \
                    reg[c->inputs + c->scalars + o] = (T *)c->bufs[c->inputs + o] + start;   \
                BLOCKFN(c->prog, c->count, reg, len);                                        \
            }                                                                                \
        }                                                                                    \
        free(work);                                                                          \
        free(regs);                                                                          \
        return 0;                                                                            \
    }
RUN_CHAIN(chain_f32, block_f32, float, EK_PARALLEL_MIN_F32)
RUN_CHAIN(chain_f64, block_f64, double, EK_PARALLEL_MIN_F64)

/* 0 when every instruction reads registers that exist and writes an output or scratch one,
   else -1 with a ValueError: a bad program must not write outside its buffers. */
static int check_program(const chain_t *c) {
    const int writable = c->inputs + c->scalars;
    const int nreg = writable + c->outputs + c->scratch;
    for (int k = 0; k < c->count; k++) {
        const int32_t *q = c->prog + 4 * k;
        if (q[0] < 0 || q[0] >= EF_OPS || q[1] < writable || q[1] >= nreg || q[2] < 0 ||
            q[2] >= nreg || q[3] < 0 || q[3] >= nreg || q[1] == q[2] || q[1] == q[3]) {
            PyErr_Format(PyExc_ValueError, "fused_chain: bad instruction %d", k);
            return -1;
        }
    }
    return 0;
}

/* Buffers of the arrays in `seq` (a tuple) into views[0..], all of one float kind and n
   elements (the first one sets them when *n < 0), or one element where `single` is given
   (single[k] set to whether it is). 0, or -1 with every view released. */
static int chain_buffers(PyObject *seq, Py_buffer *views, int writable, char *kind,
                         int64_t *n, char *single) {
    const Py_ssize_t count = PyTuple_GET_SIZE(seq);
    for (Py_ssize_t k = 0; k < count; k++) {
        char kk;
        if (ek_float_buffer(PyTuple_GET_ITEM(seq, k), &views[k], &kk, writable) < 0) {
            for (Py_ssize_t j = 0; j < k; j++) PyBuffer_Release(&views[j]);
            return -1;
        }
        const int64_t len = views[k].len / views[k].itemsize;
        if (*n < 0) {
            *n = len;
            *kind = kk;
        }
        if (single) single[k] = len == 1 && *n != 1;
        if (kk != *kind || (len != *n && !(single && single[k]))) {
            for (Py_ssize_t j = 0; j <= k; j++) PyBuffer_Release(&views[j]);
            PyErr_SetString(PyExc_ValueError,
                            "fused_chain: the arrays must have one float dtype and one size");
            return -1;
        }
    }
    return 0;
}

/* fused_chain(program: bytes, inputs: tuple, scalars: tuple, outputs: tuple, scratch: int):
   runs the program (int32 quads: op, dst, a, b), writing the outputs. An input of one
   element stands for all n (an operand broadcast from one value, as sum's gradient is). */
static PyObject *py_fused_chain(PyObject *self, PyObject *args) {
    Py_buffer prog;
    PyObject *inputs, *scalars, *outputs;
    int scratch;
    if (!PyArg_ParseTuple(args, "y*O!O!O!i", &prog, &PyTuple_Type, &inputs, &PyTuple_Type,
                          &scalars, &PyTuple_Type, &outputs, &scratch))
        return NULL;
    chain_t c = {prog.buf, (int)(prog.len / 16), (int)PyTuple_GET_SIZE(inputs),
                 (int)PyTuple_GET_SIZE(scalars), (int)PyTuple_GET_SIZE(outputs), scratch,
                 NULL, NULL, NULL, -1};
    PyObject *result = NULL;
    const int arrays = c.inputs + c.outputs;
    Py_buffer *views = calloc(arrays ? arrays : 1, sizeof(Py_buffer));
    void **bufs = calloc(arrays ? arrays : 1, sizeof(void *));
    double *values = calloc(c.scalars ? c.scalars : 1, sizeof(double));
    char *single = calloc(c.inputs ? c.inputs : 1, 1);
    char kind = 0;
    if (!views || !bufs || !values || !single) {
        PyErr_NoMemory();
        goto done;
    }
    if (prog.len % 16 || c.outputs < 1 || scratch < 0 || check_program(&c) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "fused_chain: bad program");
        goto done;
    }
    for (int s = 0; s < c.scalars; s++) {
        values[s] = PyFloat_AsDouble(PyTuple_GET_ITEM(scalars, s));
        if (values[s] == -1.0 && PyErr_Occurred()) goto done;
    }
    /* the outputs first: they have all n elements */
    if (chain_buffers(outputs, views + c.inputs, 1, &kind, &c.n, NULL) < 0) goto done;
    if (chain_buffers(inputs, views, 0, &kind, &c.n, single) < 0) {
        for (int k = 0; k < c.outputs; k++) PyBuffer_Release(&views[c.inputs + k]);
        goto done;
    }
    for (int k = 0; k < arrays; k++) bufs[k] = views[k].buf;
    c.bufs = bufs;
    c.values = values;
    c.single = single;
    if ((kind == 'f' ? chain_f32(&c) : chain_f64(&c)) < 0)
        PyErr_NoMemory();
    else
        result = Py_NewRef(Py_None);
    for (int k = 0; k < arrays; k++) PyBuffer_Release(&views[k]);
done:
    PyBuffer_Release(&prog);
    free(views);
    free(bufs);
    free(values);
    free(single);
    return result;
}

PyMethodDef ek_fused_methods[] = {
    {"fused_chain", py_fused_chain, METH_VARARGS,
     "fused_chain(program, inputs, scalars, outputs, scratch): a captured elementwise chain"},
    {NULL, NULL, 0, NULL}};
