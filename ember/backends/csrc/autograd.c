/* The autograd engine's loops, compiled. autograd/graph.py holds the definitions, and the
   NumPy path's versions: `_topological_order` (the order of the nodes) and `_walk` with
   `apply_vjp` (the backward loop of the common call). These twins run the same steps in the
   same order, so gradients are summed in the same order and come out the same bits; a node
   with anything unusual (hooks, a complex result, a leaf's accumulation) is handed to the
   Python functions themselves.

   Why: on small graphs the loops cost about as much as the VJPs they call (an autograd chain
   of 4-element ops spent 2.7 us per node in backward, PyTorch 2.3). */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include "slots.h"

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

/* What the walk calls back into (autograd/graph.py, set by walk_setup). */
static PyObject *graph_globals, *accumulate_type, *tensor_hooks, *accumulate_leaf,
    *apply_vjp, *unbroadcast, *cast_grad, *sum_grads;
static PyObject *s_pre_hooks, *s_retains, *s_hooks, *s_conj_around, *s_out, *s_running,
    *s_shape, *s_out_meta, *s_check_saved, *s_fill_missing, *s_free, *s_data, *s_dtype;

static int is_none_attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

/* The node needs nothing but its VJP and the edges (no hook of any kind, a real result, a
   registry op): the loop below runs it; else 0 and Python's apply_vjp does. */
static int plain_node(PyObject *node) {
    if (!PyObject_TypeCheck(node, ek_node_type)) return 0;
    PyObject *op = SLOT(node, ek_node_slot.op);
    if (!op || Py_TYPE(op) != ek_op_type) return 0;
    int r;
    if ((r = is_none_attr(node, s_hooks)) <= 0) return r;
    PyObject *conj = PyObject_GetAttr(node, s_conj_around);
    if (!conj) return -1;
    r = conj == Py_False;
    Py_DECREF(conj);
    return r;
}

static int call_method_noargs(PyObject *obj, PyObject *name) {
    PyObject *r = PyObject_CallMethodNoArgs(obj, name);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Node.check_saved's common case without a Python call (autograd/node.py is the
   definition): 1 when every saved input's version counter, and a saved output's, still
   reads the version recorded; 0 when one moved or the node was freed (the Python method
   then raises PyTorch's error); -1 on an error. */
static PyObject *s_v;

static int version_is(PyObject *counter, PyObject *expected) {
    PyObject *now = PyObject_GetAttr(counter, s_v);
    if (!now) return -1;
    int same = PyObject_RichCompareBool(now, expected, Py_EQ);
    Py_DECREF(now);
    return same;
}

static int saved_unchanged(PyObject *node, PyObject *saved) {
    if (saved && saved != Py_None) {
        PyObject *inputs = SLOT(node, ek_node_slot.inputs);
        if (!PyList_CheckExact(saved) || !inputs ||
            !(PyList_CheckExact(inputs) || PyTuple_CheckExact(inputs)) ||
            PySequence_Fast_GET_SIZE(inputs) != PyList_GET_SIZE(saved))
            return 0;   /* (freed, or a layout the Python method knows) */
        PyObject *const *items = PySequence_Fast_ITEMS(inputs);
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE(saved); k++) {
            PyObject *v = PyList_GET_ITEM(saved, k);
            if (v == Py_None) continue;
            if (!PyObject_TypeCheck(items[k], ek_tensor_type)) return 0;
            int same = version_is(SLOT(items[k], ek_tensor_slot.vc), v);
            if (same <= 0) return same;
        }
    }
    PyObject *out = PyObject_GetAttr(node, s_out);
    if (!out) return -1;
    int same = 1;
    if (out != Py_None)
        same = PyTuple_CheckExact(out) && PyTuple_GET_SIZE(out) == 4 ?
            version_is(PyTuple_GET_ITEM(out, 2), PyTuple_GET_ITEM(out, 3)) : 0;
    Py_DECREF(out);
    return same;
}

/* Node.free without a Python call (the definition is autograd/node.py): the saved inputs
   and output dropped, saved_versions marked freed. */
