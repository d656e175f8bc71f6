"""The package's floors (README, "What is inside"): imports run down them, with no cycle.

Floors from the ground up: 0 ``kernels/`` (the array backend), 1 the Tensor and autograd (and the
other modules at the package root), 2 ``ops/``, 3 ``nn/``, 4 ``optim/``, ``utils/``, ``func/``,
``distributions/``, 5 the applications. ``func/`` and ``distributions/`` live at the package root,
as ``torch.func`` and ``torch.distributions`` do, but sit on floor 4: they are built on ops and nn.

These tests read every module's imports with ``ast`` (nothing is imported), module-level and
function-level alike (a function's import is still a dependency), and hold the package to:
imports run down the floors except the one exception the README names; no module-level import
cycle; no late import (``noqa: E402``); the engine imports nothing from the kernels.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "minitensor"

FLOORS = {"kernels": 0, "ops": 2, "nn": 3}
FLOORS.update(dict.fromkeys(("optim", "utils", "func", "distributions"), 4))
FLOORS.update(dict.fromkeys(("compat", "course", "demo", "viz", "pretrained"), 5))

# The README's one exception: the ``mt.linalg`` namespace at the package root re-exports ops' functions.
DOCUMENTED_UPWARD = {("minitensor.linalg", "minitensor.ops.linalg_functions")}


def floor(module: str) -> int:
    """The floor of a dotted module name (``minitensor.ops.shape`` -> 2); the root's modules: 1."""
    parts = module.split(".")
    return FLOORS.get(parts[1], 1) if len(parts) > 1 else 1


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path):
    """Yield ``(imported module, at module level)`` for each import in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `..ops` from minitensor.func.vmap is minitensor.ops
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            names = submodules if len(submodules) == len(node.names) else [base, *submodules]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # `from .x import f` depends on module x
                name = name.rpartition(".")[0]
            if name and name != module:
                yield name, id(node) in top


EDGES = {(a, b, at_top) for a, path in MODULES.items() for b, at_top in _imports(a, path)}


def test_the_scan_sees_the_whole_package():
    assert len(MODULES) > 300
    assert ("minitensor.ops.elementwise", "minitensor.autograd.function", True) in EDGES
    assert floor("minitensor.kernels.softmax") == 0 and floor("minitensor.distributions.normal") == 4


def test_imports_run_down_the_floors_but_the_one_the_readme_names():
    upward = {(a, b) for a, b, _ in EDGES if floor(a) < floor(b) and not b.startswith(a + ".")}
    assert upward == DOCUMENTED_UPWARD


def test_no_module_level_import_cycle():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b, at_top in EDGES:
        if at_top:
            graph[a].add(b)
    done: set[str] = set()
    for start in graph:  # depth-first, without recursion: meeting a module on the path closes a cycle
        if start in done:
            continue
        path, children = [start], [iter(sorted(graph[start]))]
        while path:
            child = next(children[-1], None)
            if child is None:
                done.add(path.pop())
                children.pop()
            elif child in path:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(child) :] + [child]))
            elif child not in done:
                path.append(child)
                children.append(iter(sorted(graph[child])))


def test_no_late_import():
    late = [str(p.relative_to(PACKAGE)) for p in MODULES.values() if "noqa: E402" in p.read_text(encoding="utf-8")]
    assert late == []


def test_the_engine_imports_nothing_from_the_kernels():
    engine = "minitensor.autograd.engine"
    assert [b for a, b, _ in EDGES if a == engine and floor(b) == 0] == []
