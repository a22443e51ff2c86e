/* The slots of ember's Python classes that the compiled door (dispatch.c) and the compiled
   backward walk (autograd.c) read and write directly: offsets found by name in their
   __slots__ member descriptors when the registry sets the door up (dispatch_setup), so the
   Python classes stay the one definition of what a tensor, an op and a node hold. */
#ifndef EMBER_SLOTS_H
#define EMBER_SLOTS_H
#include "ember_kernels.h"

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

struct ek_tensor_slots {
    Py_ssize_t data, dtype, device, requires_grad, grad, grad_fn, output_nr, vc, base,
        accumulator, retains_grad;
};
struct ek_op_slots {
    Py_ssize_t forward, vjp, num_outputs, view, save_inputs, save_output, node_class,
        conj_ready, saves;
};
struct ek_node_slots {
    Py_ssize_t op, inputs, params, edges, in_meta, saved_versions, out_meta, view_version;
};
extern struct ek_tensor_slots ek_tensor_slot;
extern struct ek_op_slots ek_op_slot;
extern struct ek_node_slots ek_node_slot;
extern PyTypeObject *ek_tensor_type, *ek_op_type, *ek_node_type;
extern int ek_door_ready;   /* dispatch_setup() ran: the offsets above are set */

/* The objects a set-up call reads from its config dict: each key's value into its variable
   (a new reference, replacing any earlier one); -1 with a KeyError naming the first missing
   key. `keys` and `vars` end with NULL. */
static inline int ek_config_items(PyObject *config, const char *setup, const char **keys,
                                  PyObject ***vars) {
    for (int k = 0; keys[k]; k++) {
        PyObject *v = PyDict_GetItemString(config, keys[k]);
        if (!v) {
            PyErr_Format(PyExc_KeyError, "%s: %s", setup, keys[k]);
            return -1;
        }
        Py_INCREF(v);
        Py_XSETREF(*vars[k], v);
    }
    return 0;
}

#endif
