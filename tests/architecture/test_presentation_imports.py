"""Only ``streams_assign/cli/`` and ``streams_assign/views/`` import rich, matplotlib or Jinja2.

The check reads every import of every module of ``streams_assign`` and ``lag`` with :mod:`ast`:
top-level ones, those inside functions and classes, those under ``if TYPE_CHECKING:`` and
``importlib.import_module("...")`` / ``__import__("...")`` calls with a literal name. It is
also run on a small tree with such imports in the wrong places, to show that it reports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Top-level modules of the presentation libraries.
PRESENTATION = ("rich", "matplotlib", "jinja2")
#: The folders allowed to import them, relative to the repository root.
ALLOWED = ("streams_assign/cli/", "streams_assign/views/")
#: The packages whose modules are read.
PACKAGES = ("streams_assign", "lag")

#: Modules outside streams_assign's cli/ and views/ that print with rich themselves, each with why:
#: the entry points of the ``streams-lag`` command, which is lag's own command-line layer. A module
#: must be listed while it does and leave the list when it stops (the test checks both ways).
PRINTS_ITSELF = {
    "lag/cli.py": "the streams-lag command: prints the compute summary table on stderr",
    "lag/cli_live.py": "streams-lag snapshot / members: prints where each offset sum came from",
    "lag/demo.py": "python -m lag.demo (make demo): prints its steps and the lag table",
}


def _imported_names(node: ast.AST) -> list[str]:
    """The absolute module names one node imports (empty for any other node)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module] if node.level == 0 and node.module else []
    if isinstance(node, ast.Call) and node.args:
        function = node.func
        called = (
            function.attr
            if isinstance(function, ast.Attribute)
            else function.id
            if isinstance(function, ast.Name)
            else None
        )
        first = node.args[0]
        if (
            called in ("import_module", "__import__")
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            return [first.value]
    return []


def presentation_imports(root: Path) -> list[str]:
    """Every import of a presentation library outside :data:`ALLOWED`, as ``path:line name``.

    Parameters
    ----------
    root:
        The folder holding the packages of :data:`PACKAGES`.
    """
    found: list[tuple[str, int, str]] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative.startswith(ALLOWED):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
            for node in ast.walk(tree):
                for name in _imported_names(node):
                    if name.split(".")[0] in PRESENTATION:
                        found.append((relative, node.lineno, name))
    return [f"{relative}:{line} {name}" for relative, line, name in sorted(found)]


def test_only_cli_and_views_import_presentation_libraries() -> None:
    found = presentation_imports(REPO)
    unlisted = [entry for entry in found if entry.split(":")[0] not in PRINTS_ITSELF]
    assert unlisted == [], "rich/matplotlib/jinja2 imported outside cli/ and views/"
    printing = {entry.split(":")[0] for entry in found}
    assert printing == set(PRINTS_ITSELF), "PRINTS_ITSELF lists a module that no longer prints"


def test_the_check_reads_every_kind_of_import(tmp_path: Path) -> None:
    files = {
        "streams_assign/__init__.py": "",
        "streams_assign/core.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from matplotlib.figure import Figure\n"
            "def show():\n"
            "    from rich.table import Table\n"
            "    return Table()\n"
        ),
        "streams_assign/deep/page.py": (
            "import importlib\n"
            "class Page:\n"
            "    def render(self):\n"
            "        return importlib.import_module('jinja2')\n"
        ),
        "streams_assign/views/tables.py": "import rich.table\nimport matplotlib\n",
        "streams_assign/cli/run.py": "from rich.console import Console\n",
        "streams_assign/viewsish.py": "import jinja2\n",
        "lag/job.py": "import os\n\n\ndef table():\n    import rich\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert presentation_imports(tmp_path) == [
        "lag/job.py:5 rich",
        "streams_assign/core.py:3 matplotlib.figure",
        "streams_assign/core.py:5 rich.table",
        "streams_assign/deep/page.py:4 jinja2",
        "streams_assign/viewsish.py:1 jinja2",
    ]
