"""The demo: a small Transformer learns to spot a repeated token, in seconds, on a CPU.

Run it with ``python -m minitensor.demo`` (``--help`` lists the flags).  It
trains a two-layer Transformer encoder classifier, checks its accuracy on
held-out sequences, saves and reloads a checkpoint, and draws what one
attention layer looks at.  The pieces, one per file:

- ``task.py``: the synthetic task and its data generator;
- ``model.py``: the classifier (embedding, positions, encoder, pooling, head)
  and its attention maps;
- ``display.py``: the progress bar and the text (and PNG) heatmap;
- ``run.py``: the command line, the training loop, the checkpoint round trip.

``python -m minitensor.demo --task digits`` runs the other demo, ``digits.py``: a small CNN
learns the handwritten digits of ``data/digits.csv.gz`` (scikit-learn's copy of a UCI data set;
``data/digits_LICENSE.txt``), with a confusion matrix and pictures of its filters and mistakes.
"""
