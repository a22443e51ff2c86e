"""swap_in_optimizer_params_and_state: run optimizer APIs (step, hooks, state_dict) against
other parameter tensors and another state_dict-shaped state for the duration of a `with`
block, then put the live optimizer back as it was."""
import contextlib
from collections import defaultdict

__all__ = ["swap_in_optimizer_params_and_state"]


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """`swapin_parameters` (name -> tensor) replace the optimizer's parameters in order,
    group by group; `swapin_optim_state` ({"state": {id: {...}}, "param_groups": [...]})
    supplies per-parameter state (keyed by the packed ids listed in its groups) and the
    groups' hyperparameters. In-place edits of its state tensors are seen by the caller;
    new entries or tensors assigned inside the block are not."""
    tensors = list(swapin_parameters.values())
    saved_groups = swapin_optim_state["param_groups"]
    if len(saved_groups) != len(optimizer.param_groups):
        raise ValueError(f"swapin_optim_state has {len(saved_groups)} param groups but the "
                         f"optimizer has {len(optimizer.param_groups)}")
    expected = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(tensors) != expected:
        raise ValueError(f"expected {expected} swap-in parameters, got {len(tensors)}")
    saved_state = swapin_optim_state["state"]
    live_state = optimizer.state
    # (a shallow copy keeps the identity of each group's `params` list for the restore)
    live_groups = [dict(g) for g in optimizer.param_groups]
    try:
        state = defaultdict(dict)
        used = 0
        for group, saved in zip(optimizer.param_groups, saved_groups):
            ids = saved["params"]
            if len(ids) != len(group["params"]):
                raise ValueError(f"a swap-in param group lists {len(ids)} parameters but the "
                                 f"optimizer's group has {len(group['params'])}")
            params = tensors[used:used + len(ids)]
            used += len(ids)
            group.update({k: v for k, v in saved.items() if k != "params"})
            group["params"] = params
            for p, pid in zip(params, ids):
                state[p] = dict(saved_state.get(pid, {}))
        optimizer.state = state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, live_groups):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
