"""The one switch between the autograd core and ``mt.profiler``.

``active`` is None, except inside ``with mt.profiler.profile() as prof:``, where it is
``prof``.  ``Function.run``/``Function.apply`` (each op's forward) and the engine (each
node's backward) test it once per op, so the profiler costs nothing while it is off::

    if _profiling.active is None:
        out = cls.forward(ctx, *arrays)
    else:  # time it: active.time(name, "forward" | "backward", fn, *args)
        out = _profiling.active.time(cls.__name__, "forward", cls.forward, ctx, *arrays)
"""

active = None
