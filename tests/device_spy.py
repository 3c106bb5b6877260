"""A second device on a CPU-only machine, for tests of the GPU path that CI (which has no GPU) can run.

Inside :class:`DeviceSpy`, a tensor moved to the spy device (``.to("meta")``, ``model.to("meta")``, a factory
with ``device="meta"``) keeps its real CPU data but says it lives on ``meta``; every operation runs on the CPU
data, and one that mixes a spied tensor with an ordinary CPU tensor of one or more dimensions raises the error
CUDA raises (``Expected all tensors to be on the same device``).  So a trainer or predict function that leaves its
batches on the CPU while the model sits on the accelerator fails here exactly as it fails on a GPU, and one that
moves everything computes the same numbers as on the CPU.

What CUDA allows is allowed: 0-dimensional CPU tensors (scalars) beside spied ones, copying between the devices
(``copy_``, ``load_state_dict``), and indexing a spied tensor with CPU indices.  ``.cpu()`` returns the CPU data.
Using ``meta`` as the claimed device is a trick of the test: it is the one device type that a CPU build of torch
lets a tensor claim without a backend.  Code that asks for ``device="meta"`` therefore computes on the CPU inside
the spy (its ``torch.device`` is ``meta``); outside the spy nothing changes.

>>> import torch
>>> with DeviceSpy():
...     layer = torch.nn.Linear(3, 2).to(SPY_DEVICE)
...     ok = layer(torch.ones(4, 3).to(SPY_DEVICE)).cpu().shape
...     layer(torch.ones(4, 3))
Traceback (most recent call last):
...
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, meta and cpu! (aten.addmm.default)
"""

from __future__ import annotations

import contextlib

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

__all__ = ["SPY_DEVICE", "DeviceSpy", "SpyTensor"]

SPY_DEVICE = torch.device("meta")

#: ops whose tensor arguments may sit on two devices, as on CUDA: copies, and indexing a tensor with CPU indices
_CROSS_DEVICE_OK = {torch.ops.aten.copy_.default, torch.ops.aten._copy_from.default}
_INDEX_OPS = {torch.ops.aten.index.Tensor, torch.ops.aten.index_put_.default, torch.ops.aten.index_put.default,
              torch.ops.aten._index_put_impl_.default}  # fmt: skip


