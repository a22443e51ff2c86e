/* The op registry's door, compiled: dispatch() for the common call.

   ember/ops/registry.py holds THE definition of dispatch and of a graph node (`_record`);
   this file runs the same steps without Python frames for the calls that dominate small
   models (every tensor on the CPU, one output, no autocast region, no instrument) and hands
   every other call to the Python door unchanged. What a node holds stays defined by the
   Python Node class: this file fills the slots that class declares, found by name when the
   registry calls dispatch_setup(), and calls back into Python for the rare branches (views
   whose base changed in place, a leaf's first accumulator, anomaly mode).

   Why: a 4-element add spent 0.27 us in NumPy and 0.9 us in ember's Python around it;
   PyTorch's whole call takes about 0.9 us. tests/test_dispatch.py checks that both doors
   build the same nodes. */
#include "ember_kernels.h"   /* first: it includes Python.h */

#include <structmember.h>

#include "slots.h"

struct ek_tensor_slots ek_tensor_slot;
struct ek_op_slots ek_op_slot;
struct ek_node_slots ek_node_slot;
PyTypeObject *ek_tensor_type, *ek_op_type, *ek_node_type;
int ek_door_ready = 0;
#define tensor_slot ek_tensor_slot
#define op_slot ek_op_slot
#define node_slot ek_node_slot
#define tensor_type ek_tensor_type
#define op_type ek_op_type
#define ready ek_door_ready

static Py_ssize_t dtype_np_slot, dtype_category_slot, version_v_slot;

static PyTypeObject *version_type, *ndarray_type, *dtype_type;
static PyObject *python_dispatch, *cpu_device, *grad_state, *autocast_module,
    *anomaly_module, *instruments, *wrap_out, *python_record, *current_grad_fn,
    *get_accumulator, *empty_params, *plain_types, *switches, *dtype_of_numpy;
static PyObject *str_enabled, *str_active, *str_shape, *str_dtype, *str_out,
    *str_conj_around, *str_params, *str_arrays;

static int slot_offset(PyObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (!descr) return -1;
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "%R.%s is not a __slots__ member", type, name);
        Py_DECREF(descr);
        return -1;
    }
    *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return 0;
}

/* Replace a slot's value (new reference taken on `value`). */
static inline void slot_set(PyObject *obj, Py_ssize_t off, PyObject *value) {
    PyObject *old = SLOT(obj, off);
    Py_INCREF(value);
    SLOT(obj, off) = value;
    Py_XDECREF(old);
}

static PyObject *zero;   /* the int 0 */

static PyObject *new_version(void) {
    PyObject *v = version_type->tp_alloc(version_type, 0);
    if (v) slot_set(v, version_v_slot, zero);
    return v;
}

/* registry._wrap's twin: a new Tensor around `array`, no copy, no checks. */
static PyObject *wrap(PyObject *array, PyObject *dtype, PyObject *device) {
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (!t) return NULL;
    PyObject *version = new_version();
    if (!version) { Py_DECREF(t); return NULL; }
    slot_set(t, tensor_slot.data, array);
    slot_set(t, tensor_slot.dtype, dtype);
    slot_set(t, tensor_slot.device, device);
    slot_set(t, tensor_slot.requires_grad, Py_False);
    slot_set(t, tensor_slot.grad, Py_None);
    slot_set(t, tensor_slot.grad_fn, Py_None);
    slot_set(t, tensor_slot.output_nr, zero);
    SLOT(t, tensor_slot.vc) = version;   /* (steals the new reference) */
    slot_set(t, tensor_slot.base, Py_None);
    slot_set(t, tensor_slot.accumulator, Py_None);
    slot_set(t, tensor_slot.retains_grad, Py_False);
    return t;
}

static inline int is_tensor(PyObject *x) { return PyObject_TypeCheck(x, tensor_type); }

/* A slot that must be set (a Tensor's, a node's): NULL with AttributeError otherwise. */
static inline PyObject *slot_get(PyObject *obj, Py_ssize_t off, const char *name) {
    PyObject *v = SLOT(obj, off);
    if (!v) PyErr_Format(PyExc_AttributeError, "'%s' slot is not set", name);
    return v;
}

