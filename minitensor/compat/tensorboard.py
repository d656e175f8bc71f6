"""``torch.utils.tensorboard`` under the PyTorch switch: a ``SummaryWriter`` for scalars.

PyTorch's module writes TensorBoard's event files with the ``tensorboard``
package (``pip install tensorboard``) and cannot be imported without it; the
same holds here: ``from torch.utils.tensorboard import SummaryWriter`` raises
ModuleNotFoundError naming ``tensorboard`` when it is missing.  With it, the
writer logs what training scripts log (makemore's losses, for one):

- ``add_scalar(tag, value, global_step=None, walltime=None)`` (a number or a
  one-element tensor) and ``add_scalars(main_tag, {tag: value}, ...)`` (one
  run per tag under ``log_dir``, as PyTorch's);
- ``flush()``, ``close()``, ``get_logdir()``, and ``with SummaryWriter() as w:``.

The files are TensorBoard's own (``tensorboard --logdir runs`` shows them).  The
other ``add_*`` methods of PyTorch's writer (images, graphs, embeddings,
histograms ...) raise NotImplementedError naming themselves.
"""

from __future__ import annotations

import os
import socket
import time

import tensorboard  # noqa: F401  (first: without it, the error names "tensorboard", as PyTorch's)
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter"]


class SummaryWriter:
    """Scalars into TensorBoard event files under ``log_dir`` (default ``runs/<date>_<host><comment>``)."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:  # fmt: skip
        if log_dir is None:
            log_dir = os.path.join("runs", time.strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self._options = (max_queue, flush_secs, filename_suffix)
        self._writer = EventFileWriter(self.log_dir, *self._options)
        self._runs = {}  # add_scalars' writers, one per tag

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False) -> None:  # fmt: skip
        """Log ``scalar_value`` (a number or a one-element tensor) under ``tag`` at ``global_step``."""
        _write(self._writer, tag, scalar_value, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Log several scalars under ``main_tag``, each in a run of its own (``log_dir/main_tag_tag``)."""
        for tag, value in tag_scalar_dict.items():
            run = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            if run not in self._runs:
                self._runs[run] = EventFileWriter(run, *self._options)
            _write(self._runs[run], main_tag, value, global_step, walltime)

    def flush(self) -> None:
        for writer in (self._writer, *self._runs.values()):
            writer.flush()

    def close(self) -> None:
        for writer in (self._writer, *self._runs.values()):
            writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getattr__(self, name: str):
        if name.startswith("add_"):
            raise NotImplementedError(
                f"SummaryWriter.{name}: minitensor's torch.utils.tensorboard writes scalars only "
                "(add_scalar, add_scalars); see minitensor/compat/tensorboard.py"
            )
        raise AttributeError(name)


def _write(writer: EventFileWriter, tag: str, value, step, walltime) -> None:
    """One scalar as an event (TensorBoard's ``simple_value``)."""
    value = value.item() if hasattr(value, "item") else value
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))])
    event = event_pb2.Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
    if step is not None:
        event.step = int(step)
    writer.add_event(event)
