"""parallel_apply: run each replica on its inputs in its own thread (one per device)."""
import threading

from ...autograd import grad_mode

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """[modules[i](*inputs[i], **kwargs_tup[i])] computed concurrently; the first error of
    any replica is raised again here, naming the replica."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    results = [None] * len(modules)
    errors = [None] * len(modules)
    enabled = grad_mode.is_grad_enabled()

    def work(i, module, inp, kwargs):
        try:
            # NOTE: grad mode is per thread; the replicas run in the caller's mode.
            with grad_mode.set_grad_enabled(enabled):
                args = inp if isinstance(inp, (list, tuple)) else (inp,)
                results[i] = module(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001  (re-raised in the calling thread)
            errors[i] = exc

    if len(modules) == 1:
        work(0, modules[0], inputs[0], kwargs_tup[0])
    else:
        threads = [threading.Thread(target=work, args=(i, m, x, k))
                   for i, (m, x, k) in enumerate(zip(modules, inputs, kwargs_tup))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for i, exc in enumerate(errors):
        if exc is not None:
            raise type(exc)(f"Caught {type(exc).__name__} in replica {i}: {exc}") from exc
    return results