/* Whether input position i is in an op's `save` tuple. */
static int saves_position(PyObject *save, Py_ssize_t i) {
    PyObject *index = PyLong_FromSsize_t(i);
    if (!index) return -1;
    int r = PySequence_Contains(save, index);
    Py_DECREF(index);
    return r;
}

static int truth_attr(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* The edge to the node that made input `x` (registry._record's first loop). */
static PyObject *edge_of(PyObject *x) {
    if (SLOT(x, tensor_slot.requires_grad) != Py_True) Py_RETURN_NONE;
    PyObject *fn = SLOT(x, tensor_slot.grad_fn);
    if (fn && fn != Py_None) {
        PyObject *nr = slot_get(x, tensor_slot.output_nr, "_output_nr");
        if (!nr) return NULL;
        if (SLOT(x, tensor_slot.base) != Py_None) {   /* a view: its node may be stale */
            fn = PyObject_CallOneArg(current_grad_fn, x);
            if (!fn) return NULL;
            PyObject *edge = PyTuple_Pack(2, fn, nr);
            Py_DECREF(fn);
            return edge;
        }
        return PyTuple_Pack(2, fn, nr);
    }
    PyObject *acc = SLOT(x, tensor_slot.accumulator);
    if (acc && acc != Py_None) return PyTuple_Pack(2, acc, zero);
    acc = PyObject_CallOneArg(get_accumulator, x);
    if (!acc) return NULL;
    PyObject *edge = PyTuple_Pack(2, acc, zero);
    Py_DECREF(acc);
    return edge;
}

/* registry._record for one result, step for step. */
static PyObject *record(PyObject *op, PyObject *inputs, PyObject *const *items, Py_ssize_t n,
                        PyObject *params, PyObject *result, PyObject *device) {
    PyObject *save = SLOT(op, op_slot.save_inputs);
    PyObject *edges = PyList_New(n), *shapes = PyList_New(n), *dtypes = PyList_New(n);
    PyObject *versions = NULL, *node_inputs = NULL, *node = NULL;
    if (!edges || !shapes || !dtypes) goto fail;
    int save_all = save == Py_None;
    int save_some = !save_all && PyObject_IsTrue(save);
    int scalars = 0;
    if (save_all || save_some) {
        versions = PyList_New(n);
        if (!versions) goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = items[i];
        if (is_tensor(x)) {
            PyObject *edge = edge_of(x);
            if (!edge) goto fail;
            PyList_SET_ITEM(edges, i, edge);
            PyObject *shape = PyObject_GetAttr(SLOT(x, tensor_slot.data), str_shape);
            if (!shape) goto fail;
            PyList_SET_ITEM(shapes, i, shape);
            PyObject *d = SLOT(x, tensor_slot.dtype);
            Py_INCREF(d);
            PyList_SET_ITEM(dtypes, i, d);
            if (versions) {
                PyObject *v = Py_None;
                int contains = save_all ? 1 : saves_position(save, i);
                if (contains < 0) goto fail;
                if (contains) v = SLOT(SLOT(x, tensor_slot.vc), version_v_slot);
                Py_INCREF(v);
                PyList_SET_ITEM(versions, i, v);
            }
        } else {
            Py_INCREF(Py_None); PyList_SET_ITEM(edges, i, Py_None);
            Py_INCREF(Py_None); PyList_SET_ITEM(shapes, i, Py_None);
            Py_INCREF(Py_None); PyList_SET_ITEM(dtypes, i, Py_None);
            if (versions) { Py_INCREF(Py_None); PyList_SET_ITEM(versions, i, Py_None); }
            scalars = 1;
        }
    }
    /* What the node keeps of its inputs (see registry._record). */
    if (save_all) {
        node_inputs = inputs;
        Py_INCREF(node_inputs);
    } else if (save_some || scalars) {
        node_inputs = PyList_New(n);
        if (!node_inputs) goto fail;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = items[i];
            int keep;
            if (!is_tensor(x)) keep = 1;
            else if (!save_some) keep = 0;
            else {
                keep = saves_position(save, i);
                if (keep < 0) goto fail;
            }
            PyObject *v = keep ? x : Py_None;
            Py_INCREF(v);
            PyList_SET_ITEM(node_inputs, i, v);
        }
    } else {
        node_inputs = PyTuple_New(n);
        if (!node_inputs) goto fail;
        for (Py_ssize_t i = 0; i < n; i++) { Py_INCREF(Py_None); PyTuple_SET_ITEM(node_inputs, i, Py_None); }
    }
    PyTypeObject *cls = (PyTypeObject *)SLOT(op, op_slot.node_class);
    node = cls->tp_alloc(cls, 0);
    if (!node) goto fail;
    SLOT(node, node_slot.inputs) = node_inputs; node_inputs = NULL;
    slot_set(node, node_slot.saved_versions, versions ? versions : Py_None);
    slot_set(node, node_slot.op, op);
    slot_set(node, node_slot.params, params);
    SLOT(node, node_slot.edges) = edges; edges = NULL;
    PyObject *in_meta = PyTuple_Pack(3, shapes, dtypes, device);
    if (!in_meta) goto fail;
    SLOT(node, node_slot.in_meta) = in_meta;
    PyObject *data = SLOT(result, tensor_slot.data), *rdtype = SLOT(result, tensor_slot.dtype);
    PyObject *shape = PyObject_GetAttr(data, str_shape);
    if (!shape) goto fail;
    PyObject *meta = Py_BuildValue("((NO))", shape, rdtype);
    if (!meta) goto fail;
    SLOT(node, node_slot.out_meta) = meta;
    if (SLOT(op, op_slot.save_output) == Py_True) {
        PyObject *version = SLOT(result, tensor_slot.vc);
        PyObject *saved = Py_BuildValue("((O)(O)OO)", data, rdtype, version,
                                        SLOT(version, version_v_slot));
        if (!saved) goto fail;
        int err = PyObject_SetAttr(node, str_out, saved);
        Py_DECREF(saved);
        if (err < 0) goto fail;
    }
    PyObject *category = SLOT(rdtype, dtype_category_slot);
    if (PyLong_AsLong(category) == 3 && SLOT(op, op_slot.conj_ready) != Py_True &&
        PyObject_SetAttr(node, str_conj_around, Py_True) < 0)
        goto fail;
    slot_set(result, tensor_slot.requires_grad, Py_True);
    slot_set(result, tensor_slot.grad_fn, node);
    slot_set(result, tensor_slot.output_nr, zero);
    Py_XDECREF(versions);
    Py_DECREF(shapes);
    Py_DECREF(dtypes);
    return node;
fail:
    Py_XDECREF(edges); Py_XDECREF(shapes); Py_XDECREF(dtypes); Py_XDECREF(versions);
    Py_XDECREF(node_inputs); Py_XDECREF(node);
    return NULL;
}

static PyObject *fall_back(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return PyObject_Vectorcall(python_dispatch, args, nargs, kwnames);
}

/* dispatch(op, inputs, params=_EMPTY, dtype=None, arrays=None) */
static PyObject *py_dispatch(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch_setup() was not called");
        return NULL;
    }
    if (nargs < 2 || nargs > 5) return fall_back(args, nargs, kwnames);
    PyObject *op = args[0], *inputs = args[1];
    PyObject *params = nargs > 2 ? args[2] : empty_params;
    PyObject *dtype = nargs > 3 ? args[3] : Py_None, *arrays = nargs > 4 ? args[4] : Py_None;
    if (kwnames) {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nk; k++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k), *value = args[nargs + k];
            if (PyUnicode_Compare(name, str_params) == 0) params = value;
            else if (PyUnicode_Compare(name, str_dtype) == 0) dtype = value;
            else if (PyUnicode_Compare(name, str_arrays) == 0) arrays = value;
            else return fall_back(args, nargs, kwnames);
        }
    }
    if (Py_TYPE(op) != op_type || PyList_GET_SIZE(instruments) != 0 ||
        !(PyTuple_CheckExact(inputs) || PyList_CheckExact(inputs)) ||
        !(arrays == Py_None || PyTuple_CheckExact(arrays) || PyList_CheckExact(arrays)) ||
        !PyDict_CheckExact(params))
        return fall_back(args, nargs, kwnames);
    PyObject *num_outputs = SLOT(op, op_slot.num_outputs);
    if (!num_outputs || PyLong_AsLong(num_outputs) != 1) {
        if (PyErr_Occurred()) return NULL;
        return fall_back(args, nargs, kwnames);
    }
    int autocast = truth_attr(autocast_module, str_active);
    if (autocast < 0) return NULL;
    if (autocast) return fall_back(args, nargs, kwnames);
    /* The registry's other switches (an open vmap, a profiler): any one on, Python decides. */
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(switches); k++) {
        PyObject *pair = PyList_GET_ITEM(switches, k);
        int on = truth_attr(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        if (on < 0) return NULL;
        if (on) return fall_back(args, nargs, kwnames);
    }

    Py_ssize_t n = PySequence_Fast_GET_SIZE(inputs);
    PyObject *const *items = PySequence_Fast_ITEMS(inputs);
    int needs_grad = 0, any_tensor = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = items[i];
        if (!is_tensor(x)) continue;
        /* Tensor subclasses other than the plain ones (nn.Parameter) may carry behaviour of
           their own (batched, sparse): the Python door decides for them. */
        if (Py_TYPE(x) != tensor_type) {
            int plain = PySet_Contains(plain_types, (PyObject *)Py_TYPE(x));
            if (plain < 0) return NULL;
            if (!plain) return fall_back(args, nargs, kwnames);
        }
        /* Only CPU tensors (ember.device('cpu') is one object) take this door; the Python
           one raises the mixed-device error and guards other GPUs. */
        if (SLOT(x, tensor_slot.device) != cpu_device || !SLOT(x, tensor_slot.data))
            return fall_back(args, nargs, kwnames);
        any_tensor = 1;
        if (SLOT(x, tensor_slot.requires_grad) == Py_True) needs_grad = 1;
    }
    if (!any_tensor) return fall_back(args, nargs, kwnames);

    PyObject *forward = SLOT(op, op_slot.forward), *out;
    if (arrays == Py_None) {
        PyObject *small[8], **raw = small;
        if (n > 8 && !(raw = PyMem_Malloc(n * sizeof(PyObject *)))) return PyErr_NoMemory();
        for (Py_ssize_t i = 0; i < n; i++)
            raw[i] = is_tensor(items[i]) ? SLOT(items[i], tensor_slot.data) : items[i];
        out = PyObject_VectorcallDict(forward, raw, n, PyDict_GET_SIZE(params) ? params : NULL);
        if (raw != small) PyMem_Free(raw);
    } else {
        out = PyObject_VectorcallDict(forward, PySequence_Fast_ITEMS(arrays),
                                      PySequence_Fast_GET_SIZE(arrays),
                                      PyDict_GET_SIZE(params) ? params : NULL);
    }
    if (!out) return NULL;

    PyObject *result = NULL;
    if (Py_TYPE(out) == ndarray_type && (dtype == Py_None ||
                                         PyObject_TypeCheck(dtype, dtype_type))) {
        PyObject *out_dtype = PyObject_GetAttr(out, str_dtype);
        if (!out_dtype) { Py_DECREF(out); return NULL; }
        /* dtype None: the array's own, looked up as _dtype.from_numpy_dtype does (a dtype
           it has no entry for, such as a first bfloat16, goes to wrap_out) */
        PyObject *known = dtype != Py_None ? dtype : PyDict_GetItemWithError(dtype_of_numpy,
                                                                             out_dtype);
        if (!known && PyErr_Occurred()) { Py_DECREF(out_dtype); Py_DECREF(out); return NULL; }
        if (known && out_dtype == SLOT(known, dtype_np_slot))
            result = wrap(out, known, cpu_device);
        else result = PyObject_CallFunctionObjArgs(wrap_out, out, dtype, cpu_device, NULL);
        Py_DECREF(out_dtype);
    } else {
        result = PyObject_CallFunctionObjArgs(wrap_out, out, dtype, cpu_device, NULL);
    }
    Py_DECREF(out);
    if (!result) return NULL;

    int view = SLOT(op, op_slot.view) == Py_True;
    if (view) {
        PyObject *base = items[0];
        PyObject *root = SLOT(base, tensor_slot.base);
        slot_set(result, tensor_slot.vc, SLOT(base, tensor_slot.vc));
        slot_set(result, tensor_slot.base, root == Py_None ? base : root);
    }
    if (needs_grad) {
        int enabled = truth_attr(grad_state, str_enabled);
        if (enabled < 0) goto fail;
        PyObject *category = SLOT(SLOT(result, tensor_slot.dtype), dtype_category_slot);
        if (enabled && PyLong_AsLong(category) >= 2) {
            int anomaly = truth_attr(anomaly_module, str_enabled);
            if (anomaly < 0) goto fail;
            PyObject *node;
            if (anomaly) {   /* (anomaly mode keeps a trace per node: the Python record) */
                PyObject *results = PyTuple_Pack(1, result);
                if (!results) goto fail;
                node = PyObject_CallFunctionObjArgs(python_record, op, inputs, params, results,
                                                    cpu_device, NULL);
                Py_DECREF(results);
            } else {
                node = record(op, inputs, items, n, params, result, cpu_device);
            }
            if (!node) goto fail;
            if (view) {
                PyObject *version = SLOT(SLOT(result, tensor_slot.vc), version_v_slot);
                slot_set(node, node_slot.view_version, version);
            }
            Py_DECREF(node);
        }
    }
    return result;
