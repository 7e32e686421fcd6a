"""The core of ``streams_assign`` imports no optional feature and no presentation library.

The core is every module of ``streams_assign`` outside the feature packages :data:`FEATURES`
(the commands, the views, the CP-SAT optimum, the simulations, the protocol replays, the Python
client adapters). It runs on the base install, so it imports none of them and none of the
libraries they bring (:data:`FEATURE_LIBRARIES`), by any import statement: at module level,
inside a function or under ``TYPE_CHECKING``. A feature package may be absent; an import naming
it is still reported.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import build_import_graph

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "streams_assign"
#: Subpackages (or modules) of ``streams_assign`` that are optional features.
FEATURES = ("cli", "views", "optimal", "simulation", "protocol", "clients")
#: Third-party libraries only the features may import.
FEATURE_LIBRARIES = ("rich", "matplotlib", "jinja2", "ortools", "pyspark")


def is_feature(module: str, package: str = PACKAGE) -> bool:
    """Whether ``module`` is one of :data:`FEATURES` of ``package`` or inside one."""
    return any(
        module == f"{package}.{feature}" or module.startswith(f"{package}.{feature}.")
        for feature in FEATURES
    )


#: (core module, library) pairs allowed, each with its reason.
ALLOWED = {
    ("streams_assign.assignors.rack_aware.flow", "ortools"): (
        "OR-Tools' min-cost flow, one of the solvers a caller passes to the rack-aware "
        "assignment (networkx's is the default); imported only when that solver runs"
    ),
}


def core_violations(
    root: Path, package: str = PACKAGE, allowed: dict[tuple[str, str], str] | None = None
) -> list[str]:
    """``module: imported name (line ...)`` for each forbidden import of a core module.

    A name inside one already reported for the module (``rich.table.Table`` under
    ``rich.table``) is left out.
    """
    allowed = ALLOWED if allowed is None else allowed
    imports = build_import_graph(root, (package,))
    found = []
    for module in sorted(imports.named):
        if is_feature(module, package):
            continue
        bad = {
            name: lines
            for name, lines in imports.named[module].items()
            if (is_feature(name, package) or name.split(".")[0] in FEATURE_LIBRARIES)
            and (module, name.split(".")[0]) not in allowed
        }
        for name, lines in sorted(bad.items()):
            if name.rpartition(".")[0] not in bad:
                found.append(f"{module}: {name} (line {', '.join(map(str, sorted(set(lines))))})")
    return found


def test_the_core_imports_no_optional_feature() -> None:
    imports = build_import_graph(REPO, (PACKAGE,))
    core = [m for m in imports.named if not is_feature(m)]
    assert len(core) > 40, core  # the core was really read
    assert {module for module, _ in ALLOWED} <= set(core), "an allowed module moved"
    found = core_violations(REPO)
    assert not found, "core modules importing a feature:\n" + "\n".join(found)


def test_the_checker_reports_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    """A core that reaches features and their libraries only lazily is still reported."""
    pkg = tmp_path / "streams_assign"
    (pkg / "optimal").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import model\n")
    (pkg / "optimal" / "__init__.py").write_text("import ortools\nimport rich\n")
    (pkg / "model.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from rich.table import Table\n"
        "def show():\n"
        "    from .views import table\n"  # views/ does not exist in this tree
        "    import matplotlib.pyplot\n"
        "    from streams_assign import optimal\n"
        "    import json\n"
    )
    (pkg / "errors.py").write_text("from streams_assign.simulation.run import x\n")
    (pkg / "clean.py").write_text("import json\nfrom streams_assign import model\n")

    assert core_violations(tmp_path, allowed={}) == [
        "streams_assign.errors: streams_assign.simulation.run (line 1)",
        "streams_assign.model: matplotlib.pyplot (line 6)",
        "streams_assign.model: rich.table (line 3)",
        "streams_assign.model: streams_assign.optimal (line 7)",
        "streams_assign.model: streams_assign.views (line 5)",
    ]
    assert core_violations(tmp_path, allowed={("streams_assign.model", "rich"): "why"}) == [
        "streams_assign.errors: streams_assign.simulation.run (line 1)",
        "streams_assign.model: matplotlib.pyplot (line 6)",
        "streams_assign.model: streams_assign.optimal (line 7)",
        "streams_assign.model: streams_assign.views (line 5)",
    ]
