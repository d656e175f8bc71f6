"""The runtime under the kernels: how and where a kernel runs (the kernels themselves are one floor up).

- ``jit.py``: the JIT switch (``mt.set_jit_enabled``, ``MINITENSOR_DISABLE_JIT``) and numba, loaded
  and compiled lazily (``@njit``: a kernel compiles on its first call, ``cache=True``);
- ``dispatch.py``: a kernel's NumPy reference, serial and parallel versions, and the choice
  between them per call (``Kernel``); the rows layout the row kernels share;
- ``threads.py``: the thread policy (BLAS and the parallel kernels use the machine's free cores);
- ``blas.py``: NumPy's own BLAS called from numba kernels; ``blas_threads.py``: kernels run on
  BLAS's threads;
- ``cache.py``: numba's disk cache, stamped with every kernel file;
- ``malloc.py``: glibc's malloc kept from returning freed arrays to the system (set at import);
- ``transpose.py``: C-order copies of transposed float32 matrices (a transposed gradient) on BLAS.
- ``cpu.py``: what the CPU is (vendor, model, extensions), for the choices that depend on it.
"""
