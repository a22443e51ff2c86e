"""nn.factory_kwargs: the device/dtype/memory_format keywords a module passes on to tensor
factories, checked and canonicalised."""

__all__ = ["factory_kwargs"]

_SIMPLE = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs):
    """`kwargs` reduced to factory keywords; a nested `factory_kwargs` dict supplies keys
    that would clash with the caller's own arguments (each key may come from one place)."""
    if kwargs is None:
        return {}
    unexpected = kwargs.keys() - (_SIMPLE | {"factory_kwargs"})
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE & kwargs.keys():
        if key in result:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        result[key] = kwargs[key]
    return result
