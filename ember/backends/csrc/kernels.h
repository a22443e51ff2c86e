/* ember's compiled CPU kernels: what the Python bindings (module.c) call. */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H
#include <stdint.h>

/* NumPy's bit generator interface (numpy/random/bitgen.h, a documented, stable layout):
   a BitGenerator's `capsule` attribute holds a pointer to one of these. */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

void ek_uniform_f32(bitgen_t *g, float *out, int64_t n, int bits, float low, float span,
                    int fused);
void ek_uniform_f64(bitgen_t *g, double *out, int64_t n, double low, double span, int fused);
void ek_normal_f32(bitgen_t *g, float *d, int64_t n, float mean, float std, int avx2,
                   int reduced);
void ek_normal_f64(bitgen_t *g, double *d, int64_t n, double mean, double std);
int ek_libm_f64(const char *name, double *x, int64_t n);
int ek_libm_f32(const char *name, float *x, int64_t n);

#endif