fail:
    Py_DECREF(result);
    return NULL;
}

/* A Python operator of Tensor (`a + b`, `a * b`, ...), compiled: the plain call, a floating
   tensor with a tensor of the same dtype or with a Python float or int, goes straight to the
   door with the arrays ops/arithmetic.py's `binary` would pass (its own fast path, the
   definition); any other call, and any error, goes to `general`, the Python operator, which
   computes or raises exactly as without this object. `reflected`: the operands arrive
   swapped (`2 * t` calls __rmul__(t, 2)). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *op, *general, *name;
    int reflected;
} binary_operator;

static Py_ssize_t dtype_fast_slot = -1;

static int is_plain(PyObject *x) {
    if (Py_TYPE(x) == tensor_type) return 1;
    if (!PyObject_TypeCheck(x, tensor_type)) return 0;
    return PySet_Contains(plain_types, (PyObject *)Py_TYPE(x));
}

static PyObject *operator_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    binary_operator *self = (binary_operator *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (ready && !kwnames && nargs == 2) {
        PyObject *a = args[self->reflected], *b = args[!self->reflected];
        int plain = is_plain(a);
        if (plain < 0) return NULL;
        PyObject *d = plain ? SLOT(a, tensor_slot.dtype) : NULL;
        if (d && SLOT(d, dtype_fast_slot) == Py_True &&
            PyLong_AsLong(SLOT(d, dtype_category_slot)) == 2) {
            PyObject *other = NULL;
            if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) other = b;
            else {
                int b_plain = is_plain(b);
                if (b_plain < 0) return NULL;
                if (b_plain && SLOT(b, tensor_slot.dtype) == d) other = SLOT(b, tensor_slot.data);
            }
            if (other) {
                PyObject *inputs = PyTuple_Pack(2, a, b);
                PyObject *arrays = inputs ? PyTuple_Pack(2, SLOT(a, tensor_slot.data), other) : NULL;
                PyObject *call[5] = {self->op, inputs, empty_params, d, arrays};
                PyObject *r = arrays ? py_dispatch(NULL, call, 5, NULL) : NULL;
                Py_XDECREF(inputs);
                Py_XDECREF(arrays);
                if (r) return r;
                PyErr_Clear();   /* (errors are the Python operator's to raise and word) */
            }
        }
    }
    return PyObject_Vectorcall(self->general, args, nargsf, kwnames);
}

