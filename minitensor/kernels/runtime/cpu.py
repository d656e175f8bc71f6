"""What the CPU is: its vendor, model name and instruction-set extensions (Linux's ``/proc/cpuinfo``),
and which of NumPy's SIMD loops run on it.

Some kernel choices depend on it: ``dot_tiles`` runs whole matrix products on its register tiles
only where numba's loops get wider vectors than BLAS's kernels (``dot_tiles.tiles_beat_blas``), and
a few elementwise functions (``exp``, ``log``, ``tanh``, ...) run NumPy's own loop where NumPy has
an AVX-512 version of it for this CPU (``numpy_avx512``; ``dispatch.Kernel``'s ``numpy_simd``).

>>> info = parse("vendor_id\\t: AuthenticAMD\\nmodel name\\t: AMD EPYC\\nflags\\t\\t: fpu avx2 avx512f\\n")
>>> info["vendor"], info["model"], sorted(info["flags"])
('AuthenticAMD', 'AMD EPYC', ['avx2', 'avx512f', 'fpu'])
>>> sorted(cpu())
['flags', 'model', 'vendor']
>>> numpy_avx512("exp") <= {np.dtype(np.float32), np.dtype(np.float64)}
True
"""

from __future__ import annotations

import functools
import platform

import numpy as np

_DTYPES = {"f": np.dtype(np.float32), "d": np.dtype(np.float64)}  # opt_func_info's signature letters


def parse(text: str) -> dict:
    """{"vendor": 'AuthenticAMD', 'GenuineIntel' ... or '', "model": the model name, "flags": the
    frozenset of extensions ('avx2', 'avx512f', ...)} of the first processor in ``text`` (the format
    of ``/proc/cpuinfo``)."""
    first = text.split("\n\n")[0]  # (the first processor's block)
    fields = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in first.splitlines())}
    return {
        "vendor": fields.get("vendor_id", ""),
        "model": fields.get("model name", platform.processor() or platform.machine()),
        "flags": frozenset(fields.get("flags", "").split()),
    }


@functools.cache
def cpu() -> dict:
    """``parse`` of this machine's ``/proc/cpuinfo`` (read once); no vendor and no flags where there is
    none (not Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            return parse(f.read())
    except OSError:
        return parse("")


@functools.cache
def numpy_avx512(ufunc: str) -> frozenset:
    """The dtypes (float32, float64) for which NumPy runs an AVX-512 SIMD loop of the ufunc named ``ufunc``
    (``"exp"``) on this machine: its dispatch target for that signature, as
    ``numpy.lib.introspect.opt_func_info`` (NumPy >= 2.0) reports it, is ``X86_V4`` (NumPy >= 2.4's name
    for the AVX-512 set) or an ``AVX512_*`` one.  Empty where NumPy does not report it (older NumPy,
    other architectures).  Asked once per ufunc."""
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:
        return frozenset()
    loops = opt_func_info(func_name=f"^{ufunc}$", signature="^float(32|64)$").get(ufunc, {})
    return frozenset(
        _DTYPES[signature[0]]
        for signature, target in loops.items()
        if signature[0] in _DTYPES and (target["current"] == "X86_V4" or target["current"].startswith("AVX512"))
    )
