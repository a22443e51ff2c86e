/* ember.backends._kernels: the compiled CPU kernels as one Python module.

   The kernel files each bring a method table; this file joins them and adds what they share:
   argument buffers, the thread count, the CPU's features. The GIL stays held while a kernel
   runs (kernels are short; the random ones advance a generator's state, which PyTorch also
   guards with a lock). */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <string.h>

int ek_float_buffer(PyObject *obj, Py_buffer *view, char *kind, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if ((f[0] == 'f' || f[0] == 'd') && f[1] == '\0') {
        *kind = f[0];
        return 0;
    }
    PyBuffer_Release(view);
    PyErr_Format(PyExc_TypeError, "expected a float32 or float64 array, got format '%s'", f);
    return -1;
}

static int num_threads = 1;

int ek_num_threads(void) { return num_threads; }

static PyObject *py_set_num_threads(PyObject *self, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "the thread count must be positive");
        return NULL;
    }
#ifdef _OPENMP
    num_threads = (int)n;
    omp_set_num_threads(num_threads);
#endif
    Py_RETURN_NONE;
}

static PyObject *py_get_num_threads(PyObject *self, PyObject *noargs) {
    return PyLong_FromLong(num_threads);
}

static PyObject *py_has_openmp(PyObject *self, PyObject *noargs) {
#ifdef _OPENMP
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

/* The x86 features PyTorch's capability check reads (cpuinfo: OS support included, as
   __builtin_cpu_supports checks XCR0 too). */
static PyObject *py_cpu_features(PyObject *self, PyObject *noargs) {
    PyObject *s = PySet_New(NULL);
    if (!s) return NULL;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
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

static PyMethodDef shared_methods[] = {
    {"set_num_threads", py_set_num_threads, METH_O,
     "set_num_threads(n): threads the parallel kernels use"},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "get_num_threads()"},
    {"has_openmp", py_has_openmp, METH_NOARGS, "has_openmp(): built with OpenMP"},
    {"cpu_features", py_cpu_features, METH_NOARGS,
     "cpu_features(): the set of x86 SIMD features this CPU and OS support"},
    {NULL, NULL, 0, NULL}};

static PyMethodDef *tables[] = {shared_methods, ek_random_methods, ek_activation_methods,
                                ek_conv_methods,
                                ek_recurrent_methods, ek_gru_methods, ek_softmax_methods,
                                ek_normalization_methods, ek_dispatch_methods,
                                ek_autograd_methods, ek_optimizer_methods,
                                ek_argument_check_methods, ek_elementwise_methods,
                                ek_reduction_methods, ek_matmul_methods, ek_fused_methods,
                                NULL};
static PyMethodDef all_methods[128];

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "ember's compiled CPU kernels", -1, all_methods};

PyMODINIT_FUNC PyInit__kernels(void) {
    int k = 0;
    for (int t = 0; tables[t]; t++)
        for (PyMethodDef *m = tables[t]; m->ml_name; m++) {
            if (k + 1 >= (int)(sizeof all_methods / sizeof all_methods[0])) {
                PyErr_SetString(PyExc_ImportError, "too many kernels for the method table");
                return NULL;
            }
            all_methods[k++] = *m;
        }
    all_methods[k] = (PyMethodDef){NULL, NULL, 0, NULL};
#ifdef _OPENMP
    num_threads = omp_get_max_threads();   /* OMP_NUM_THREADS, else the CPU count */
#endif
    return PyModule_Create(&module);
}
