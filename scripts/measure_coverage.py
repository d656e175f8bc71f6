"""Measure how much of PyTorch the course code people run resolves on minitensor.

The code students actually run (Karpathy's lectures and repositories, pytorch/examples, the
Annotated Transformer, Raschka's books) is read from local git mirrors, every ``.py`` file and
every code cell of every ``.ipynb`` notebook, and parsed with ``ast``.  Counted, once per
occurrence (so a name is weighted by its use):

- attribute chains rooted at a name bound to ``torch`` or one of its modules
  (``import torch``, ``import torch.nn as nn``, ``from torch.nn import functional as F``,
  ``from torch import nn, optim``); a chain is cut after its first segment that is not a module
  (``torch.nn.functional.relu(x).sum`` counts ``torch.nn.functional.relu``);
- names imported from torch (``from torch.nn import Linear``; each use of ``Linear`` counts
  ``torch.nn.Linear``);
- Tensor methods and attributes: ``anything.name`` where ``name`` is a public attribute of
  PyTorch's ``Tensor`` (``minitensor/_torch_names.py``) and the receiver is not a torch module,
  counted as ``Tensor.name``.  A few names that are far more often methods of dicts, lists or
  strings (``AMBIGUOUS``) are left out.

Each name is then looked up on minitensor under its PyTorch name, through the switch that makes
``import torch`` give minitensor (``minitensor.compat``): ``torch.nn.Linear`` resolves when
``torch.nn.Linear`` exists there, ``Tensor.view`` when ``torch.Tensor`` has ``view``.  Names of
GPU, distributed, export and compiler features (``EXCLUDED``) are counted apart: minitensor
documents them as unsupported (docs/pytorch.md), and most of them import and raise naming the
feature when used.

The share of ``torch.nn``'s public ``Module`` classes that minitensor has is measured against
the installed PyTorch (run in a subprocess, since the switch replaces ``torch`` in this one),
without ``DataParallel``, ``SyncBatchNorm``, the ``Lazy*`` modules and the quantized ones.

Usage (the mirrors: ``<owner>+<name>/repo`` bare git directories under ``--mirror``)::

    python scripts/measure_coverage.py                       # summary + the unresolved names
    python scripts/measure_coverage.py --top 60 --per-repo   # more detail
    python scripts/measure_coverage.py --ignore '^torch\\.nn\\.(Conv|MaxPool)'  # leave names out

``--ignore REGEX`` leaves out the matching names (e.g. ones another branch is adding) and
reports the figures without them.
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# owner/name -> the folders read (None: the whole repository).
REPOSITORIES = {
    "karpathy/nanoGPT": None,
    "karpathy/build-nanogpt": None,
    "karpathy/minGPT": None,
    "karpathy/micrograd": None,  # the demo notebooks compare with torch
    "karpathy/makemore": None,
    "karpathy/ng-video-lecture": None,
    "karpathy/nn-zero-to-hero": None,  # the lecture notebooks
    "karpathy/llm.c": ("train_gpt2.py",),  # the PyTorch reference of llm.c (the rest is C/CUDA)
    "pytorch/examples": None,
    "harvardnlp/annotated-transformer": None,
    "rasbt/LLMs-from-scratch": None,
    "rasbt/machine-learning-book": None,
}

# GPU, distributed, export and compiler features: counted apart, documented as unsupported.
EXCLUDED = re.compile(
    r"^torch\.(cuda|backends|distributed|multiprocessing|onnx|jit|compile|compiler|_dynamo|_inductor|export|"
    r"fx|mps|xpu|mtia|accelerator|amp|autocast|ao|quantization|nn\.parallel|nn\.DataParallel|"
    r"nn\.SyncBatchNorm|utils\.data\.distributed|utils\.cpp_extension|cpu\.amp|_C|hub|package|"
    r"nn\.attention|library|_utils|set_float32_matmul_precision|get_float32_matmul_precision)(\.|$)"
    r"|^Tensor\.(cuda|is_cuda|pin_memory|is_pinned|record_stream|share_memory_|get_device|to_mkldnn)$"
)

# Tensor attribute names that, in Python code, are mostly methods of dicts, lists, sets or strings.
AMBIGUOUS = frozenset(
    {
        "values",  # dict.values() (and the .values of max(dim)'s named tuple, which is not a Tensor attribute)
        "name",  # argparse results, parameters of inspect, graph nodes
        "index",  # list.index, str.index, pandas' index
        "real",  # NumPy's complex eigenvalues
    }
)


# ------------------------------------------------------------------ reading the repositories
def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True).stdout


def sources(repo: Path, folders) -> list:
    """(path, Python source) of every .py file and notebook of the repository's HEAD."""
    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()]
    paths = [p for p in paths if p.endswith((".py", ".ipynb"))]
    if folders is not None:
        paths = [p for p in paths if p.startswith(folders)]
    found = []
    for path in paths:
        try:
            text = git(repo, "show", f"HEAD:{path}").decode("utf-8", errors="replace")
        except subprocess.CalledProcessError:  # (a file the mirror lacks: mirrors leave out files of 4 MiB and more)
            print(f"(absent from the mirror: {repo.parent.name}/{path})")
            continue
        found.append((path, notebook_source(text) if path.endswith(".ipynb") else text))
    return found


