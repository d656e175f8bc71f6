"""The one switch between the autograd core and ``mt.profiler``.

``active`` is None, except inside ``with mt.profiler.profile() as prof:``, where it is
``prof``.  ``Function.run``/``Function.apply`` (each op's forward) and the engine (each
node's backward) test it once per op, so the profiler costs nothing while it is off::

    if _profiling.active is None:
        out = cls.forward(ctx, *arrays)
    else:  # time it: active.time(name, "forward" | "backward", fn, *args)
        out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays)

Code that runs an op's forward without ``Function`` (the encoder layer's inference path calls
the fused ops' array functions) uses ``forward`` to be timed under the op's name all the same.
"""

active = None


def forward(name: str, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``, timed as the forward of op ``name`` while the profiler records."""
    if active is None:
        return fn(*args, **kwargs)
    return active.time(name, "forward", fn, *args, **kwargs)