static PyObject *operator_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) { Py_INCREF(self); return self; }
    return PyMethod_New(self, obj);
}

static void operator_dealloc(PyObject *self) {
    binary_operator *o = (binary_operator *)self;
    Py_XDECREF(o->op);
    Py_XDECREF(o->general);
    Py_XDECREF(o->name);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *operator_repr(PyObject *self) {
    return PyUnicode_FromFormat("<compiled operator %U>", ((binary_operator *)self)->name);
}

static PyObject *operator_getname(PyObject *self, void *closure) {
    PyObject *n = ((binary_operator *)self)->name;
    Py_INCREF(n);
    return n;
}

static PyGetSetDef operator_getset[] = {
    {"__name__", operator_getname, NULL, NULL, NULL},
    {"__qualname__", operator_getname, NULL, NULL, NULL},
    {NULL}};

static PyTypeObject binary_operator_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.backends._kernels.binary_operator",
    .tp_basicsize = sizeof(binary_operator),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(binary_operator, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = operator_get,
    .tp_dealloc = operator_dealloc,
    .tp_repr = operator_repr,
    .tp_getset = operator_getset,
};

/* binary_operator(op, general, name, reflected): Tensor's operator `name`, compiled. */
static PyObject *py_binary_operator(PyObject *self, PyObject *args) {
    PyObject *op, *general, *name;
    int reflected;
    if (!PyArg_ParseTuple(args, "OOUp", &op, &general, &name, &reflected)) return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "dispatch_setup() was not called");
        return NULL;
    }
    if (Py_TYPE(op) != op_type || !PyCallable_Check(general)) {
        PyErr_SetString(PyExc_TypeError, "binary_operator(op, general, name, reflected)");
        return NULL;
    }
    if (PyType_Ready(&binary_operator_type) < 0) return NULL;
    binary_operator *o = PyObject_New(binary_operator, &binary_operator_type);
    if (!o) return NULL;
    o->vectorcall = operator_call;
    Py_INCREF(op); o->op = op;
    Py_INCREF(general); o->general = general;
    Py_INCREF(name); o->name = name;
    o->reflected = reflected;
    return (PyObject *)o;
}

