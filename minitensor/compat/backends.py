"""``torch.backends``: the switches scripts set for GPUs, with the CPU's truthful answers.

Setting ``torch.backends.cuda.matmul.allow_tf32 = True`` or
``torch.backends.cudnn.benchmark = True`` is accepted and changes nothing
(there is no GPU); ``is_available()`` of every accelerator backend is False.
"""

from __future__ import annotations

import types


def _false(*args, **kwargs) -> bool:
    return False


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name, f"{name}: accepted for PyTorch compatibility; no effect on the CPU.")
    module.__dict__.update(attrs)
    return module


def _noop(*args, **kwargs) -> None:
    return None


def modules() -> dict:
    """``{name: module}`` for ``torch.backends`` and its submodules."""
    cuda = _module(
        "torch.backends.cuda",
        matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
        is_built=_false,
        enable_flash_sdp=_noop,
        enable_mem_efficient_sdp=_noop,
        enable_math_sdp=_noop,
        flash_sdp_enabled=_false,
    )
    cudnn = _module(
        "torch.backends.cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True, is_available=_false
    )
    mps = _module("torch.backends.mps", is_available=_false, is_built=_false)
    mkldnn = _module("torch.backends.mkldnn", is_available=_false, enabled=False)
    backends = _module("torch.backends", cuda=cuda, cudnn=cudnn, mps=mps, mkldnn=mkldnn)
    subs = {"cuda": cuda, "cudnn": cudnn, "mps": mps, "mkldnn": mkldnn}
    return {"torch.backends": backends, **{f"torch.backends.{k}": v for k, v in subs.items()}}
