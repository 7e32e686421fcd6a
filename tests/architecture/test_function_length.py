"""No function in ``streams_assign/assignors`` or ``lag`` runs over 80 lines of code.

A function's length is counted in code lines: the lines from its ``def`` to its last line, less
its docstring. A long function is split into named steps (a class where closures share state).
The few that cannot be split are listed in :data:`ALLOWED` with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = (ROOT / "streams_assign" / "assignors", ROOT / "lag")
MAX_CODE_LINES = 80

#: Qualified name (``path/to/module.py:Class.function``, relative to the repository root) of a
#: function allowed over the limit, and why.
ALLOWED: dict[str, str] = {}


def code_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Number of lines of ``function`` from its ``def`` to its end, less its docstring.

    Parameters
    ----------
    function : ast.FunctionDef or ast.AsyncFunctionDef
        The function's node, parsed with line numbers.

    Returns
    -------
    int
        ``end_lineno - lineno + 1`` minus the docstring's lines.
    """
    assert function.end_lineno is not None
    total = function.end_lineno - function.lineno + 1
    body = function.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
        and body[0].end_lineno is not None
    ):
        total -= body[0].end_lineno - body[0].lineno + 1
    return total


def _functions(
    node: ast.AST, prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            yield name, child
            yield from _functions(child, f"{name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions(source: str, module: str, limit: int = MAX_CODE_LINES) -> dict[str, int]:
    """The functions of one module's source longer than ``limit`` code lines.

    Parameters
    ----------
    source : str
        The module's text.
    module : str
        The module's path, the prefix of each qualified name (``module:Class.function``).
    limit : int, default 80
        The most code lines allowed.

    Returns
    -------
    dict of str to int
        Qualified name to code lines, for every function (nested ones and methods included)
        over the limit.
    """
    tree = ast.parse(source)
    return {
        f"{module}:{name}": lines
        for name, function in _functions(tree, "")
        if (lines := code_lines(function)) > limit
    }


def long_functions_under(roots: tuple[Path, ...], base: Path) -> dict[str, int]:
    """The functions over the limit in every ``.py`` file under ``roots``.

    Parameters
    ----------
    roots : tuple of Path
        Folders to walk.
    base : Path
        The folder qualified names are relative to.

    Returns
    -------
    dict of str to int
        Qualified name to code lines.
    """
    found: dict[str, int] = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            module = path.relative_to(base).as_posix()
            found.update(long_functions(path.read_text(encoding="utf-8"), module))
    return found


def test_no_function_in_the_assignors_or_lag_is_over_80_code_lines() -> None:
    found = long_functions_under(CHECKED, ROOT)
    assert set(found) - set(ALLOWED) == set(), found


def test_every_allowed_function_is_still_long() -> None:
    found = long_functions_under(CHECKED, ROOT)
    assert set(ALLOWED) - set(found) == set()


def test_the_check_reports_a_long_function_in_a_broken_tree(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    long_body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CODE_LINES))
    (package / "long.py").write_text(
        'class C:\n    def method(self):\n        """Doc.\n\n        More.\n        """\n'
        + "\n".join(f"        y{i} = {i}" for i in range(MAX_CODE_LINES - 2))
        + f'\n\n\ndef too_long():\n    """A docstring does not count."""\n{long_body}\n',
        encoding="utf-8",
    )
    (package / "short.py").write_text('def short():\n    """Doc."""\n    return 1\n')
    found = long_functions_under((package,), tmp_path)
    # ``method``: its ``def`` and 78 assignments (79 code lines); ``too_long``: 81.
    assert found == {"pkg/long.py:too_long": MAX_CODE_LINES + 1}
