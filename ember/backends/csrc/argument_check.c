/* The argument parser's cache hit, compiled (ember/_signatures: `checked` and Parser.check
   are the definition).

   Every public function and method whose PyTorch counterpart checks its argument types
   first runs behind a checker; a call whose argument classes (and keyword names and classes)
   were accepted before is found in the parser's `_fits` set and goes straight to the
   function. This object does that lookup, building the same key, without a Python frame;
   every other call goes to the Python checker (`slow`), which checks, caches and raises.

   Why: the Python checker cost 0.5-0.9 us per call (relu 1.15 -> 1.75-2.1 us), more than the
   compiled door saves. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <stddef.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn, *fits, *slow, *dict;
    int method;
} checked_call;

/* The key Parser.check builds: the classes of the positional arguments, then (name, class)
   for each keyword argument, in order. */
static PyObject *call_key(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *key = PyTuple_New(nargs + nk);
    if (!key) return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *cls = (PyObject *)Py_TYPE(args[i]);
        Py_INCREF(cls);
        PyTuple_SET_ITEM(key, i, cls);
    }
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(kwnames, k),
                                      (PyObject *)Py_TYPE(args[nargs + k]));
        if (!pair) { Py_DECREF(key); return NULL; }
        PyTuple_SET_ITEM(key, nargs + k, pair);
    }
    return key;
}

static PyObject *checked_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames) {
    checked_call *self = (checked_call *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t skip = self->method ? 1 : 0;   /* (a method's self is not checked) */
    if (nargs >= skip) {
        PyObject *key = call_key(args + skip, nargs - skip, kwnames);
        if (!key) return NULL;
        int known = PySet_Contains(self->fits, key);
        Py_DECREF(key);
        if (known < 0) return NULL;
        if (known) return PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *checked_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None || !((checked_call *)self)->method) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int checked_traverse(PyObject *self, visitproc visit, void *arg) {
    checked_call *c = (checked_call *)self;
    Py_VISIT(c->fn); Py_VISIT(c->fits); Py_VISIT(c->slow); Py_VISIT(c->dict);
    return 0;
}

static int checked_clear(PyObject *self) {
    checked_call *c = (checked_call *)self;
    Py_CLEAR(c->fn); Py_CLEAR(c->fits); Py_CLEAR(c->slow); Py_CLEAR(c->dict);
    return 0;
}

static void checked_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    checked_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *checked_repr(PyObject *self) {
    return PyObject_Repr(((checked_call *)self)->fn);
}

/* copy.copy and copy.deepcopy give the object itself, as they give a function (modules
   holding an activation such as ember.tanh are deep-copied by nn.TransformerEncoder). */
static PyObject *checked_same(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_INCREF(self);
    return self;
}

/* Pickled by reference, as a function is: its __qualname__ inside its __module__. */
static PyObject *checked_reduce(PyObject *self, PyObject *noargs) {
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef checked_methods[] = {
    {"__reduce__", checked_reduce, METH_NOARGS, NULL},
    {"__copy__", (PyCFunction)(void (*)(void))checked_same, METH_FASTCALL, NULL},
    {"__deepcopy__", (PyCFunction)(void (*)(void))checked_same, METH_FASTCALL, NULL},
    {NULL}};

static PyGetSetDef checked_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL}};

static PyTypeObject checked_call_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.backends._kernels.checked_call",
    .tp_basicsize = sizeof(checked_call),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(checked_call, vectorcall),
    .tp_dictoffset = offsetof(checked_call, dict),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = checked_get,
    .tp_traverse = checked_traverse,
    .tp_clear = checked_clear,
    .tp_dealloc = checked_dealloc,
    .tp_repr = checked_repr,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_getset = checked_getset,
    .tp_methods = checked_methods,
};

/* checked_call(fn, fits, method, slow): fn behind the parser's cache `fits` (a set), every
   call it does not hold going to `slow`, the Python checker. */
static PyObject *py_checked_call(PyObject *self, PyObject *args) {
    PyObject *fn, *fits, *slow;
    int method;
    if (!PyArg_ParseTuple(args, "OO!pO", &fn, &PySet_Type, &fits, &method, &slow)) return NULL;
    if (PyType_Ready(&checked_call_type) < 0) return NULL;
    checked_call *c = PyObject_GC_New(checked_call, &checked_call_type);
    if (!c) return NULL;
    c->vectorcall = checked_vectorcall;
    Py_INCREF(fn); c->fn = fn;
    Py_INCREF(fits); c->fits = fits;
    Py_INCREF(slow); c->slow = slow;
    c->dict = NULL;
    c->method = method;
    PyObject_GC_Track((PyObject *)c);
    return (PyObject *)c;
}

PyMethodDef ek_argument_check_methods[] = {
    {"checked_call", py_checked_call, METH_VARARGS,
     "checked_call(fn, fits, method, slow): the argument parser's cache hit, compiled"},
    {NULL, NULL, 0, NULL}};