/* tensor_setup(Tensor, Version, cpu): the classes `wrap` builds (see _tensor.py). */
static PyObject *py_tensor_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyType_Check(args[0]) || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tensor_setup(Tensor, Version, cpu)");
        return NULL;
    }
    PyObject *tensor = args[0], *version = args[1];
    if (slot_offset(tensor, "_data", &tensor_slot.data) ||
        slot_offset(tensor, "dtype", &tensor_slot.dtype) ||
        slot_offset(tensor, "_device", &tensor_slot.device) ||
        slot_offset(tensor, "_requires_grad", &tensor_slot.requires_grad) ||
        slot_offset(tensor, "_grad", &tensor_slot.grad) ||
        slot_offset(tensor, "grad_fn", &tensor_slot.grad_fn) ||
        slot_offset(tensor, "_output_nr", &tensor_slot.output_nr) ||
        slot_offset(tensor, "_vc", &tensor_slot.vc) ||
        slot_offset(tensor, "_base", &tensor_slot.base) ||
        slot_offset(tensor, "_accumulator", &tensor_slot.accumulator) ||
        slot_offset(tensor, "_retains_grad", &tensor_slot.retains_grad) ||
        slot_offset(version, "v", &version_v_slot))
        return NULL;
    if (!zero && !(zero = PyLong_FromLong(0))) return NULL;
    Py_INCREF(tensor); Py_XSETREF(tensor_type, (PyTypeObject *)tensor);
    Py_INCREF(version); Py_XSETREF(version_type, (PyTypeObject *)version);
    Py_INCREF(args[2]); Py_XSETREF(cpu_device, args[2]);
    Py_RETURN_NONE;
}

