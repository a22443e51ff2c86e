/* The arguments of a kernel's Python wrapper as float buffers: several arrays of one float
   kind (float32 or float64), some written, some optional (None). Shared by softmax.c and
   normalization.c; each function is static so that every file keeps its own copy. */
#ifndef EMBER_FLOAT_ARGS_H
#define EMBER_FLOAT_ARGS_H
#include "ember_kernels.h"

static void ek_release_args(Py_buffer *views, int count) {
    for (int k = 0; k < count; k++)
        if (views[k].obj) PyBuffer_Release(&views[k]);
}

/* spec[k] for objs[k]: 'r' read, 'w' written, 'o' read or None, 'O' written or None (None:
   buf NULL). Returns 0 with the kind in *kind, or -1 with an exception set and no buffer
   held. */
static int ek_float_args(PyObject **objs, Py_buffer *views, const char *spec, char *kind) {
    const int count = (int)strlen(spec);
    *kind = 0;
    for (int k = 0; k < count; k++) {
        views[k].obj = NULL;
        views[k].buf = NULL;
        views[k].len = 0;
        if ((spec[k] == 'o' || spec[k] == 'O') && objs[k] == Py_None) continue;
        char kk;
        if (ek_float_buffer(objs[k], &views[k], &kk, spec[k] == 'w' || spec[k] == 'O') < 0) {
            views[k].obj = NULL;
            ek_release_args(views, k);
            return -1;
        }
        if (*kind && kk != *kind) {
            ek_release_args(views, k + 1);
            PyErr_SetString(PyExc_TypeError, "the arrays must have one float dtype");
            return -1;
        }
        *kind = kk;
    }
    return 0;
}

/* 0 when views[k] (unless NULL) holds `count` elements of its kind, else -1 with a
   ValueError naming `what` */
static int ek_check_size(const Py_buffer *view, int64_t count, const char *what) {
    if (!view->obj || view->len == count * view->itemsize) return 0;
    PyErr_Format(PyExc_ValueError, "%s: expected %lld elements, got %lld", what,
                 (long long)count, (long long)(view->len / view->itemsize));
    return -1;
}

#endif
