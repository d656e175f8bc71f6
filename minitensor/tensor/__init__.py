"""The Tensor: a NumPy array plus what autograd needs to know about it (``tensor.py``), the
parts of its API autograd has nothing to do with (``extras.py``), the hooks it leaves on the
graph (``hooks.py``), the factories ``mt.tensor``/``mt.zeros``/... (``creation.py``) and PyTorch's
legacy typed constructors (``types.py``).  Its methods that compute come from ``minitensor.ops``."""

from .tensor import Tensor, VersionCounter

__all__ = ["Tensor", "VersionCounter"]
