"""No import cycle among the modules of ``streams_assign`` and ``lag``, deferred imports included.

An import inside a function or under ``TYPE_CHECKING`` hides a cycle from the interpreter at
start-up, not from the reader: the two modules still cannot be understood, tested or moved one
without the other. The graph counts every import statement of both packages together.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import build_import_graph, import_cycles

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("streams_assign", "lag")


def describe(cycles: list[list[str]], graph_edges: dict[tuple[str, str], list[int]]) -> str:
    """One paragraph per cycle: its modules and the import lines that close it."""
    lines = []
    for component in cycles:
        lines.append(f"cycle of {len(component)} modules: {', '.join(component)}")
        members = set(component)
        for (source, target), at in sorted(graph_edges.items()):
            if source in members and target in members:
                lines.append(f"    {source} -> {target} (line {', '.join(map(str, at))})")
    return "\n".join(lines)


def find_cycles(root: Path, packages: tuple[str, ...]) -> tuple[list[list[str]], str, int]:
    """The cycles among ``packages`` under ``root``, their description and the edge count."""
    imports = build_import_graph(root, packages)
    edges = {(s, t): data["lines"] for s, t, data in imports.graph.edges(data=True)}
    cycles = import_cycles(imports.graph)
    return cycles, describe(cycles, edges), len(edges)


def test_streams_assign_and_lag_import_no_module_in_a_circle() -> None:
    cycles, description, edges = find_cycles(REPO, PACKAGES)
    assert edges > 400, edges  # the graph was really built, deferred imports included
    assert cycles == [], f"import cycles:\n{description}"


def test_the_checker_reports_cycles_hidden_by_deferred_imports(tmp_path: Path) -> None:
    """A tree whose cycles Python never trips over at import time; each one is reported."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    # a <-> b: a at top level, b back inside a function through a relative import.
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    # c -> sub.d under TYPE_CHECKING, sub.d -> c through ``import pkg.c`` in a method.
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.d import D\n"
    )
    (pkg / "sub" / "d.py").write_text(
        "class D:\n    def g(self):\n        import pkg.c\n        return pkg.c\n"
    )
    # e -> f -> e through ``from ..e import name`` (a name, so the edge goes to the module).
    (pkg / "e.py").write_text(
        "try:\n    from pkg.sub import f\nexcept ImportError:\n    f = None\n"
    )
    (pkg / "sub" / "f.py").write_text("def h():\n    from ..e import f\n    return f\n")
    # An acyclic module beside them: imports the package and a cycle member, is in no cycle.
    (pkg / "g.py").write_text("import pkg\nfrom pkg.a import b\nimport json\n")

    cycles, description, _ = find_cycles(tmp_path, ("pkg",))

    assert cycles == [
        ["pkg.a", "pkg.b"],
        ["pkg.c", "pkg.sub.d"],
        ["pkg.e", "pkg.sub.f"],
    ], description
    assert "pkg.b -> pkg.a (line 2)" in description
