"""What the CPU is: its vendor, model name and instruction-set extensions (Linux's ``/proc/cpuinfo``).

Some kernel choices depend on it: ``dot_tiles`` runs whole matrix products on its register tiles
only where numba's loops get wider vectors than BLAS's kernels (``dot_tiles.tiles_beat_blas``).

>>> info = cpu()
>>> sorted(info)
['flags', 'model', 'vendor']
"""

from __future__ import annotations

import functools
import platform


@functools.cache
def cpu() -> dict:
    """{"vendor": 'AuthenticAMD' or 'GenuineIntel' ..., "model": the model name, "flags": the set of
    extensions ('avx2', 'avx512f', ...)} of the first processor; empty vendor and flags where there is
    no ``/proc/cpuinfo`` (read once)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n")[0]  # (the first processor's block)
        fields = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in first.splitlines())}
    except OSError:
        pass
    return {
        "vendor": fields.get("vendor_id", ""),
        "model": fields.get("model name", platform.processor() or platform.machine()),
        "flags": frozenset(fields.get("flags", "").split()),
    }
