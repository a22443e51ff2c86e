"""The built-in functional forms of DataPipes: map, filter, batch, unbatch, collate, concat
and zip on IterDataPipe; map, batch, concat and zip on MapDataPipe (PyTorch's class names:
MapperIterDataPipe, BatcherMapDataPipe, ...)."""
from .collate import default_collate
from .datapipes import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe


def _apply_to_columns(fn, data, input_col, output_col):
    """fn on the whole item, or on its `input_col` field(s), the result stored back in place
    of the (first) input field, or at `output_col` (-1: appended)."""
    if input_col is None and output_col is None:
        return fn(data)
    if input_col is None:
        result = fn(data)
    elif isinstance(input_col, (list, tuple)):
        result = fn(*(data[col] for col in input_col))
    else:
        result = fn(data[input_col])
    was_tuple = isinstance(data, tuple)
    data = list(data) if was_tuple else data
    if output_col is None:
        if isinstance(input_col, (list, tuple)):
            data[input_col[0]] = result
            for col in sorted(input_col[1:], reverse=True):
                del data[col]
        else:
            data[input_col] = result
    elif output_col == -1:
        data.append(result)
    else:
        data[output_col] = result
    return tuple(data) if was_tuple else data


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """Each item through `fn` (optionally only some of its fields)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.datapipe, self.fn = datapipe, fn
        self.input_col, self.output_col = input_col, output_col

    def __iter__(self):
        for data in self.datapipe:
            yield _apply_to_columns(self.fn, data, self.input_col, self.output_col)

    def __len__(self):
        return _length_of(self.datapipe, self)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """The items for which `filter_fn` is True."""

    def __init__(self, datapipe, filter_fn, input_col=None):
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def __iter__(self):
        for data in self.datapipe:
            if self.input_col is None:
                keep = self.filter_fn(data)
            elif isinstance(self.input_col, (list, tuple)):
                keep = self.filter_fn(*(data[col] for col in self.input_col))
            else:
                keep = self.filter_fn(data[self.input_col])
            if not isinstance(keep, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 "FilterIterDataPipe, got", type(keep))
            if keep:
                yield data


def _check_batch_size(batch_size):
    assert batch_size > 0, "Batch size is required to be larger than 0!"


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Items grouped `batch_size` at a time into `wrapper_class` (DataChunk)."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        _check_batch_size(batch_size)
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = _length_of(self.datapipe, self)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """Batches taken apart `unbatch_level` levels deep (-1: all the way)."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, -1)
            else:
                yield element
        elif level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             "DataPipe")


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Each item (a batch) through `collate_fn` (default_collate)."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is not None:
            fn = collate_fn
        elif callable(conversion):
            fn = conversion
        else:
            raise NotImplementedError("ember's collate takes a function (a dict of "
                                      "conversions is not supported)")
        super().__init__(datapipe, fn=fn)


def _check_all(datapipes, kind, message):
    if not all(isinstance(dp, kind) for dp in datapipes):
        raise TypeError(message)


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The pipes one after the other."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        _check_all(datapipes, IterDataPipe, "Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return sum(_length_of(dp, self) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of the pipes' items, as long as the shortest pipe."""

    def __init__(self, *datapipes):
        _check_all(datapipes, IterDataPipe,
                   "All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        return min(_length_of(dp, self) for dp in self.datapipes)


def _length_of(source, pipe):
    try:
        return len(source)
    except TypeError:
        raise TypeError(f"{type(pipe).__name__} instance doesn't have valid length") from None


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, fn=lambda data: data):
        self.datapipe, self.fn = datapipe, fn

    def __len__(self):
        return len(self.datapipe)

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        _check_batch_size(batch_size)
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __getitem__(self, index):
        batch = []
        for i in range(index * self.batch_size, (index + 1) * self.batch_size):
            try:
                batch.append(self.datapipe[i])
            except IndexError as exc:
                if not self.drop_last and batch:
                    return self.wrapper_class(batch)
                raise IndexError(f"Index {index} is out of bound.") from exc
        return self.wrapper_class(batch)

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        _check_all(datapipes, MapDataPipe, "Expected all inputs to be `MapDataPipe`")
        for dp in datapipes:
            len(dp)   # (every input needs a length: indexes run across them)
        self.datapipes = datapipes

    def __getitem__(self, index):
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        _check_all(datapipes, MapDataPipe, "Expected all inputs to be `MapDataPipe`")
        self.datapipes = datapipes

    def __getitem__(self, index):
        return tuple(dp[index] for dp in self.datapipes)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)