def notebook_source(text: str) -> str:
    """The code cells of a notebook, one after the other; IPython magics and shell lines blanked."""
    try:
        cells = json.loads(text).get("cells", [])
    except json.JSONDecodeError:
        return ""
    code = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        lines = ("".join(source) if isinstance(source, list) else source).splitlines()
        code.append("\n".join("" if line.lstrip().startswith(("%", "!", "?")) else line for line in lines))
    return "\n\n".join(code)


def parse(source: str) -> list:
    """The module's AST, or the ASTs of its parsable cells (a notebook may hold one bad cell)."""
    try:
        return [ast.parse(source)]
    except SyntaxError:
        trees = []
        for chunk in source.split("\n\n"):
            try:
                trees.append(ast.parse(chunk))
            except SyntaxError:
                pass
        return trees


# ------------------------------------------------------------------ finding the names
class Uses(ast.NodeVisitor):
    """Count the torch names one file uses (see the module docstring)."""

    def __init__(self, tensor_attributes: frozenset, is_module) -> None:
        self.aliases: dict = {}  # local name -> dotted torch path
        self.other_modules: set = set()  # local names of other imports (np, math, plt ...): not Tensors
        self.imports_torch = False
        self.counts: collections.Counter = collections.Counter()
        self.tensor_counts: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()  # (name, positional count, keywords) -> uses
        self.tensor_calls: collections.Counter = collections.Counter()
        self.tensor_attributes = tensor_attributes
        self.is_module = is_module

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "torch" or alias.name.startswith("torch."):
                self.imports_torch = True
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["torch"] = "torch"
            else:
                self.other_modules.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "torch" or module.startswith("torch.")):
            self.imports_torch = True
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
        else:
            self.other_modules.update(alias.asname or alias.name for alias in node.names)

    def visit_Name(self, node: ast.Name) -> None:
        path = self.aliases.get(node.id)
        if path is not None and not self.is_module(path):
            self.counts[path] += 1

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name, whole = self.torch_name(node)
        if name is not None:
            self.counts[name] += 1
            return
        if self.tensor_attribute(node):
            self.tensor_counts[f"Tensor.{node.attr}"] += 1
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        """Also note the call's form (positional count, keyword names) to check it binds on minitensor."""
        self.generic_visit(node)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return
        form = (len(node.args), tuple(sorted(k.arg for k in node.keywords)))
        if isinstance(node.func, ast.Name):
            path = self.aliases.get(node.func.id)
            if path is not None and not self.is_module(path):
                self.calls[(path, *form)] += 1
        elif isinstance(node.func, ast.Attribute):
            name, whole = self.torch_name(node.func)
            if name is not None and whole:
                self.calls[(name, *form)] += 1
            elif name is None and self.tensor_attribute(node.func):
                self.tensor_calls[(f"Tensor.{node.func.attr}", *form)] += 1

    def torch_name(self, node: ast.Attribute) -> tuple:
        """(the torch name an attribute chain uses, or None; whether the name is the whole chain)."""
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in self.aliases):
            return None, False
        chain.reverse()
        path = self.aliases[root.id]
        if not self.is_module(path):  # an attribute of an imported class or function (counted by visit_Name)
            self.counts[path] += 1
            return None, False
        name = path
        for i, part in enumerate(chain):
            name = f"{name}.{part}"
            if not self.is_module(name):
                return name, i == len(chain) - 1
        return name, True

    def tensor_attribute(self, node: ast.Attribute) -> bool:
        """Whether ``node`` (not a torch chain) reads a Tensor attribute of PyTorch's.  Not when the receiver
        is an imported module (``np.where``), a literal (``"a b".split()``) or ``self`` (``self.relu(x)``
        calls a module's layer)."""
        receiver = node.value
        not_a_tensor = (
            isinstance(receiver, ast.Name) and (receiver.id in self.other_modules or receiver.id == "self")
        ) or isinstance(receiver, ast.Constant)
        return node.attr in self.tensor_attributes and node.attr not in AMBIGUOUS and not not_a_tensor

    def all_counts(self) -> collections.Counter:
        """The torch names, and the Tensor attributes when the file imports torch (a NumPy-only file's
        ``x.ravel()`` is NumPy's)."""
        return self.counts + self.tensor_counts if self.imports_torch else self.counts

    def all_calls(self) -> collections.Counter:
        return self.calls + self.tensor_calls if self.imports_torch else self.calls