/* wrap(array, dtype, device=cpu): _tensor._wrap, compiled. */
static PyObject *py_wrap(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!tensor_type || nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, tensor_type ? "wrap(array, dtype, device=cpu)"
                                                     : "tensor_setup() was not called");
        return NULL;
    }
    return wrap(args[0], args[1], nargs == 3 ? args[2] : cpu_device);
}

/* dispatch_setup(config): the registry's objects this door reads (see registry.py). */
static PyObject *py_dispatch_setup(PyObject *self, PyObject *config) {
    if (!PyDict_Check(config)) {
        PyErr_SetString(PyExc_TypeError, "dispatch_setup expects a dict");
        return NULL;
    }
    if (!tensor_type) {
        PyErr_SetString(PyExc_RuntimeError, "tensor_setup() must come first");
        return NULL;
    }
    /* (the four classes are kept referenced: the door reads their instances) */
    PyObject *node = NULL, *opt = NULL, *dtype = NULL, *ndarray = NULL;
    const char *keys[] = {"Node", "Op", "dtype", "ndarray", "dispatch", "grad_state",
                          "autocast", "anomaly", "instruments", "wrap_out", "record",
                          "current_grad_fn", "get_accumulator", "empty_params",
                          "plain_types", "switches", "dtype_of_numpy", NULL};
    PyObject **vars[] = {&node, &opt, &dtype, &ndarray, &python_dispatch, &grad_state,
                         &autocast_module, &anomaly_module, &instruments, &wrap_out,
                         &python_record, &current_grad_fn, &get_accumulator, &empty_params,
                         &plain_types, &switches, &dtype_of_numpy};
    if (ek_config_items(config, "dispatch_setup", keys, vars) < 0) return NULL;
    int bad = !PyType_Check(node) ||
              !PyType_Check(opt) || !PyType_Check(ndarray) || !PyType_Check(dtype) ||
              !PyList_CheckExact(instruments) ||
              !PyAnySet_Check(plain_types) || !PyList_CheckExact(switches) ||
              !PyDict_CheckExact(dtype_of_numpy);
    for (Py_ssize_t k = 0; !bad && k < PyList_GET_SIZE(switches); k++) {
        PyObject *pair = PyList_GET_ITEM(switches, k);
        bad = !PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
              !PyUnicode_Check(PyTuple_GET_ITEM(pair, 1));
    }
    if (bad) {
        PyErr_SetString(PyExc_TypeError, "dispatch_setup: unexpected configuration");
        return NULL;
    }
    op_type = (PyTypeObject *)opt;
    ndarray_type = (PyTypeObject *)ndarray;
    dtype_type = (PyTypeObject *)dtype;
    ek_node_type = (PyTypeObject *)node;
    if (slot_offset(opt, "forward", &op_slot.forward) ||
        slot_offset(opt, "vjp", &op_slot.vjp) ||
        slot_offset(opt, "saves", &op_slot.saves) ||
        slot_offset(opt, "num_outputs", &op_slot.num_outputs) ||
        slot_offset(opt, "view", &op_slot.view) ||
        slot_offset(opt, "save_inputs", &op_slot.save_inputs) ||
        slot_offset(opt, "save_output", &op_slot.save_output) ||
        slot_offset(opt, "node_class", &op_slot.node_class) ||
        slot_offset(opt, "conj_ready", &op_slot.conj_ready) ||
        slot_offset(node, "op", &node_slot.op) ||
        slot_offset(node, "inputs", &node_slot.inputs) ||
        slot_offset(node, "params", &node_slot.params) ||
        slot_offset(node, "edges", &node_slot.edges) ||
        slot_offset(node, "in_meta", &node_slot.in_meta) ||
        slot_offset(node, "saved_versions", &node_slot.saved_versions) ||
        slot_offset(node, "out_meta", &node_slot.out_meta) ||
        slot_offset(node, "view_version", &node_slot.view_version) ||
        slot_offset(dtype, "np", &dtype_np_slot) ||
        slot_offset(dtype, "category", &dtype_category_slot) ||
        slot_offset(dtype, "fast", &dtype_fast_slot))
        return NULL;
    str_enabled = PyUnicode_InternFromString("enabled");
    str_active = PyUnicode_InternFromString("active");
    str_shape = PyUnicode_InternFromString("shape");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_out = PyUnicode_InternFromString("_out");
    str_conj_around = PyUnicode_InternFromString("conj_around");
    str_params = PyUnicode_InternFromString("params");
    str_arrays = PyUnicode_InternFromString("arrays");
    if (!str_enabled || !str_active || !str_shape || !str_dtype || !str_out ||
        !str_conj_around || !str_params || !str_arrays)
        return NULL;
    ready = 1;
    Py_RETURN_NONE;
}