static PyObject *freed_mark;   /* node.py's _FREED */

static void slot_replace(PyObject *obj, Py_ssize_t offset, PyObject *value) {
    PyObject *old = SLOT(obj, offset);
    Py_INCREF(value);
    SLOT(obj, offset) = value;
    Py_XDECREF(old);
}

static int free_saved(PyObject *node) {
    int out_none = is_none_attr(node, s_out);
    if (out_none < 0) return -1;
    if (!freed_mark) return call_method_noargs(node, s_free);
    if (!out_none && PyObject_SetAttr(node, s_out, Py_None) < 0) return -1;
    slot_replace(node, ek_node_slot.inputs, Py_None);
    slot_replace(node, ek_node_slot.saved_versions, freed_mark);
    return 0;
}

/* apply_vjp for a plain node (see autograd/graph.py), step for step. */
static int run_plain_node(PyObject *node, PyObject *node_grads, PyObject *grads,
                          int retain_graph) {
    PyObject *op = SLOT(node, ek_node_slot.op);
    PyObject *saved = SLOT(node, ek_node_slot.saved_versions);
    int out_none = is_none_attr(node, s_out);
    if (out_none < 0) return -1;
    if ((saved && saved != Py_None) || !out_none) {
        int same = saved_unchanged(node, saved);
        if (same < 0) return -1;
        if (!same && call_method_noargs(node, s_check_saved) < 0) return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(node_grads);
    if (n > 1)
        for (Py_ssize_t k = 0; k < n; k++)
            if (PyList_GET_ITEM(node_grads, k) == Py_None) {
                PyObject *r = PyObject_CallMethodOneArg(node, s_fill_missing, node_grads);
                if (!r) return -1;
                Py_DECREF(r);
                break;
            }
    if (PyDict_SetItem(graph_globals, s_running, node) < 0) return -1;
    PyObject *small[9], **args = small;
    if (n + 1 > 9 && !(args = PyMem_Malloc((n + 1) * sizeof(PyObject *)))) {
        PyErr_NoMemory();
        return -1;
    }
    args[0] = node;
    for (Py_ssize_t k = 0; k < n; k++) args[k + 1] = PyList_GET_ITEM(node_grads, k);
    PyObject *in_grads = PyObject_Vectorcall(SLOT(op, ek_op_slot.vjp), args, n + 1, NULL);
    if (args != small) PyMem_Free(args);
    if (!in_grads) return -1;
    if (PyDict_SetItem(graph_globals, s_running, Py_None) < 0) goto fail;
    if (!PyTuple_CheckExact(in_grads)) {   /* (Python: `type(in_grads) is not tuple`) */
        Py_SETREF(in_grads, PyTuple_Pack(1, in_grads));
        if (!in_grads) return -1;
    }
    PyObject *meta = SLOT(node, ek_node_slot.in_meta), *edges = SLOT(node, ek_node_slot.edges);
    if (!meta || !edges || !PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) < 2) {
        PyErr_SetString(PyExc_TypeError, "a node's in_meta must be (shapes, dtypes, device)");
        goto fail;
    }
    PyObject *shapes = PyTuple_GET_ITEM(meta, 0), *dtypes = PyTuple_GET_ITEM(meta, 1);
    PyObject *edge_seq = PySequence_Fast(edges, "a node's edges must be a sequence");
    if (!edge_seq) goto fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(edge_seq); i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(edge_seq, i);
        if (e == Py_None) continue;
        if (i >= PyTuple_GET_SIZE(in_grads)) {
            PyErr_SetString(PyExc_IndexError, "tuple index out of range");
            goto fail_edges;
        }
        PyObject *g = PyTuple_GET_ITEM(in_grads, i);
        if (g == Py_None) continue;
        Py_INCREF(g);
        PyObject *want_shape = PySequence_GetItem(shapes, i);
        PyObject *data = want_shape ? PyObject_GetAttr(g, s_data) : NULL;
        PyObject *shape = data ? PyObject_GetAttr(data, s_shape) : NULL;
        Py_XDECREF(data);
        int same = shape ? PyObject_RichCompareBool(shape, want_shape, Py_EQ) : -1;
        Py_XDECREF(shape);
        if (same == 0) {
            Py_SETREF(g, PyObject_CallFunctionObjArgs(unbroadcast, g, want_shape, NULL));
            if (!g) same = -1;
        }
        Py_XDECREF(want_shape);
        if (same < 0) { Py_XDECREF(g); goto fail_edges; }
        PyObject *want_dtype = PySequence_GetItem(dtypes, i);
        PyObject *dtype = want_dtype ? PyObject_GetAttr(g, s_dtype) : NULL;
        if (!dtype) { Py_XDECREF(want_dtype); Py_DECREF(g); goto fail_edges; }
        if (dtype != want_dtype)
            Py_SETREF(g, PyObject_CallFunctionObjArgs(cast_grad, g, want_dtype, NULL));
        Py_DECREF(dtype);
        Py_DECREF(want_dtype);
        if (!g) goto fail_edges;
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2) {
            PyErr_SetString(PyExc_TypeError, "an edge must be a (node, output_nr) tuple");
            Py_DECREF(g);
            goto fail_edges;
        }
        PyObject *next = PyTuple_GET_ITEM(e, 0);
        Py_ssize_t nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(e, 1));
        if (nr == -1 && PyErr_Occurred()) { Py_DECREF(g); goto fail_edges; }
        PyObject *slot = PyDict_GetItemWithError(grads, next);   /* borrowed */
        int err = 0;
        if (!slot) {
            if (PyErr_Occurred()) { Py_DECREF(g); goto fail_edges; }
            PyObject *out_meta = PyObject_GetAttr(next, s_out_meta);
            Py_ssize_t outs = out_meta ? PyObject_Length(out_meta) : -1;
            Py_XDECREF(out_meta);
            PyObject *fresh = outs < 0 ? NULL : PyList_New(outs);
            if (!fresh) { Py_DECREF(g); goto fail_edges; }
            for (Py_ssize_t k = 0; k < outs; k++) {
                PyObject *v = outs == 1 || k == nr ? g : Py_None;
                Py_INCREF(v);
                PyList_SET_ITEM(fresh, k, v);
            }
            err = PyDict_SetItem(grads, next, fresh);
            Py_DECREF(fresh);
        } else {
            PyObject *held = PyList_GetItem(slot, nr);   /* borrowed */
            if (!held) err = -1;
            else if (held == Py_None) {
                Py_INCREF(g);
                err = PyList_SetItem(slot, nr, g);
            } else {
                PyObject *sum = PyObject_CallFunctionObjArgs(sum_grads, held, g, NULL);
                err = sum ? PyList_SetItem(slot, nr, sum) : -1;   /* (steals sum) */
            }
        }
        Py_DECREF(g);
        if (err < 0) goto fail_edges;
    }
    Py_DECREF(edge_seq);
    Py_DECREF(in_grads);
    int saves = retain_graph ? 0 : PyObject_IsTrue(SLOT(op, ek_op_slot.saves));
    if (saves < 0) return -1;
    return saves ? free_saved(node) : 0;
