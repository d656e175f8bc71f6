"""Argument types that share one specialisation: None and arrays, any memory layout, read-only.

numba compiles a kernel once per combination of argument types it meets (0.1 to 16 s each),
and it tells apart many types that the same machine code could run:

- None is a type of its own: a kernel with n arguments that may be None (a mask, dropout
  multipliers, an output that is not wanted) is compiled for each combination of None and
  array it meets, up to 2^n times the same code (attention's forward met 48 in the test suite);
- a C-contiguous array, a Fortran one and a strided view (numba's layouts 'C', 'F', 'A') are
  three types: attention's heads may be views into a (N, L, 3E) projection or arrays of their own;
- a read-only array (a broadcast, a NumPy buffer marked so) and a writable one are two;
- a constant that one kernel passes to another, ``f(x, 0)``, is numba's ``Literal[int](0)``,
  beside the int64 of ``f(x, i)``: a range kernel called by a serial and a parallel kernel
  would be compiled twice.  Calls between kernels compile their arguments' plain types
  (``plain_calls``, for every kernel).

A kernel declares its arguments that need not be told apart::

    @njit(optional={"mask": "q", "drop": "q"}, any_layout=("q", "k", "v", "out"), read_only=("q", "k", "v", "mask"))
    def _forward_serial(q, k, v, mask, scale, drop, p, out): ...

- ``optional``: each argument that may be None, with the argument whose dtype and number of
  dims it shares; it is compiled as numba's ``Optional`` of its array type, and the machine
  code tests ``mask is None`` when it runs (the branches numba would have dropped at compile
  time: tests once a head or a row, not an element);
- ``any_layout``: arrays compiled as numba's 'A' layout (a C-contiguous array runs that code
  too; the code reads the strides, where 'C' code knows them);
- ``read_only``: arrays the kernel only reads, compiled read-only (a writable array runs that
  code too; numba refuses to compile a write into them).

and its dispatcher (``share``) compiles these ``canonical`` types for any argument types it
meets; a call's own types are then registered for that code, so later calls find it at once.

Where not to: a kernel that tests an optional argument for every element (the test stays in
the loop and the loop no longer vectorises: binary cross-entropy's kernels ran 3-4x slower
so), a ``parallel=True`` kernel with optional arguments (numba hands its parallel loop the
arrays unwrapped from their ``Optional``, and a None fails there), and an array whose loops
need its layout to vectorise.

>>> from numba.core import types
>>> f4 = types.Array(types.float32, 2, "C")
>>> rules = Rules(optional={1: 0, 2: 0}, any_layout=frozenset({0, 2}), read_only=frozenset({0}))
>>> [str(t) for t in canonical((f4, types.none, f4), rules, types)]
['readonly array(float32, 2d, A)', 'OptionalType(array(float32, 2d, C))', 'OptionalType(array(float32, 2d, A))']
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

DECLARATIONS = ("optional", "any_layout", "read_only")  # the decorator's keywords (``@njit(optional=...)``)


class Rules(NamedTuple):
    """A kernel's declaration by argument positions (see the module docstring)."""

    optional: dict  # position of an argument that may be None -> position of the argument it is like
    any_layout: frozenset  # positions of arrays compiled with the 'A' layout
    read_only: frozenset  # positions of arrays compiled read-only


def rules(py_func, optional: dict | None = None, any_layout=(), read_only=()) -> Rules | None:
    """The ``Rules`` of a kernel's declaration by argument names (None when it declares nothing)."""
    names = list(inspect.signature(py_func).parameters)
    optional = optional or {}
    for name in (*optional, *optional.values(), *any_layout, *read_only):
        if name not in names:
            raise ValueError(f"{py_func.__name__} has no argument {name!r} (it has {names})")
    if not (optional or any_layout or read_only):
        return None
    return Rules(
        {names.index(name): names.index(like) for name, like in optional.items()},
        frozenset(map(names.index, any_layout)),
        frozenset(map(names.index, read_only)),
    )


def canonical(args: tuple, rules: Rules, types) -> tuple:
    """The types to compile for the argument types ``args`` under ``rules``: an optional argument
    as ``Optional`` of its array type (None: of a C-contiguous array of the dtype and dims of the
    argument it is like), then each array with the layout and mutability its rules give."""
    shared = list(args)
    for i, arg in enumerate(args):
        if i in rules.optional and isinstance(arg, types.NoneType):
            like = args[rules.optional[i]]
            arg = types.Array(like.dtype, like.ndim, "C") if isinstance(like, types.Array) else arg
        if not isinstance(arg, types.Array):
            continue
        arg = arg.copy(layout="A" if i in rules.any_layout else None, readonly=(i in rules.read_only) or None)
        shared[i] = types.Optional(arg) if i in rules.optional else arg
    return tuple(shared)


def share(dispatcher, rules: Rules, types) -> None:
    """Make ``dispatcher`` compile (or load from the disk cache) the ``canonical`` types for any
    argument types it is asked to compile, and run that code for them."""
    compile_exact = dispatcher.compile

    def compile_shared(sig):  # (numba's dispatcher calls it with a tuple of argument types)
        if not isinstance(sig, tuple):
            return compile_exact(sig)
        shared = canonical(sig, rules, types)
        entry = compile_exact(shared)
        if shared != sig:  # these types' later calls go to that code at once (numba's own table)
            dispatcher._insert([t._code for t in sig], entry, False)
        return entry

    dispatcher.compile = compile_shared


def plain_calls(dispatcher, types) -> None:
    """Make a call from another kernel compile ``dispatcher`` for its arguments' plain types (int64
    for ``Literal[int](0)``); numba's conversion then takes the constant to that code."""
    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        plain = types.unliteral
        return typed(tuple(map(plain, args)), {key: plain(value) for key, value in kws.items()})

    dispatcher.get_call_template = get_call_template