# ------------------------------------------------------------------ resolving them on minitensor
def torch_module_layout():
    """``is_module(dotted)``: whether PyTorch has a module of that name, read from its files (torch is
    not imported: the switch replaces it in this process); minitensor's modules when PyTorch is absent."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(list(spec.submodule_search_locations)[0])

    def is_module(dotted: str) -> bool:
        parts = dotted.split(".")[1:]
        if not parts:
            return True
        where = base.joinpath(*parts)
        return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()

    return is_module


_MISSING = object()


def resolver():
    """``lookup(name)``: the object a torch name gives on minitensor through the switch (``import torch``
    gives minitensor), or ``_MISSING``; and ``is_module(dotted)`` there."""
    import minitensor.compat  # noqa: PLC0415  (a script: the switch goes on after the layout was read)

    minitensor.compat.install()
    torch = importlib.import_module("torch")

    def lookup(name: str):
        if name.startswith("Tensor."):
            return getattr(torch.Tensor, name.split(".", 1)[1], _MISSING)
        parts = name.split(".")
        obj = torch
        for i, part in enumerate(parts[1:], start=2):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    return _MISSING
            except Exception:  # noqa: BLE001  (an attribute that raises: unavailable)
                return _MISSING
        return obj

    def is_module(dotted: str) -> bool:
        try:
            return type(importlib.import_module(dotted)).__name__ == "module"
        except Exception:  # noqa: BLE001
            return False

    return lookup, is_module


def binds(obj, name: str, positional: int, keywords: tuple) -> bool | None:
    """Whether a call with ``positional`` arguments and these keyword names fits ``obj``'s signature
    (None when the signature cannot be read).  A Tensor method gets its ``self`` too."""
    try:
        signature = inspect.signature(obj, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    positional += name.startswith("Tensor.") and not isinstance(obj, property)
    try:
        signature.bind(*range(positional), **dict.fromkeys(keywords))
    except TypeError:
        return False
    return True


def nn_classes() -> list | None:
    """The public ``nn.Module`` subclasses of the installed PyTorch's ``torch.nn`` (None without PyTorch)."""
    code = (
        "import inspect, json, torch.nn as nn\n"
        "print(json.dumps(sorted(n for n in dir(nn) if not n.startswith('_') and inspect.isclass(getattr(nn, n))"
        " and issubclass(getattr(nn, n), nn.Module))))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    return json.loads(done.stdout) if done.returncode == 0 else None


# Left out of the torch.nn class count: multi-device, lazy (shape-inferring) and quantized modules.
NN_CLASS_EXCLUDED = re.compile(r"^(DataParallel|SyncBatchNorm|Lazy.*|Quant.*|DeQuant.*)$")


# ------------------------------------------------------------------ the report
def count(mirror: str, is_module) -> tuple:
    """Per repository, the Counter of torch names used and the Counter of call forms; the file counts."""
    from minitensor._torch_names import TENSOR_ATTRIBUTES  # noqa: PLC0415

    per_repo, files, unparsed = {}, 0, 0
    for repo, folders in REPOSITORIES.items():
        where = Path(mirror) / repo.replace("/", "+") / "repo"
        if not where.is_dir():
            print(f"(no mirror of {repo} at {where}: skipped)")
            continue
        names: collections.Counter = collections.Counter()
        calls: collections.Counter = collections.Counter()
        for _, source in sources(where, folders):
            files += 1
            trees = parse(source)
            unparsed += not trees
            for tree in trees:
                uses = Uses(TENSOR_ATTRIBUTES, is_module)
                uses.visit(tree)
                names.update(uses.all_counts())
                calls.update(uses.all_calls())
        per_repo[repo] = (names, calls)
    return per_repo, files, unparsed


def percent(part: int, whole: int) -> str:
    return f"{part} / {whole} = {100 * part / max(whole, 1):.2f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default="/work/.mirror", help="folder of the <owner>+<name>/repo git mirrors")
    parser.add_argument("--top", type=int, default=40, help="how many unresolved names (and call forms) to list")
    parser.add_argument("--per-repo", action="store_true", help="the figures of each repository")
    parser.add_argument("--ignore", default=None, help="a regex: leave out the names it matches")
    parser.add_argument("--json", default=None, help="write the counts and the resolution to this file")
    args = parser.parse_args()

    layout = torch_module_layout()
    classes = nn_classes()
    lookup, minitensor_is_module = resolver()
    ignore = re.compile(args.ignore) if args.ignore else None
    per_repo, files, unparsed = count(args.mirror, layout or minitensor_is_module)

    total: collections.Counter = collections.Counter()
    call_forms: collections.Counter = collections.Counter()
    for names, calls in per_repo.values():
        total.update(names)
        call_forms.update(calls)
    objects = {name: lookup(name) for name in total}
    resolved = {name: obj is not _MISSING for name, obj in objects.items()}

    def counted(name: str) -> bool:
        return not EXCLUDED.search(name) and not (ignore and ignore.search(name))

    def figures(names) -> tuple:
        kept = {n: c for n, c in names.items() if counted(n)}
        return sum(c for n, c in kept.items() if resolved[n]), sum(kept.values()), kept

    ok, uses, kept = figures(total)
    print(f"{len(per_repo)} repositories, {files} files ({unparsed} unparsable)")
    print(f"uses resolved: {percent(ok, uses)}")
    print(f"distinct names resolved: {percent(sum(1 for n in kept if resolved[n]), len(kept))}")
    excluded = {n: c for n, c in total.items() if EXCLUDED.search(n)}
    ex_ok = sum(c for n, c in excluded.items() if resolved[n])
    print(f"excluded (GPU/distributed/export/compiler): {sum(excluded.values())} uses of {len(excluded)} names, "
          f"{ex_ok} of the uses resolve anyway")  # fmt: skip
    if ignore:
        ignored = {n: c for n, c in total.items() if ignore.search(n) and not EXCLUDED.search(n)}
        print(f"left out by --ignore: {sum(ignored.values())} uses of {len(ignored)} names")
    if args.per_repo:
        for repo, (names, _) in per_repo.items():
            print(f"  {repo:38s} {percent(*figures(names)[:2])}")
    missing = sorted(((c, n) for n, c in kept.items() if not resolved[n]), reverse=True)
    print(f"unresolved names ({len(missing)}), most used first:")
    for c, n in missing[: args.top]:
        print(f"  {c:5d}  {n}")

    # Call forms: do the arguments of each call fit minitensor's signature?
    checked = failed = 0
    refused = collections.Counter()
    for (name, positional, keywords), c in call_forms.items():
        if not counted(name) or not resolved.get(name):
            continue
        fits = binds(objects[name], name, positional, keywords)
        if fits is None:
            continue
        checked += c
        if not fits:
            failed += c
            refused[(name, positional, keywords)] += c
    print(f"calls whose arguments fit minitensor's signature: {percent(checked - failed, checked)}")
    for (name, positional, keywords), c in refused.most_common(args.top):
        print(f"  {c:5d}  {name}({positional} positional{', ' if keywords else ''}{', '.join(keywords)})")

    if classes is not None:
        import minitensor.nn as nn  # noqa: PLC0415

        wanted = [n for n in classes if not NN_CLASS_EXCLUDED.match(n)]
        print(f"torch.nn Module classes: {percent(sum(hasattr(nn, n) for n in wanted), len(wanted))}")
        flat = [n for n in wanted if not n.endswith("3d")]
        print(f"  without the *3d classes: {percent(sum(hasattr(nn, n) for n in flat), len(flat))}")
        print(f"  missing: {' '.join(n for n in wanted if not hasattr(nn, n))}")
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": dict(total), "resolved": resolved}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
