"""Every repository path and module the documentation names in backticks exists.

The documents are ``docs/*.md`` and the corpora's ``tests/corpora/PROVENANCE.md``. Each word of
a span in backticks is checked when it starts with a top-level folder of the repository:

- a path (``streams_assign/cli/assign.py``, ``tests/corpora/kafka-diff/``): the file or folder
  exists; ``*`` and ``...`` (any folders) match at least one file, ``{a,b}`` is expanded, and a
  ``:line``, ``::test`` or ``(args)`` tail is ignored;
- a dotted name of the installed packages or the tooling (``streams_assign.java.hash_order``,
  ``lag.job.asof_join.sort_prefix``): each part is a subpackage or module in turn, and the first
  part that is neither is a name the module (or the package's ``__init__.py``) mentions.

The checker also runs on a small broken tree in ``tmp_path`` and must name the document and line
of each fault there.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Top-level folders whose paths the documents may name.
PATH_ROOTS = (
    "streams_assign",
    "lag",
    "devtools",
    "tests",
    "benchmarks",
    "kafka",
    "examples",
    "docs",
)
#: Top-level packages whose dotted names the documents may name (``kafka.`` is Kafka's Java).
DOTTED_ROOTS = ("streams_assign", "lag", "devtools")

_BACKTICKED = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def documents(root: Path) -> list[Path]:
    """The Markdown files whose paths are checked: ``docs/*.md`` and the corpora's provenance."""
    found = sorted((root / "docs").glob("*.md"))
    provenance = root / "tests" / "corpora" / "PROVENANCE.md"
    if provenance.is_file():
        found.append(provenance)
    return found


def _expand_braces(token: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", token)
    if match is None:
        return [token]
    head, tail = token[: match.start()], token[match.end() :]
    return list(
        itertools.chain.from_iterable(
            _expand_braces(head + choice + tail) for choice in match.group(1).split(",")
        )
    )


def _path_exists(root: Path, token: str) -> bool:
    token = re.split(r"::|:\d|\(", token, maxsplit=1)[0]
    for candidate in _expand_braces(token):
        pattern = candidate.replace("/.../", "/**/").rstrip("/")
        if "*" in pattern:
            if not any(root.glob(pattern)):
                return False
        elif not (root / pattern).exists():
            return False
    return True


def _mentions(path: Path, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", path.read_text(encoding="utf-8")) is not None


def _dotted_exists(root: Path, token: str) -> bool:
    parts = _IDENTIFIER.findall(token.split("(", 1)[0])
    here = root
    for index, part in enumerate(parts):
        if (here / part).is_dir():
            here = here / part
        elif (here / f"{part}.py").is_file():
            rest = parts[index + 1 :]
            return not rest or _mentions(here / f"{part}.py", rest[0])
        else:
            init = here / "__init__.py"
            return here != root and init.is_file() and _mentions(init, part)
    return True


def _word_exists(root: Path, word: str) -> bool:
    """Whether one word of a backticked span exists, if it names a repository path or module."""
    top = re.split(r"[/.]", word, maxsplit=1)[0]
    if "/" in word and top in PATH_ROOTS:
        return _path_exists(root, word)
    if "/" not in word and "." in word and top in DOTTED_ROOTS:
        return _dotted_exists(root, word)
    return True


def missing_paths(root: Path) -> list[str]:
    """``doc:line: `token``` for every backticked repository path or module that does not exist."""
    faults = []
    for doc in documents(root):
        lines = doc.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            for raw in _BACKTICKED.findall(line):
                if not all(_word_exists(root, word) for word in raw.split()):
                    faults.append(f"{doc.relative_to(root)}:{number}: `{raw}`")
    return faults


def test_every_backticked_path_in_the_docs_exists() -> None:
    assert missing_paths(REPO) == []


def test_the_checker_names_each_missing_path_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "streams_assign" / "cli").mkdir(parents=True)
    (tmp_path / "streams_assign" / "__init__.py").write_text("from .model import TaskId\n")
    (tmp_path / "streams_assign" / "cli" / "__init__.py").write_text("")
    (tmp_path / "streams_assign" / "cli" / "assign.py").write_text("def main():\n    pass\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(
        "Run `streams_assign/cli/assign.py` (`streams_assign.cli.assign.main`).\n"
        "The old `streams_assign/commands/assign.py` and `streams_assign.commands.assign`.\n"
        "`streams_assign/cli/{assign,plan}.py`, `streams_assign.cli.assign.run`, "
        "`streams_assign.TaskId`, `streams_assign.Missing`, `kafka.tools.StorageTool`.\n"
        "`tests/**/*.py` and `docs/guide.md:1`, `lag/` is gone, `pip install x`.\n"
        "`python -m streams_assign.cli` and `python -m streams_assign.schema --out x.json`.\n"
    )
    assert missing_paths(tmp_path) == [
        "docs/guide.md:2: `streams_assign/commands/assign.py`",
        "docs/guide.md:2: `streams_assign.commands.assign`",
        "docs/guide.md:3: `streams_assign/cli/{assign,plan}.py`",
        "docs/guide.md:3: `streams_assign.cli.assign.run`",
        "docs/guide.md:3: `streams_assign.Missing`",
        "docs/guide.md:4: `tests/**/*.py`",
        "docs/guide.md:4: `lag/`",
        "docs/guide.md:5: `python -m streams_assign.schema --out x.json`",
    ]
