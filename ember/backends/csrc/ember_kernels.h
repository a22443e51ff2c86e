/* ember's compiled CPU kernels: what every kernel file shares.

   Layout: one C file per family of kernels (random.c, ...), each ending with its Python
   wrappers and a method table; module.c joins the tables into ember.backends._kernels.
   Python sees each kernel as one function taking NumPy arrays (through the buffer protocol,
   so no NumPy headers are needed to build) and writing its result into an array it is given. */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* One build runs on every x86-64 CPU: a hot loop marked EK_CLONES is compiled for x86-64-v4
   (AVX-512), x86-64-v3 (AVX2 and FMA) and the baseline, and the loader picks the clone for the
   CPU at hand. Kernels whose bits must not depend on the clone write every rounding step out
   (fmaf where a fused multiply-add is meant; the file is built with -ffp-contract=off). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(__clang__)
#define EK_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EK_CLONES
#endif

/* Elements from which a row kernel (softmax, the norms) and + - * / run on a thread team.
   NOTE: the team's threads spin for a while after each loop (OpenMP's default wait policy,
   cpu_kernels.py), so a loop inside a training step finds them awake: a team of two halved
   GELU's time from 32K float32 elements (20 us), and softmax's and the adds' from 128K
   (PyTorch's grain is 32K elements). A loop parallelises from about 64K float32 elements
   (10-25 us on one thread), half as many float64 (twice the time per element). Kernels with
   more or less work per element set thresholds of their own (GELU, the LSTM gates and exp
   lower, the whole-array sum higher). */
#define EK_PARALLEL_MIN_F32 (1 << 16)
#define EK_PARALLEL_MIN_F64 (1 << 15)

/* NumPy's bit generator interface (numpy/random/bitgen.h, a documented, stable layout):
   a BitGenerator's `capsule` attribute holds a pointer to one of these. */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

/* The buffer of `obj` as C-contiguous float32 ('f') or float64 ('d') elements, writable when
   asked; sets a TypeError and returns -1 otherwise. Release with PyBuffer_Release. */
int ek_float_buffer(PyObject *obj, Py_buffer *view, char *kind, int writable);

/* Threads a kernel may use (set_num_threads); 1 without OpenMP. */
int ek_num_threads(void);

/* The method tables of the kernel files, joined by module.c (each ends with {NULL}). */
extern PyMethodDef ek_random_methods[];
extern PyMethodDef ek_activation_methods[];
extern PyMethodDef ek_recurrent_methods[];
extern PyMethodDef ek_gru_methods[];
extern PyMethodDef ek_conv_methods[];
extern PyMethodDef ek_softmax_methods[];
extern PyMethodDef ek_normalization_methods[];
extern PyMethodDef ek_dispatch_methods[];
extern PyMethodDef ek_autograd_methods[];
extern PyMethodDef ek_optimizer_methods[];
extern PyMethodDef ek_argument_check_methods[];
extern PyMethodDef ek_elementwise_methods[];
extern PyMethodDef ek_reduction_methods[];
extern PyMethodDef ek_matmul_methods[];
extern PyMethodDef ek_fused_methods[];

#endif
