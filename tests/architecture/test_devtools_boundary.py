"""Nothing installed imports the repository tooling, and the tooling is not installed.

``devtools/`` (JVM launchers, the broker, the Streams app runner, Kafka's reference harnesses,
the generators) works from a checkout only. Two checks keep it out of the package:

- no module of ``streams_assign`` or ``lag`` imports ``devtools``: every ``import`` and
  ``from ... import`` anywhere in a module (top level, inside functions, under
  ``TYPE_CHECKING``), and ``importlib.import_module`` / ``__import__`` of a literal name;
- setuptools' package discovery, run with ``[tool.setuptools.packages.find]`` of
  ``pyproject.toml``, finds the library's packages and no ``devtools`` package.

Each check also runs on a small broken tree in ``tmp_path`` and must report the fault there.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import setuptools

REPO = Path(__file__).resolve().parents[2]
#: The installed top-level packages whose modules must not import the tooling.
LIBRARY = ("streams_assign", "lag")
TOOLING = "devtools"


def _is_tooling(name: str) -> bool:
    return name == TOOLING or name.startswith(TOOLING + ".")


def _imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module name ``tree`` imports, with its line, wherever the statement sits."""
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if (
                called in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                names.append((node.lineno, first.value))
    return sorted(names)


def tooling_imports(root: Path, packages: tuple[str, ...] = LIBRARY) -> list[str]:
    """``path:line imports name`` for every import of ``devtools`` under ``root/<package>``."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, name in _imported_names(tree):
                if _is_tooling(name):
                    found.append(f"{path.relative_to(root)}:{line} imports {name}")
    return found


def discovered_packages(root: Path) -> list[str]:
    """The packages setuptools installs from ``root``, per ``[tool.setuptools.packages.find]``.

    Follows setuptools' reading of that table in ``pyproject.toml``: ``where`` (default ``.``),
    ``include``, ``exclude``, and ``namespaces`` (default true: folders without ``__init__.py``
    count too).
    """
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    find = config["tool"]["setuptools"]["packages"]["find"]
    finder = (
        setuptools.find_namespace_packages
        if find.get("namespaces", True)
        else setuptools.find_packages
    )
    found: list[str] = []
    for where in find.get("where", ["."]):
        found += finder(
            where=str(root / where),
            include=find.get("include", ["*"]),
            exclude=find.get("exclude", []),
        )
    return sorted(found)


def tooling_packages(root: Path) -> list[str]:
    """The ``devtools`` packages setuptools would install from ``root`` (none is right)."""
    return [name for name in discovered_packages(root) if _is_tooling(name)]


def test_no_library_module_imports_the_tooling() -> None:
    assert tooling_imports(REPO) == []


def test_the_tooling_is_not_installed() -> None:
    packages = discovered_packages(REPO)
    assert {"streams_assign", "lag"} <= set(packages), packages
    assert (REPO / TOOLING / "__init__.py").is_file()
    assert tooling_packages(REPO) == []


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_import_check_reports_every_kind_of_import(tmp_path: Path) -> None:
    _write(tmp_path / "streams_assign" / "__init__.py", "")
    _write(tmp_path / "streams_assign" / "clean.py", "import devtoolsx\nfrom lag import job\n")
    _write(
        tmp_path / "streams_assign" / "deferred.py",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import devtools.paths\n"
        "def run():\n"
        "    from devtools.kafka.java import JavaBatch\n"
        "    return JavaBatch\n",
    )
    _write(
        tmp_path / "lag" / "sub" / "dynamic.py",
        "import importlib\nimportlib.import_module('devtools.generators')\nimport devtools\n",
    )
    assert tooling_imports(tmp_path) == [
        "streams_assign/deferred.py:3 imports devtools.paths",
        "streams_assign/deferred.py:5 imports devtools.kafka.java",
        "lag/sub/dynamic.py:2 imports devtools.generators",
        "lag/sub/dynamic.py:3 imports devtools",
    ]


def test_the_packaging_check_reports_an_installed_tooling(tmp_path: Path) -> None:
    for package in ("streams_assign", "lag", "devtools", "devtools/kafka"):
        _write(tmp_path / package / "__init__.py", "")
    _write(
        tmp_path / "pyproject.toml",
        '[tool.setuptools.packages.find]\ninclude = ["streams_assign*", "lag*"]\n',
    )
    assert tooling_packages(tmp_path) == []
    _write(
        tmp_path / "pyproject.toml",
        '[tool.setuptools.packages.find]\ninclude = ["streams_assign*", "lag*", "dev*"]\n',
    )
    assert tooling_packages(tmp_path) == ["devtools", "devtools.kafka"]
    _write(tmp_path / "pyproject.toml", "[tool.setuptools.packages.find]\n")
    assert tooling_packages(tmp_path) == ["devtools", "devtools.kafka"]
