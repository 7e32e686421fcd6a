"""Every exception of ``streams_assign`` and ``lag`` is defined in ``streams_assign/errors.py``,
and the tree drawn in that module's docstring (and copied in ``docs/api.md``) is the tree of its
classes.

Both checks read source with :mod:`ast` (nothing is imported), so they also see modules whose
optional dependencies are absent. Each runs once on the real tree and once on a small broken tree
to show it reports the fault.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("streams_assign", "lag")
ERRORS_MODULE = "streams_assign/errors.py"
API_DOC = "docs/api.md"

_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
#: A line of the drawing: the branches (four characters a level), the class, its builtin base.
_TREE_LINE = re.compile(
    r"^(?P<branches>(?:[│ ]   )*(?:[├└]── )?)(?P<name>[A-Za-z_]\w*)(?: \((?P<bases>[^)]*)\))?"
)


def _base_name(node: ast.expr) -> str:
    """``ValueError`` for ``ValueError`` and ``errors.ValueError``; ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _base_name(node.value)
    return ""


def _classes(root: Path) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """``(file, line, name, base names)`` of every class in the packages under ``root``."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    bases = tuple(_base_name(b) for b in node.bases)
                    found.append((relative, node.lineno, node.name, bases))
    return found


def _is_exception_name(name: str) -> bool:
    return name in _BUILTIN_EXCEPTIONS or name.endswith(("Error", "Exception", "Warning"))


def misplaced_exceptions(root: Path) -> list[str]:
    """``file:line: class X`` for each exception class defined outside ``errors.py``.

    A class is an exception when a base is a builtin exception, a name ending in ``Error``,
    ``Exception`` or ``Warning`` (a library's exception), or another exception class of the
    packages (followed to a fixed point, so ``class B(A)`` with ``class A(ValueError)`` counts).
    """
    classes = _classes(root)
    exceptions: set[str] = set()
    grew = True
    while grew:
        grew = False
        for _, _, name, bases in classes:
            is_exception = any(_is_exception_name(b) or b in exceptions for b in bases)
            if name not in exceptions and is_exception:
                exceptions.add(name)
                grew = True
    return sorted(
        f"{file}:{line}: class {name}({', '.join(bases)})"
        for file, line, name, bases in classes
        if name in exceptions and file != ERRORS_MODULE
    )


def drawn_tree(errors_path: Path) -> dict[str, tuple[str, ...]]:
    """Class -> bases as drawn in the module docstring (the parent first, then the builtin).

    The drawing is the indented block after the first ``::`` of the docstring.
    """
    module = ast.parse(errors_path.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(module, clean=False) or ""
    block = docstring.split("::\n", 1)[1] if "::\n" in docstring else ""
    drawn: dict[str, tuple[str, ...]] = {}
    parents: list[str] = []
    for line in block.lstrip("\n").splitlines():
        if not line.strip():
            break
        match = _TREE_LINE.match(line.strip("\n")[4:])
        if match is None:
            drawn[f"<unreadable line {line.strip()!r}>"] = ()
            continue
        depth = len(match["branches"]) // 4
        del parents[depth:]
        builtin = tuple(b.strip() for b in (match["bases"] or "").split(",") if b.strip())
        drawn[match["name"]] = tuple(parents[-1:]) + builtin
        parents.append(match["name"])
    return drawn


def drawing_lines(errors_path: Path) -> list[str]:
    """The lines of the docstring's drawing, without their indent."""
    docstring = ast.get_docstring(ast.parse(errors_path.read_text(encoding="utf-8")), clean=False)
    block = (docstring or "").split("::\n", 1)[-1].lstrip("\n").split("\n\n", 1)[0]
    return [line[4:] for line in block.splitlines()]


def documented_lines(doc_path: Path) -> list[str]:
    """The lines of the first code block after the ``## Errors`` heading of a Markdown file."""
    text = doc_path.read_text(encoding="utf-8")
    section = text.split("\n## Errors", 1)[-1]
    return section.split("```\n", 2)[1].splitlines() if section.count("```\n") >= 2 else []


def defined_tree(errors_path: Path) -> dict[str, tuple[str, ...]]:
    """Class -> base names as the module defines them (top-level classes)."""
    module = ast.parse(errors_path.read_text(encoding="utf-8"))
    return {
        node.name: tuple(_base_name(b) for b in node.bases)
        for node in module.body
        if isinstance(node, ast.ClassDef)
    }


def tree_mismatches(errors_path: Path) -> list[str]:
    """Each class whose drawing differs from its definition (missing, extra, other bases)."""
    drawn, defined = drawn_tree(errors_path), defined_tree(errors_path)
    problems = []
    for name in sorted(set(drawn) | set(defined)):
        if name not in drawn:
            problems.append(f"{name}{defined[name]} is defined but not drawn")
        elif name not in defined:
            problems.append(f"{name}{drawn[name]} is drawn but not defined")
        elif drawn[name] != defined[name]:
            problems.append(f"{name} is drawn with bases {drawn[name]}, defined {defined[name]}")
    return problems


def test_every_exception_is_defined_in_errors_py() -> None:
    assert misplaced_exceptions(ROOT) == []
    assert len(defined_tree(ROOT / ERRORS_MODULE)) > 20  # the real module was read


def test_the_tree_in_the_errors_docstring_is_the_tree_of_its_classes() -> None:
    assert tree_mismatches(ROOT / ERRORS_MODULE) == []
    assert len(drawn_tree(ROOT / ERRORS_MODULE)) > 20  # the drawing was found


def test_docs_api_shows_the_same_tree() -> None:
    drawn = drawing_lines(ROOT / ERRORS_MODULE)
    assert documented_lines(ROOT / API_DOC) == drawn
    assert len(drawn) > 20  # both drawings were found


BROKEN_ERRORS = '''"""Errors::

    BaseError (Exception)           the root
    ├── FormatError (ValueError)    drawn with the wrong builtin
    │   └── TaskError               drawn but not defined
    └── StaleError (RuntimeError)   as defined
"""


class BaseError(Exception):
    pass


class FormatError(BaseError, LookupError):
    pass


class StaleError(BaseError, RuntimeError):
    pass


class UndrawnError(BaseError):
    pass
'''


def _broken_tree(root: Path) -> None:
    (root / "streams_assign").mkdir()
    (root / "lag" / "sources").mkdir(parents=True)
    (root / "streams_assign" / "errors.py").write_text(BROKEN_ERRORS, encoding="utf-8")
    (root / "streams_assign" / "formats.py").write_text(
        "from streams_assign import errors\n\n\n"
        "class InvalidThing(errors.FormatError):\n    pass\n\n\n"
        "class Helper:\n    pass\n",
        encoding="utf-8",
    )
    (root / "lag" / "sources" / "reader.py").write_text(
        "def read():\n    class Local(KeyError):\n        pass\n\n\n"
        "class Derived(InvalidThing):  # known only through the other package\n    pass\n",
        encoding="utf-8",
    )
    (root / "lag" / "plain.py").write_text("class Row:\n    pass\n", encoding="utf-8")


def test_the_checks_report_a_broken_tree(tmp_path: Path) -> None:
    _broken_tree(tmp_path)
    assert misplaced_exceptions(tmp_path) == [
        "lag/sources/reader.py:2: class Local(KeyError)",
        "lag/sources/reader.py:6: class Derived(InvalidThing)",
        "streams_assign/formats.py:4: class InvalidThing(FormatError)",
    ]
    assert tree_mismatches(tmp_path / "streams_assign" / "errors.py") == [
        "FormatError is drawn with bases ('BaseError', 'ValueError'), "
        "defined ('BaseError', 'LookupError')",
        "TaskError('FormatError',) is drawn but not defined",
        "UndrawnError('BaseError',) is defined but not drawn",
    ]
    doc = tmp_path / "api.md"
    doc.write_text(
        "## Errors\n\n```\nBaseError (Exception)           the root\n```\n", encoding="utf-8"
    )
    drawn = drawing_lines(tmp_path / "streams_assign" / "errors.py")
    assert len(drawn) == 4 and documented_lines(doc) == drawn[:1] != drawn
