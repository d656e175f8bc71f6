"""``torch.cuda``, ``torch.amp`` and ``torch.cuda.amp`` for a machine without a GPU.

They answer the CPU's questions truthfully (``is_available()`` is False,
``device_count()`` is 0) and do what PyTorch does without CUDA: seeding the GPU
generators is a silent no-op, a ``GradScaler`` or ``autocast`` asked for on
CUDA warns and disables itself (PyTorch's own behaviour), and anything that
needs a GPU (``synchronize``, ``current_device``, ``set_device`` ...) raises
a RuntimeError naming CUDA.
"""

from __future__ import annotations

import types
import warnings

_NO_CUDA = "CUDA is not available: minitensor runs on the CPU only"


def _needs_cuda(name: str):
    def unavailable(*args, **kwargs):
        raise RuntimeError(f"torch.cuda.{name}(): {_NO_CUDA}")

    unavailable.__name__ = name
    return unavailable


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_initialized() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """A no-op, as PyTorch's when there is no GPU."""


manual_seed_all = manual_seed


def empty_cache() -> None:
    """A no-op, as PyTorch's when CUDA was never initialised."""


synchronize = _needs_cuda("synchronize")
current_device = _needs_cuda("current_device")
set_device = _needs_cuda("set_device")
get_device_name = _needs_cuda("get_device_name")
get_device_properties = _needs_cuda("get_device_properties")


def memory_allocated(device=None) -> int:
    """0: no GPU memory is in use (PyTorch's answer without CUDA)."""
    return 0


max_memory_allocated = memory_allocated
reset_peak_memory_stats = _needs_cuda("reset_peak_memory_stats")


class GradScaler:
    """PyTorch's loss scaler for float16 training; here always disabled (no float16 GPU math).

    Asked to be enabled, it warns and disables itself, exactly as PyTorch's
    does when CUDA is missing.  Disabled, every method is the identity:
    ``scale(loss)`` returns ``loss``, ``step(opt)`` calls ``opt.step()``.
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if enabled:
            level = 2 if type(self) is GradScaler else 3  # point at the user's line, also through torch.cuda.amp
            reason = _NO_CUDA if device == "cuda" else "minitensor has no float16 training, so nothing needs scaling"
            warnings.warn(f"GradScaler is enabled, but {reason}. Disabling.", UserWarning, stacklevel=level)
        self._growth_factor, self._backoff_factor, self._growth_interval = (
            growth_factor,
            backoff_factor,
            growth_interval,
        )

    def is_enabled(self) -> bool:
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        pass

    def get_scale(self) -> float:
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass


class autocast:  # noqa: N801  (PyTorch's name)
    """Mixed precision: a no-op context manager (and decorator) here.

    Disabled, it does nothing, as in PyTorch.  Enabled for ``'cuda'`` it warns
    and disables itself (PyTorch's behaviour without CUDA); enabled for
    ``'cpu'`` it warns that minitensor computes in full precision and runs
    the block unchanged.
    """

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None) -> None:
        if device_type not in ("cpu", "cuda"):
            raise ValueError(f"autocast: device_type must be 'cpu' or 'cuda', got {device_type!r}")
        level = 2 if type(self) is autocast else 3
        if enabled and device_type == "cuda":
            warnings.warn(f"autocast: {_NO_CUDA}; disabling autocast.", UserWarning, stacklevel=level)
        elif enabled:
            warnings.warn(
                "autocast on the CPU: minitensor has no mixed precision; the block runs in its own dtypes.",
                UserWarning,
                stacklevel=level,
            )
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, False

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class _CudaAutocast(autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CudaGradScaler(GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale, growth_factor, backoff_factor, growth_interval, enabled)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


# torch.amp (device-generic) and torch.cuda.amp (the older, CUDA-only spelling)
amp = types.ModuleType("torch.cuda.amp", "torch.cuda.amp: GradScaler and autocast (disabled without CUDA).")
amp.GradScaler, amp.autocast = _CudaGradScaler, _CudaAutocast
torch_amp = types.ModuleType("torch.amp", "torch.amp: GradScaler and autocast (no-ops on minitensor).")
torch_amp.GradScaler, torch_amp.autocast = GradScaler, autocast


# torch.accelerator (PyTorch >= 2.6): the device-generic questions, answered for a CPU-only machine.
accelerator = types.ModuleType("torch.accelerator", "torch.accelerator: no accelerator on minitensor.")
accelerator.is_available, accelerator.device_count = is_available, device_count
accelerator.current_accelerator = lambda check_available=False: None  # PyTorch's answer without one
