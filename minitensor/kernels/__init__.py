"""The array backend: numba kernels for the hot loops, each beside its NumPy reference; ``runtime/``
chooses between them (see ``runtime/jit.py`` and ``runtime/dispatch.py``).  The rest of minitensor
reaches these through ``minitensor/backend.py``."""
