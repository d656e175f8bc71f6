"""numba kernels for the hot loops, each beside its NumPy reference (see ``_jit.py``)."""
