"""The names PyTorch's checkpoints use, and what each one is in minitensor.

A checkpoint names things as text (``torch FloatStorage``, ``torch.nn.modules.linear Linear``).
These tables are plain data: no name in them is ever imported.

- ``STORAGE_DTYPES``: a storage class (how ``torch.save`` tags the bytes of a tensor) -> its
  element type; ``bfloat16`` has no NumPy dtype, so it is the string ``"bfloat16"`` (read as
  float32, exactly: a bfloat16 is the top half of a float32).
- ``DTYPES``: the ``torch.<dtype>`` names (pickled ``torch.float32`` objects, and the dtype
  argument of ``_rebuild_tensor_v3``) -> NumPy dtype (or ``"bfloat16"``).
- ``FUNCTIONAL_MODULES``: the ``nn.functional`` functions PyTorch pickles under another module's
  name (``gelu`` is ``torch._C._nn.gelu``), for a module whose ``activation`` is one of them.
- ``NN_CLASS_FILES``: which file of ``torch/nn/modules/`` defines each ``nn`` class, so that a
  minitensor ``nn.Linear`` is written as ``torch.nn.modules.linear.Linear`` (what PyTorch
  reads) and a file naming that class finds minitensor's ``nn.Linear``.
  ``tests/serialization/test_torch_names.py`` checks the table against PyTorch itself.
"""

from __future__ import annotations

import numpy as np

BFLOAT16 = "bfloat16"

STORAGE_DTYPES = {
    "DoubleStorage": np.dtype("float64"),
    "FloatStorage": np.dtype("float32"),
    "HalfStorage": np.dtype("float16"),
    "BFloat16Storage": BFLOAT16,
    "LongStorage": np.dtype("int64"),
    "IntStorage": np.dtype("int32"),
    "ShortStorage": np.dtype("int16"),
    "CharStorage": np.dtype("int8"),
    "ByteStorage": np.dtype("uint8"),
    "BoolStorage": np.dtype("bool"),
}

# The storage class minitensor writes for each dtype it has (bfloat16 is never written).
STORAGE_OF_DTYPE = {dtype: name for name, dtype in STORAGE_DTYPES.items() if dtype is not BFLOAT16}

# Element types PyTorch has and minitensor does not: named in the error a file holding them gets.
UNSUPPORTED_STORAGES = {
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8 (quantized)",
    "QInt32Storage": "qint32 (quantized)",
    "QUInt8Storage": "quint8 (quantized)",
    "QUInt4x2Storage": "quint4x2 (quantized)",
    "QUInt2x4Storage": "quint2x4 (quantized)",
}

DTYPES = {
    "float64": np.dtype("float64"),
    "float32": np.dtype("float32"),
    "float16": np.dtype("float16"),
    "bfloat16": BFLOAT16,
    "int64": np.dtype("int64"),
    "int32": np.dtype("int32"),
    "int16": np.dtype("int16"),
    "int8": np.dtype("int8"),
    "uint8": np.dtype("uint8"),
    "bool": np.dtype("bool"),
}

# torch.<name> of each minitensor dtype (a dtype stored as a value, e.g. in a module's attributes).
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items() if dtype is not BFLOAT16}

UNSUPPORTED_DTYPES = (
    "complex32 complex64 complex128 uint16 uint32 uint64 float8_e4m3fn float8_e5m2 float8_e4m3fnuz "
    "float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2 qint8 qint32 quint8 quint4x2 quint2x4 bits8 bits16 "
    "bits1x8 bits2x4 bits4x2 int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7"
).split()

# torch/nn/modules/<file>.py -> the nn classes it defines (PyTorch 2.13).
NN_CLASS_FILES = {
    "activation": "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU LogSigmoid LogSoftmax "
    "Mish MultiheadAttention PReLU RReLU ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmax2d Softmin Softplus "
    "Softshrink Softsign Tanh Tanhshrink Threshold",
    "adaptive": "AdaptiveLogSoftmaxWithLoss",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d SyncBatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "Container ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d LazyConv2d LazyConv3d "
    "LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d FeatureAlphaDropout",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d LazyInstanceNorm2d "
    "LazyInstanceNorm3d",
    "linear": "Bilinear Identity LazyLinear Linear",
    "loss": "BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss "
    "HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss LinearCrossEntropyLoss MSELoss MarginRankingLoss "
    "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d PoissonNLLLoss SmoothL1Loss "
    "SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss",
    "module": "Module",
    "normalization": "CrossMapLRN2d GroupNorm LayerNorm LocalResponseNorm RMSNorm",
    "padding": "CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d "
    "ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d ZeroPad1d ZeroPad2d ZeroPad3d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d "
    "AdaptiveMaxPool3d AvgPool1d AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d LPPool1d LPPool2d "
    "LPPool3d MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d",
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell RNNCellBase",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}

NN_CLASS_FILE = {name: file for file, names in NN_CLASS_FILES.items() for name in names.split()}

# torch.nn.functional functions PyTorch defines elsewhere, and pickles by that module's name (2.13).
FUNCTIONAL_MODULES = {
    "torch": "adaptive_avg_pool1d avg_pool1d bilinear celu_ channel_shuffle conv1d conv2d conv3d conv_tbc "
    "conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity hardshrink native_channel_shuffle "
    "pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ selu_ threshold_",
    "torch._C._nn": "avg_pool2d avg_pool3d elu_ gelu hardtanh_ leaky_relu_ linear one_hot scaled_dot_product_attention "
    "softplus softshrink",
}
FUNCTIONAL_MODULE = {name: module for module, names in FUNCTIONAL_MODULES.items() for name in names.split()}


def torch_function_name(name: str) -> str:
    """The full name under which PyTorch pickles ``torch.nn.functional.<name>``.

    >>> torch_function_name("relu"), torch_function_name("gelu")
    ('torch.nn.functional.relu', 'torch._C._nn.gelu')
    """
    return f"{FUNCTIONAL_MODULE.get(name, 'torch.nn.functional')}.{name}"


# Other names PyTorch uses for a class minitensor has once: MultiheadAttention's out_proj is a
# NonDynamicallyQuantizableLinear (a Linear that quantization leaves alone).
NN_CLASS_ALIASES = {"Linear": ("torch.nn.modules.linear.NonDynamicallyQuantizableLinear",)}


def torch_class_names(name: str) -> tuple:
    """The full names under which PyTorch pickles its ``nn`` class ``name`` (first: the one it writes).

    >>> torch_class_names("Linear")
    ('torch.nn.modules.linear.Linear', 'torch.nn.modules.linear.NonDynamicallyQuantizableLinear')
    >>> torch_class_names("MyNet")
    ()
    """
    file = NN_CLASS_FILE.get(name)
    if file is None:
        return ()
    return (f"torch.nn.modules.{file}.{name}",) + NN_CLASS_ALIASES.get(name, ())
