"""Arguments that may be None: one specialisation for None and for an array.

numba compiles a kernel once per combination of argument types, and None is a type of its
own: a kernel with n arguments that may be None (a mask, dropout multipliers, an output
that is not wanted) is compiled for each combination of None and array it meets, up to 2^n
times the same code (attention's forward met 48 in the test suite, 2-3 s of compiling
each).  A kernel declares such arguments, each with the argument whose dtype and number of
dims it shares::

    @njit(optional={"mask": "q", "drop": "q", "p": "q"})
    def _forward_serial(q, k, v, mask, scale, drop, p, out): ...

and its dispatcher (``share``) compiles each of them as numba's ``Optional`` of its array
type: None and a C-contiguous array of that type run the same machine code, which tests
``mask is None`` when it runs (the branches numba would have dropped at compile time:
tests once a head or a row, not an element).  A call's own types are then registered for
that code, so later calls find it at once.

Where not to: a kernel that tests an optional argument for every element (the test stays in
the loop and the loop no longer vectorises: binary cross-entropy's kernels ran 3-4x slower
so), and a ``parallel=True`` kernel (numba hands its parallel loop the arrays unwrapped from
their ``Optional``, and a None fails there).

>>> from numba.core import types
>>> f4 = types.Array(types.float32, 2, "C")
>>> [str(t) for t in canonical((f4, types.none, f4), {1: 0, 2: 0}, types)]
['array(float32, 2d, C)', 'OptionalType(array(float32, 2d, C))', 'OptionalType(array(float32, 2d, C))']
"""

from __future__ import annotations

import inspect


def positions(py_func, optional: dict) -> dict:
    """``{position of an argument that may be None: position of the argument it is like}``."""
    names = list(inspect.signature(py_func).parameters)
    for name in (*optional, *optional.values()):
        if name not in names:
            raise ValueError(f"optional: {py_func.__name__} has no argument {name!r} (it has {names})")
    return {names.index(name): names.index(like) for name, like in optional.items()}


def canonical(args: tuple, where: dict, types) -> tuple:
    """The types to compile for the argument types ``args``: each argument at a position of
    ``where`` (see ``positions``) as ``Optional`` of its array type (None: of a C-contiguous array
    of the dtype and dims of the argument it is like)."""
    shared = list(args)
    for i, j in where.items():
        if isinstance(args[i], types.NoneType) and isinstance(args[j], types.Array):
            like = args[j]
            shared[i] = types.Optional(types.Array(like.dtype, like.ndim, "C"))
        elif isinstance(args[i], types.Array):
            shared[i] = types.Optional(args[i])
    return tuple(shared)


def share(dispatcher, where: dict, types) -> None:
    """Make ``dispatcher`` compile (or load from the disk cache) the ``canonical`` types for any
    argument types it is asked to compile, and run that code for them."""
    compile_exact = dispatcher.compile

    def compile_shared(sig):  # (numba's dispatcher calls it with a tuple of argument types)
        if not isinstance(sig, tuple):
            return compile_exact(sig)
        shared = canonical(sig, where, types)
        entry = compile_exact(shared)
        if shared != sig:  # these types' later calls go to that code at once (numba's own table)
            dispatcher._insert([t._code for t in sig], entry, False)
        return entry

    dispatcher.compile = compile_shared
