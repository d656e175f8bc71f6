"""Function transforms, as ``torch.func``: functions that take a function and return one.

- ``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (reverse mode, ``reverse.py``);
- ``jvp``, ``linearize``, ``jacfwd``, ``hessian`` (forward mode, ``forward.py``);
- ``vmap`` (a function of one example made a function of a batch, ``vmap.py``);
- ``functional_call``, ``stack_module_state``: a Module as a function of its parameters.

They compose: ``grad(grad(f))``, ``jacrev(grad(f))``.  Nested tuples, lists and dicts of
Tensors go in and come out with the same structure (``pytree.py``).
"""

from .forward import hessian, jacfwd, jvp, linearize
from .functional_call import functional_call, stack_module_state
from .reverse import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "stack_module_state",
    "vjp",
    "vmap",
]