class SpyTensor(torch.Tensor):
    """A CPU tensor (``.inner``) that reports :data:`SPY_DEVICE` as its device."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor):
        t = torch.Tensor._make_wrapper_subclass(
            cls, inner.shape, strides=inner.stride(), storage_offset=inner.storage_offset(), dtype=inner.dtype,
            device=SPY_DEVICE, requires_grad=inner.requires_grad, layout=inner.layout,
        )  # fmt: skip
        t.inner = inner
        return t

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"SpyTensor({self.inner!r})"

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _is_spy_device(device) -> bool:
    return device is not None and torch.device(device).type == SPY_DEVICE.type


def _check_devices(func, args, kwargs) -> None:
    tensors = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
    if func in _CROSS_DEVICE_OK or not any(isinstance(t, SpyTensor) for t in tensors):
        return
    if func in _INDEX_OPS and isinstance(args[0], SpyTensor):
        rest = [t for t in tree_leaves((args[2:], kwargs)) if isinstance(t, torch.Tensor)]  # values to put
        tensors = [args[0], *rest]
    if any(not isinstance(t, SpyTensor) and t.dim() > 0 for t in tensors):
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{SPY_DEVICE.type} and cpu! ({func})"
        )


def _target_device(func, args, kwargs):
    """The device a conversion (``aten.to`` / ``aten._to_copy``, any overload) moves to, else None."""
    if func.overloadpacket not in (torch.ops.aten.to, torch.ops.aten._to_copy):
        return None
    found = [kwargs.get("device")] + [a for a in args[1:] if isinstance(a, (torch.device, str))]
    return next((torch.device(d) for d in found if d is not None), None)


def _convert(func, args, kwargs, target: torch.device):
    """A move to the spy device or to the CPU: a copy of the CPU data, converted to the asked dtype."""
    src = args[0].inner if isinstance(args[0], SpyTensor) else args[0]
    dtype = kwargs.get("dtype") or next((a for a in args[1:] if isinstance(a, torch.dtype)), None)
    out = src.to(dtype=dtype or src.dtype, copy=True)
    return SpyTensor(out) if _is_spy_device(target) else out


def _empty_meta_to_spy(a):
    """A real ``meta`` tensor (``torch.tensor([], device="meta")`` is made without dispatch) holds no data: an
    empty one becomes an empty spied tensor; a non-empty one cannot be represented."""
    if not isinstance(a, torch.Tensor) or isinstance(a, SpyTensor) or a.device.type != SPY_DEVICE.type:
        return a
    if a.numel():
        raise RuntimeError("device spy: a non-empty tensor made directly on 'meta' has no data to compute with")
    return SpyTensor(torch.empty(a.shape, dtype=a.dtype))


def _dispatch(func, args, kwargs):
    target = _target_device(func, args, kwargs)
    if target is not None and (_is_spy_device(target) or target.type == "cpu"):
        return _convert(func, args, kwargs, target)
    to_spy = False
    if _is_spy_device(kwargs.get("device")):  # a factory (zeros, arange, ...) on the spy device
        to_spy = True
        kwargs = {**kwargs, "device": torch.device("cpu")}
    args, kwargs = tree_map(_empty_meta_to_spy, (args, kwargs))
    _check_devices(func, args, kwargs)
    spied = to_spy or any(isinstance(a, SpyTensor) for a in tree_leaves((args, kwargs)))

    def unwrap(a):
        return a.inner if isinstance(a, SpyTensor) else a

    out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
    if not spied:
        return out
    if func._schema.is_mutable and isinstance(args[0], SpyTensor):  # in place: the wrapper stays the result
        return args[0]
    is_view = bool(func._schema.returns) and func._schema.returns[0].alias_info is not None
    # a view's wrapper is made as its base was (autograd gives a view its base's version counter, which an
    # inference tensor does not have)
    with torch.inference_mode(args[0].is_inference()) if is_view else contextlib.nullcontext():
        return tree_map(lambda o: SpyTensor(o) if isinstance(o, torch.Tensor) and not isinstance(o, SpyTensor) else o,
                        out)  # fmt: skip


class _SpyDispatch(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(issubclass(t, SpyTensor) for t in types):
            return NotImplemented  # the subclass handles it
        return _dispatch(func, args, kwargs or {})


class _SpyConstructors(TorchFunctionMode):
    """``torch.tensor(data, device="meta")`` and ``torch.as_tensor`` build their tensor without a dispatched copy
    (the data would be lost on a real ``meta`` tensor): they are built on the CPU and moved."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.tensor, torch.as_tensor) and _is_spy_device(kwargs.get("device")):
            return func(*args, **{**kwargs, "device": "cpu"}).to(SPY_DEVICE)
        return func(*args, **kwargs)


class DeviceSpy:
    """While active, ``meta`` is a second device holding real data (see the module docstring)."""

    def __enter__(self) -> DeviceSpy:
        # ``module.to(device)`` swaps each parameter's contents in place, as a move to CUDA keeps the parameter
        # objects (tied weights stay tied); by default a subclass result would give new, untied parameters
        self._swap = torch.__future__.get_swap_module_params_on_conversion()
        torch.__future__.set_swap_module_params_on_conversion(True)
        self._modes = [_SpyConstructors(), _SpyDispatch()]
        for mode in self._modes:
            mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        for mode in reversed(self._modes):
            mode.__exit__(*exc)
        torch.__future__.set_swap_module_params_on_conversion(self._swap)
