"""Differentiable ops: one ``Function`` per primitive, grouped by family (see each module).

Loading this package also gives ``Tensor`` its methods that compute: the method tables of
``math_methods.py`` (arithmetic, comparisons, elementwise functions, reductions),
``shape_methods.py`` (shape and indexing), ``inplace.py`` (``x += y``, ``x[i] = v``, ``zero_``...),
``numpy_protocol.py`` (``np.exp(t)``) and ``method_forms.py`` (``x.tan()``, ``x.lerp_(...)``: the
methods that are their functions), each a thin wrapper over the ops here.  (``Tensor``
lives on the floor below and never imports the ops: they are built on it.)
"""

from ..tensor import Tensor
from ..tensor.extras import mark_unimplemented
from .inplace import InplaceMethods
from .math_methods import MathMethods
from .method_forms import FunctionMethods
from .numpy_protocol import NumPyMethods
from .shape_methods import ShapeMethods

Tensor.add_methods(MathMethods, ShapeMethods, InplaceMethods, NumPyMethods, FunctionMethods)
mark_unimplemented(Tensor)  # (after the methods: the PyTorch names still missing say so when read)
