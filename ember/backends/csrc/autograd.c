/* The autograd engine's graph walk, compiled (autograd/graph.py `_topological_order` is the
   definition and the NumPy path's version; this is the same walk, step for step, so the
   order, and with it the order in which gradients are summed, is the same).

   Why: the walk visits every node of every backward() in Python, about a sixth of the
   engine's time per node on small graphs. */
#include "ember_kernels.h"   /* first: it includes Python.h */

typedef struct {
    PyObject **node;   /* borrowed: every node is kept alive by `seen` or the roots */
    char *expanded;
    Py_ssize_t size, capacity;
} walk_stack;

static int push(walk_stack *s, PyObject *node, char expanded) {
    if (s->size == s->capacity) {
        Py_ssize_t cap = s->capacity ? 2 * s->capacity : 64;
        PyObject **n = PyMem_Realloc(s->node, cap * sizeof(PyObject *));
        if (!n) { PyErr_NoMemory(); return -1; }
        s->node = n;
        char *e = PyMem_Realloc(s->expanded, cap);
        if (!e) { PyErr_NoMemory(); return -1; }
        s->expanded = e;
        s->capacity = cap;
    }
    s->node[s->size] = node;
    s->expanded[s->size] = expanded;
    s->size++;
    return 0;
}

/* topological_order(roots): the nodes reachable from roots, each after every node that
   feeds gradient into it (a depth-first walk over `edges`, without recursion). */
static PyObject *py_topological_order(PyObject *self, PyObject *roots) {
    static PyObject *str_edges = NULL;
    if (!str_edges && !(str_edges = PyUnicode_InternFromString("edges"))) return NULL;
    PyObject *fast = PySequence_Fast(roots, "roots must be a sequence");
    if (!fast) return NULL;
    PyObject *order = PyList_New(0), *seen = PySet_New(NULL);
    walk_stack stack = {NULL, NULL, 0, 0};
    if (!order || !seen) goto fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++)
        if (push(&stack, PySequence_Fast_GET_ITEM(fast, i), 0) < 0) goto fail;
    while (stack.size) {
        stack.size--;
        PyObject *node = stack.node[stack.size];
        if (stack.expanded[stack.size]) {
            if (PyList_Append(order, node) < 0) goto fail;
            continue;
        }
        int known = PySet_Contains(seen, node);
        if (known < 0) goto fail;
        if (known) continue;
        if (PySet_Add(seen, node) < 0 || push(&stack, node, 1) < 0) goto fail;
        PyObject *edges = PyObject_GetAttr(node, str_edges);
        if (!edges) goto fail;
        PyObject *edge_list = PySequence_Fast(edges, "edges must be a sequence");
        Py_DECREF(edges);
        if (!edge_list) goto fail;
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(edge_list); k++) {
            PyObject *e = PySequence_Fast_GET_ITEM(edge_list, k);
            if (e == Py_None) continue;
            PyObject *next = PyTuple_Check(e) && PyTuple_GET_SIZE(e) > 0
                                 ? PyTuple_GET_ITEM(e, 0) : NULL;
            if (!next) {
                PyErr_SetString(PyExc_TypeError, "an edge must be a (node, output_nr) tuple");
                Py_DECREF(edge_list);
                goto fail;
            }
            int visited = PySet_Contains(seen, next);
            if (visited < 0 || (!visited && push(&stack, next, 0) < 0)) {
                Py_DECREF(edge_list);
                goto fail;
            }
        }
        /* (the edge list is kept by its node, itself kept by `seen`, so the borrowed
           pointers pushed above stay valid) */
        Py_DECREF(edge_list);
    }
    PyMem_Free(stack.node);
    PyMem_Free(stack.expanded);
    Py_DECREF(seen);
    Py_DECREF(fast);
    if (PyList_Reverse(order) < 0) { Py_DECREF(order); return NULL; }
    return order;
fail:
    PyMem_Free(stack.node);
    PyMem_Free(stack.expanded);
    Py_XDECREF(order);
    Py_XDECREF(seen);
    Py_DECREF(fast);
    return NULL;
}

PyMethodDef ek_autograd_methods[] = {
    {"topological_order", py_topological_order, METH_O,
     "topological_order(roots): autograd/graph.py's _topological_order, compiled"},
    {NULL, NULL, 0, NULL}};
