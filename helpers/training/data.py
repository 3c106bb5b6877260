"""The data forms that :func:`~helpers.training.fit` and :func:`~helpers.training.predict` accept, normalised to
indexable column arrays or datasets, with a deterministic per-epoch order (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError


def _epoch_generator(seed: int, epoch: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(
        int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(1, dtype=np.uint64)[0] >> 1)
    )
    return g


def _epoch_order(
    n: int, g: torch.Generator, *, shuffle: bool, batch_size: int, lengths: torch.Tensor | None = None,
    pool_batches: int = 50, drop_last: bool = False,
) -> list[torch.Tensor]:
    """The index batches of one epoch.

    Without ``lengths``: a random permutation (or ``0..n-1``) cut into consecutive batches.  With ``lengths``
    ("sortish" length bucketing, as in fairseq/AllenNLP bucket samplers): the permutation is cut into pools of
    ``pool_batches * batch_size`` examples, each pool is sorted by length (stable), cut into batches, and the
    batches are put in a random order -- every example still appears once per epoch, but a batch holds texts of
    similar length, so dynamic padding pads little.  ``drop_last`` drops the one short batch.
    """
    order = torch.randperm(n, generator=g) if shuffle else torch.arange(n)
    if lengths is not None:
        pool = max(1, pool_batches) * batch_size
        chunks = [order[i : i + pool] for i in range(0, n, pool)]
        order = torch.cat([c[torch.argsort(lengths[c], stable=True)] for c in chunks])
    batches = list(torch.split(order, batch_size))
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    if lengths is not None and shuffle:
        batches = [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]
    return batches


def _as_tensor(a: Any) -> Any:
    """numpy → torch with float64 → float32; tensors pass; dicts/lists of arrays recurse; other objects pass."""
    if isinstance(a, torch.Tensor):
        return a
    if isinstance(a, np.ndarray):
        if a.dtype == object:
            return a
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.float() if t.dtype == torch.float64 else t
    if isinstance(a, Mapping):
        return {k: _as_tensor(v) for k, v in a.items()}
    return a


def _length(a: Any) -> int:
    if isinstance(a, Mapping):
        return _length(next(iter(a.values())))
    return len(a)


def _take(a: Any, idx: torch.Tensor) -> Any:
    if isinstance(a, Mapping):
        return {k: _take(v, idx) for k, v in a.items()}
    if isinstance(a, torch.Tensor):
        return a[idx]
    if isinstance(a, np.ndarray):
        return a[idx.numpy()]
    return [a[i] for i in idx.tolist()]


class _ArrayData:
    """Column-wise arrays (inputs, labels, weights) with fast batched indexing."""

    def __init__(self, columns: Sequence[Any]):
        self.columns = [_as_tensor(c) for c in columns]
        n = {_length(c) for c in self.columns}
        if len(n) != 1:
            raise InputValidationError(f"data: all arrays must have the same length, got lengths {sorted(n)}")
        self.n = n.pop()

    def __len__(self) -> int:
        return self.n

    def batch(self, idx: torch.Tensor) -> tuple:
        return tuple(_take(c, idx) for c in self.columns)


class _DatasetData:
    """A map-style dataset; items are collated with ``collate_fn``."""

    def __init__(self, dataset: Any, collate_fn: Callable | None):
        self.dataset = dataset
        self.collate_fn = collate_fn or torch.utils.data.default_collate
        self.n = len(dataset)

    def __len__(self) -> int:
        return self.n

    def batch(self, idx: torch.Tensor) -> Any:
        return self.collate_fn([self.dataset[i] for i in idx.tolist()])


def _normalise_data(data: Any, collate_fn: Callable | None, *, inputs_only: bool = False) -> Any:
    """Return an ``_ArrayData``/``_DatasetData`` (indexable) or the iterable itself."""
    if isinstance(data, (np.ndarray, torch.Tensor)):
        return _ArrayData([data])
    if isinstance(data, Mapping):
        d = dict(data)
        cols: list[Any] = []
        y = d.pop("labels", d.pop("label", None))
        w = d.pop("weights", d.pop("weight", None))
        cols = [d] + ([y] if y is not None else []) + ([w] if w is not None and y is not None else [])
        return _ArrayData(cols[:1] if inputs_only else cols)
    if (
        isinstance(data, (tuple, list))
        and len(data) >= 1
        and all(isinstance(c, (np.ndarray, torch.Tensor, Mapping)) for c in data)
    ):
        return _ArrayData(data[:1] if inputs_only else data)
    if (
        hasattr(data, "__getitem__")
        and hasattr(data, "__len__")
        and not isinstance(data, torch.utils.data.DataLoader)
    ):
        return _DatasetData(data, collate_fn)
    if isinstance(data, Iterable):
        return data
    raise InputValidationError(
        "data: expected arrays (x, y[, w]), a dict of arrays, a torch Dataset or an iterable of batches, "
        f"got {type(data).__name__}"
    )


def _split_batch(batch: Any) -> tuple[Any, Any, Any]:
    """Split a batch into ``(inputs, labels or None, weights or None)``."""
    if isinstance(batch, Mapping):
        b = dict(batch)
        y = b.pop("labels", b.pop("label", None))
        w = b.pop("weights", b.pop("weight", None))
        return b, y, w
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None, None
        if len(batch) == 2:
            return batch[0], batch[1], None
        if len(batch) == 3:
            return batch[0], batch[1], batch[2]
        raise InputValidationError(
            f"batch: expected (x,), (x, y) or (x, y, w), got a sequence of {len(batch)}"
        )
    return batch, None, None


def _to_device(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=device.type == "cuda")
    if isinstance(obj, np.ndarray):
        return _to_device(_as_tensor(obj), device)
    if isinstance(obj, Mapping):
        return {k: _to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    return obj


def _default_forward(model: nn.Module, inputs: Any) -> torch.Tensor:
    out = model(**inputs) if isinstance(inputs, Mapping) else model(inputs)
    if hasattr(out, "logits"):
        out = out.logits
    elif isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _batch_size_of(inputs: Any) -> int:
    if isinstance(inputs, Mapping):
        return _batch_size_of(next(iter(inputs.values())))
    if isinstance(inputs, (list, tuple)):
        return _batch_size_of(inputs[0]) if inputs and isinstance(inputs[0], torch.Tensor) else len(inputs)
    return int(inputs.shape[0])