/* replay(code, values, run_step): ember.compile's replay loop (_compile/program.py,
   Program.replay, is the definition). Each entry of `code` is (op, indices, params, dtype,
   out, dead) for a step that goes straight through the door: its inputs are values[i] for
   i in indices, its result lands in values[out]; an entry whose op is None is run in
   Python by its own runner, entry[2](entry[1], values), or by run_step when entry[2] is
   None. After either, values[i] = None for i in dead. */
static int drop_dead(PyObject *entry, PyObject *values) {
    PyObject *dead = PyTuple_GET_ITEM(entry, 5);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dead); i++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(dead, i));
        if (at < 0 && PyErr_Occurred()) return -1;
        PyObject *old = PyList_GET_ITEM(values, at);
        Py_INCREF(Py_None);
        PyList_SET_ITEM(values, at, Py_None);
        Py_XDECREF(old);
    }
    return 0;
}

static PyObject *py_replay(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "replay(code: list, values: list, run_step)");
        return NULL;
    }
    PyObject *code = args[0], *values = args[1], *run_step = args[2];
    Py_ssize_t n = PyList_GET_SIZE(code);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *entry = PyList_GET_ITEM(code, k);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 6 ||
            !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 5))) {
            PyErr_SetString(PyExc_TypeError, "replay: a code entry is a 6-tuple");
            return NULL;
        }
        PyObject *op = PyTuple_GET_ITEM(entry, 0);
        if (op == Py_None) {
            PyObject *call[2] = {PyTuple_GET_ITEM(entry, 1), values};
            PyObject *runner = PyTuple_GET_ITEM(entry, 2);
            PyObject *done = PyObject_Vectorcall(runner == Py_None ? run_step : runner, call,
                                                 2, NULL);
            if (!done) return NULL;
            Py_DECREF(done);
            if (drop_dead(entry, values) < 0) return NULL;
            continue;
        }
        PyObject *indices = PyTuple_GET_ITEM(entry, 1);
        if (!PyTuple_CheckExact(indices)) {
            PyErr_SetString(PyExc_TypeError, "replay: a step's inputs are a tuple of slots");
            return NULL;
        }
        Py_ssize_t m = PyTuple_GET_SIZE(indices);
        PyObject *inputs = PyTuple_New(m);
        if (!inputs) return NULL;
        for (Py_ssize_t i = 0; i < m; i++) {
            Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(indices, i));
            PyObject *v = PyList_GET_ITEM(values, at);
            Py_INCREF(v);
            PyTuple_SET_ITEM(inputs, i, v);
        }
        PyObject *call[4] = {op, inputs, PyTuple_GET_ITEM(entry, 2), PyTuple_GET_ITEM(entry, 3)};
        PyObject *result = py_dispatch(NULL, call, 4, NULL);
        Py_DECREF(inputs);
        if (!result) return NULL;
        Py_ssize_t out = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 4));
        PyObject *old = PyList_GET_ITEM(values, out);
        PyList_SET_ITEM(values, out, result);
        Py_XDECREF(old);
        if (drop_dead(entry, values) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef ek_dispatch_methods[] = {
    {"dispatch", (PyCFunction)(void (*)(void))py_dispatch, METH_FASTCALL | METH_KEYWORDS,
     "dispatch(op, inputs, params=_EMPTY, dtype=None, arrays=None): the registry's door"},
    {"tensor_setup", (PyCFunction)(void (*)(void))py_tensor_setup, METH_FASTCALL,
     "tensor_setup(Tensor, Version, cpu): the classes wrap() builds, once"},
    {"wrap", (PyCFunction)(void (*)(void))py_wrap, METH_FASTCALL,
     "wrap(array, dtype, device=cpu): a new Tensor around array (_tensor._wrap)"},
    {"binary_operator", py_binary_operator, METH_VARARGS,
     "binary_operator(op, general, name, reflected): a Tensor operator, compiled"},
    {"replay", (PyCFunction)(void (*)(void))py_replay, METH_FASTCALL,
     "replay(code, values, run_step): ember.compile's replay loop (Program.replay)"},
    {"dispatch_setup", py_dispatch_setup, METH_O,
     "dispatch_setup(config): the registry's classes and state objects, once"},
    {NULL, NULL, 0, NULL}};
