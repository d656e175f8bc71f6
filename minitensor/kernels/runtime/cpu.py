"""What the CPU is: its vendor, model name and instruction-set extensions (Linux's ``/proc/cpuinfo``).

Some kernel choices depend on it: ``dot_tiles`` runs whole matrix products on its register tiles
only where numba's loops get wider vectors than BLAS's kernels (``dot_tiles.tiles_beat_blas``).

>>> info = parse("vendor_id\\t: AuthenticAMD\\nmodel name\\t: AMD EPYC\\nflags\\t\\t: fpu avx2 avx512f\\n")
>>> info["vendor"], info["model"], sorted(info["flags"])
('AuthenticAMD', 'AMD EPYC', ['avx2', 'avx512f', 'fpu'])
>>> sorted(cpu())
['flags', 'model', 'vendor']
"""

from __future__ import annotations

import functools
import platform


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
