/* ember.backends._kernels: the Python face of the compiled CPU kernels.

   Every function takes NumPy arrays (through the buffer protocol, so no NumPy headers are
   needed to build) and writes its result in place. The GIL stays held: the random kernels
   advance a generator's state, which PyTorch also guards with a lock. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "kernels.h"

/* A writable C-contiguous buffer of float32 ('f') or float64 ('d') elements. */
static int get_floats(PyObject *obj, Py_buffer *view, char *kind) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if ((f[0] == 'f' || f[0] == 'd') && f[1] == '\0') {
        *kind = f[0];
        return 0;
    }
    PyBuffer_Release(view);
    PyErr_Format(PyExc_TypeError, "expected a float32 or float64 array, got format '%s'", f);
    return -1;
}

static bitgen_t *get_bitgen(PyObject *capsule) {
    return (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator");
}

static PyObject *py_uniform(PyObject *self, PyObject *args) {
    PyObject *capsule, *out;
    int bits, fused;
    double low, span;
    if (!PyArg_ParseTuple(args, "OOiddp", &capsule, &out, &bits, &low, &span, &fused))
        return NULL;
    bitgen_t *g = get_bitgen(capsule);
    if (!g) return NULL;
    Py_buffer v;
    char kind;
    if (get_floats(out, &v, &kind) < 0) return NULL;
    int64_t n = v.len / v.itemsize;
    if (kind == 'd')
        ek_uniform_f64(g, (double *)v.buf, n, low, span, fused);
    else
        ek_uniform_f32(g, (float *)v.buf, n, bits, (float)low, (float)span, fused);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

static PyObject *py_normal(PyObject *self, PyObject *args) {
    PyObject *capsule, *out;
    double mean, std;
    int avx2, reduced;
    if (!PyArg_ParseTuple(args, "OOddpp", &capsule, &out, &mean, &std, &avx2, &reduced))
        return NULL;
    bitgen_t *g = get_bitgen(capsule);
    if (!g) return NULL;
    Py_buffer v;
    char kind;
    if (get_floats(out, &v, &kind) < 0) return NULL;
    int64_t n = v.len / v.itemsize;
    if (n < 16) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_ValueError, "normal fill needs at least 16 elements");
        return NULL;
    }
    if (kind == 'd')
        ek_normal_f64(g, (double *)v.buf, n, mean, std);
    else
        ek_normal_f32(g, (float *)v.buf, n, (float)mean, (float)std, avx2, reduced);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

static PyObject *py_libm(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *arr;
    if (!PyArg_ParseTuple(args, "sO", &name, &arr)) return NULL;
    Py_buffer v;
    char kind;
    if (get_floats(arr, &v, &kind) < 0) return NULL;
    int64_t n = v.len / v.itemsize;
    int rc = kind == 'd' ? ek_libm_f64(name, (double *)v.buf, n)
                         : ek_libm_f32(name, (float *)v.buf, n);
    PyBuffer_Release(&v);
    if (rc < 0) {
        PyErr_Format(PyExc_ValueError, "no C library function '%s'", name);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The x86 features PyTorch's capability check reads (cpuinfo: OS support included, as
   __builtin_cpu_supports checks XCR0 too). */
static PyObject *py_cpu_features(PyObject *self, PyObject *noargs) {
    PyObject *s = PySet_New(NULL);
    if (!s) return NULL;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    static const char *names[] = {"avx", "avx2", "fma", "avx512f", "avx512vl", "avx512bw",
                                  "avx512dq", NULL};
    int has[] = {__builtin_cpu_supports("avx"), __builtin_cpu_supports("avx2"),
                 __builtin_cpu_supports("fma"), __builtin_cpu_supports("avx512f"),
                 __builtin_cpu_supports("avx512vl"), __builtin_cpu_supports("avx512bw"),
                 __builtin_cpu_supports("avx512dq")};
    for (int k = 0; names[k]; k++) {
        if (!has[k]) continue;
        PyObject *name = PyUnicode_FromString(names[k]);
        if (!name || PySet_Add(s, name) < 0) { Py_XDECREF(name); Py_DECREF(s); return NULL; }
        Py_DECREF(name);
    }
#endif
    return s;
}

static PyMethodDef methods[] = {
    {"uniform", py_uniform, METH_VARARGS,
     "uniform(bitgen_capsule, out, bits, low, span, fused): uniform_ into out, in place"},
    {"normal", py_normal, METH_VARARGS,
     "normal(bitgen_capsule, out, mean, std, avx2, reduced): normal_fill into out (n >= 16)"},
    {"libm", py_libm, METH_VARARGS,
     "libm(name, array): the C library's function applied in place (float32 or float64)"},
    {"cpu_features", py_cpu_features, METH_NOARGS,
     "cpu_features(): the set of x86 SIMD features this CPU and OS support"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "ember's compiled CPU kernels", -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