fail_edges:
    Py_DECREF(edge_seq);
fail:
    Py_DECREF(in_grads);
    return -1;
}

/* walk(order, grads, retain_graph, create_graph): autograd/graph.py's _walk, compiled. */
static PyObject *py_walk(PyObject *self, PyObject *args) {
    PyObject *order, *grads, *create_graph;
    int retain_graph;
    if (!PyArg_ParseTuple(args, "O!O!pO", &PyList_Type, &order, &PyDict_Type, &grads,
                          &retain_graph, &create_graph))
        return NULL;
    if (!graph_globals || !ek_door_ready) {
        PyErr_SetString(PyExc_RuntimeError, "walk_setup() and dispatch_setup() come first");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(order); k++) {
        PyObject *node = PyList_GET_ITEM(order, k);
        Py_INCREF(node);
        PyObject *node_grads = PyDict_GetItemWithError(grads, node);
        if (!node_grads) {
            Py_DECREF(node);
            if (PyErr_Occurred()) return NULL;
            continue;
        }
        Py_INCREF(node_grads);
        int err = PyDict_DelItem(grads, node);
        int hooked = 0;
        if (!err) {
            int pre = is_none_attr(node, s_pre_hooks), ret = pre < 0 ? -1 : is_none_attr(node, s_retains);
            if (pre < 0 || ret < 0) err = -1;
            else hooked = !pre || !ret;
        }
        if (!err && hooked) {
            PyObject *r = PyObject_CallFunctionObjArgs(tensor_hooks, node, node_grads, NULL);
            err = r ? 0 : -1;
            Py_XDECREF(r);
        }
        if (!err) {
            PyObject *r = Py_None;   /* (the Python call's result, when one is made) */
            int plain = 0;
            if ((PyObject *)Py_TYPE(node) == accumulate_type)
                r = PyObject_CallFunctionObjArgs(accumulate_leaf, node, node_grads,
                                                 create_graph, NULL);
            else if (!hooked && PyList_CheckExact(node_grads) &&
                     (plain = plain_node(node)) != 0)
                err = plain < 0 ? -1 : run_plain_node(node, node_grads, grads, retain_graph);
            else
                r = PyObject_CallFunctionObjArgs(apply_vjp, node, node_grads, grads,
                                                 retain_graph ? Py_True : Py_False,
                                                 create_graph, NULL);
            if (!r) err = -1;
            else if (r != Py_None) Py_DECREF(r);
        }
        Py_DECREF(node_grads);
        Py_DECREF(node);
        if (err) return NULL;
    }
    Py_RETURN_NONE;
}

