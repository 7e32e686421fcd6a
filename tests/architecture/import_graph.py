"""The import graph of Python packages read from their source with :mod:`ast`.

Every import statement counts, wherever it is: at module level, inside a function or a class,
under ``if TYPE_CHECKING:``, in a ``try``. A deferred import still ties the importer to the
imported module: hiding it inside a function only moves the moment the cycle is entered.

Edges go from a module to the module an import statement names:

- ``import a.b.c`` -> ``a.b.c``;
- ``from a.b import c`` -> ``a.b.c`` when ``c`` is a submodule, else ``a.b`` (the package's
  ``__init__``); ``from a.b import *`` -> ``a.b``;
- relative imports are resolved against the importing module's package first.

Only modules of the scanned packages are nodes; imports of anything else are kept per module in
:attr:`ImportGraph.external` (top-level distribution names such as ``rich``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

__all__ = ["ImportGraph", "build_import_graph", "import_cycles", "module_name"]


def module_name(root: Path, path: Path) -> str:
    """The dotted name of the module in ``path`` under the folder ``root`` holding its package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass
class ImportGraph:
    """Modules of the scanned packages and the imports between them.

    Attributes
    ----------
    graph:
        Directed graph: module -> module it imports. Each edge's ``lines`` attribute lists the
        line numbers of the import statements behind it.
    external:
        Per module, the top-level names of the modules outside the scanned packages it imports.
    named:
        Per module, every absolute dotted name its import statements name, whether or not a
        module of that name exists (``from a import b`` names ``a`` and ``a.b``).
    """

    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    external: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    named: dict[str, dict[str, list[int]]] = field(default_factory=dict)


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """Absolute dotted names an import statement may resolve to, most specific first."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = importer if is_package else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]


def build_import_graph(root: Path, packages: Iterable[str]) -> ImportGraph:
    """Read every ``.py`` file of ``packages`` (folders under ``root``) and link their imports.

    Parameters
    ----------
    root:
        The folder holding the packages (the repository root).
    packages:
        Names of the top-level packages to scan together.

    Returns
    -------
    ImportGraph
        One node per module, one edge per imported module of the scanned packages.
    """
    files = {
        module_name(root, path): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }
    result = ImportGraph()
    result.graph.add_nodes_from(files)
    for importer, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        external: dict[str, list[int]] = {}
        named: dict[str, list[int]] = {}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = _targets(node, importer, is_package)
            for name in names:
                named.setdefault(name, []).append(node.lineno)
            if isinstance(node, ast.ImportFrom):
                # ``from a import b``: the submodule a.b if there is one, else the package a.
                base, *members = names
                names = [m for m in members if m in files] or [base]
            for name in names:
                if name in files and name != importer:
                    lines = result.graph.get_edge_data(importer, name, {}).get("lines", [])
                    result.graph.add_edge(importer, name, lines=[*lines, node.lineno])
            for top in {name.split(".")[0] for name in names} - set(files):
                external.setdefault(top, []).append(node.lineno)
        result.external[importer] = external
        result.named[importer] = named
    return result


def import_cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Every strongly connected component of more than one module, each sorted, largest first.

    A module imports itself only through a component of one module with a self-loop, which
    :func:`build_import_graph` never adds.
    """
    components = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    return sorted(components, key=lambda c: (-len(c), c))
