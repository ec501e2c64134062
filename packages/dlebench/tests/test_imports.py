"""The package's modules import one another without a cycle (lazy imports inside functions included)."""

import ast
from pathlib import Path

import icml26_dlebench

PACKAGE = Path(icml26_dlebench.__file__).parent


def imports_within_package(path: Path) -> set[str]:
    """The package modules ``path`` imports anywhere in its code (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and module:
                found.add(module.split(".")[0])
            elif node.level == 1:  # from . import x
                found.update(alias.name for alias in node.names)
            elif module.startswith("icml26_dlebench."):
                found.add(module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("icml26_dlebench."))
    return found


def test_no_import_cycle_among_the_modules():
    graph = {p.stem: imports_within_package(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    done, path = set(), []

    def visit(module: str) -> None:
        assert module not in path, f"import cycle: {' -> '.join([*path[path.index(module) :], module])}"
        if module in done:
            return
        path.append(module)
        for dependency in sorted(graph.get(module, ())):
            visit(dependency)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    assert graph["method"] >= {"imaging", "baselines"}  # the parser sees the imports