/* walk_setup(config): what the compiled walk calls back into (autograd/graph.py). */
static PyObject *py_walk_setup(PyObject *self, PyObject *config) {
    if (!PyDict_Check(config)) {
        PyErr_SetString(PyExc_TypeError, "walk_setup expects a dict");
        return NULL;
    }
    const char *keys[] = {"globals", "AccumulateGrad", "tensor_hooks", "accumulate_leaf",
                          "apply_vjp", "unbroadcast", "cast_grad", "sum_grads", "freed",
                          NULL};
    PyObject **vars[] = {&graph_globals, &accumulate_type, &tensor_hooks, &accumulate_leaf,
                         &apply_vjp, &unbroadcast, &cast_grad, &sum_grads, &freed_mark};
    if (ek_config_items(config, "walk_setup", keys, vars) < 0) return NULL;
    if (!PyDict_Check(graph_globals)) {
        PyErr_SetString(PyExc_TypeError, "walk_setup: 'globals' must be a module's dict");
        return NULL;
    }
    struct { PyObject **var; const char *text; } names[] = {
        {&s_pre_hooks, "pre_hooks"}, {&s_retains, "retains"}, {&s_hooks, "hooks"},
        {&s_conj_around, "conj_around"}, {&s_out, "_out"}, {&s_running, "_running"},
        {&s_shape, "shape"}, {&s_out_meta, "out_meta"}, {&s_check_saved, "check_saved"},
        {&s_fill_missing, "fill_missing"}, {&s_free, "free"}, {&s_data, "_data"},
        {&s_dtype, "dtype"}, {&s_v, "v"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!*names[k].var && !(*names[k].var = PyUnicode_InternFromString(names[k].text)))
            return NULL;
    Py_RETURN_NONE;
}

PyMethodDef ek_autograd_methods[] = {
    {"walk", py_walk, METH_VARARGS,
     "walk(order, grads, retain_graph, create_graph): autograd/graph.py's _walk, compiled"},
    {"walk_setup", py_walk_setup, METH_O,
     "walk_setup(config): the Python functions and classes the compiled walk calls"},
    {"topological_order", py_topological_order, METH_O,
     "topological_order(roots): autograd/graph.py's _topological_order, compiled"},
    {NULL, NULL, 0, NULL}};
