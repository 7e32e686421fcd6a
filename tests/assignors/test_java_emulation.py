"""The literal mode is decided in one place (``streams_assign.assignors.java_emulation``).

Every other module of :mod:`streams_assign.assignors` may hand the mode on unchanged (a keyword
argument ``literal=literal``, an attribute ``self.literal = literal``) but never read it: no
test of a name or attribute called ``literal`` or ``visits_every_pair`` or any flag the
emulation classes carry, and no attribute of ``state.java`` other than the methods of
:class:`~streams_assign.assignors.java_emulation.JavaEmulation`.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import streams_assign.assignors
from streams_assign.assignors import java_emulation
from streams_assign.assignors.balance_pairs import AllPairs, ListPairs
from streams_assign.assignors.caught_up_clients import ExactCaughtUpClients
from streams_assign.assignors.java_emulation import (
    FastJavaEmulation,
    JavaEmulation,
    LiteralJavaEmulation,
)
from streams_assign.assignors.priority_set import ConstrainedPrioritySet, KafkaLiteralPrioritySet
from streams_assign.assignors.state import AssignmentState
from streams_assign.formats.cluster_state import load_cluster_state

ASSIGNORS = Path(streams_assign.assignors.__file__).resolve().parent
EMULATION = Path(java_emulation.__file__).resolve()

#: The methods an algorithm module may call on ``state.java``.
EMULATION_METHODS = frozenset(
    name for name, _ in inspect.getmembers(JavaEmulation, inspect.isfunction)
)


def _mode_names() -> frozenset[str]:
    """Names that read the mode: the known ones and every flag of an emulation class."""
    classes = (FastJavaEmulation, LiteralJavaEmulation, JavaEmulation)
    flags = {n for cls in classes for n, v in list(vars(cls).items()) if isinstance(v, bool)}
    flags |= {n for cls in classes for n in inspect.get_annotations(cls)}
    return frozenset({"literal", "visits_every_pair"} | flags)


def _handed_on(node: ast.AST, parents: dict[ast.AST, ast.AST], name: str) -> bool:
    """Whether ``node`` (reading ``name``) only passes the mode on under the same name."""
    parent = parents.get(node)
    if isinstance(parent, ast.keyword) and parent.arg == name:
        return True
    if isinstance(parent, ast.Assign) and parent.value is node:
        return all(isinstance(t, ast.Attribute) and t.attr == name for t in parent.targets)
    return False


def reads_of_the_mode(source: str) -> list[int]:
    """Lines of ``source`` that read the literal mode (see the module notes)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    modes = _mode_names()
    lines = []
    for node in ast.walk(tree):
        if not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        if isinstance(node, ast.Name) and node.id in modes:
            if not _handed_on(node, parents, node.id):
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute):
            mode = node.attr in modes and not _handed_on(node, parents, node.attr)
            java = isinstance(node.value, ast.Attribute) and node.value.attr == "java"
            if mode or (java and node.attr not in EMULATION_METHODS):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_no_assignor_module_reads_the_literal_mode() -> None:
    modules = sorted(p for p in ASSIGNORS.rglob("*.py") if p.resolve() != EMULATION)
    assert len(modules) > 10  # the package was really found
    found = {
        str(p.relative_to(ASSIGNORS)): lines
        for p in modules
        if (lines := reads_of_the_mode(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_check_finds_every_way_of_reading_the_mode() -> None:
    # The check must be able to fail: the switch itself, the branch balance.py once had, a flag
    # renamed on the emulation, and a mode copied into a local before it is tested.
    assert reads_of_the_mode(EMULATION.read_text(encoding="utf-8")) != []
    broken = {
        "if state.java.visits_every_pair:\n    pass\n": [1],
        "if state.java.exhaustive:\n    pass\n": [1],
        "every = state.java.every_pair\n": [1],
        "def f(literal):\n    fast = not literal\n": [2],
        "x = self.literal if ok else 0\n": [1],
        "def f(literal):\n    return g(literal)\n": [2],
    }
    for source, lines in broken.items():
        assert reads_of_the_mode(source) == lines, source
    # Handing the mode on unchanged is not reading it.
    handed_on = "def f(literal):\n    self.literal = literal\n    g(c, literal=self.literal)\n"
    assert reads_of_the_mode(handed_on) == []
    assert reads_of_the_mode("pairs = state.java.balancing_pairs(a, b)\n") == []


def _state(kafka_corpora: Path, literal: bool) -> AssignmentState:
    paths = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    assert paths, f"no kafka-diff input under {kafka_corpora}"
    return AssignmentState(load_cluster_state(paths[0]), literal=literal)


def test_the_default_state_is_built_with_the_fast_structures(kafka_corpora: Path) -> None:
    state = _state(kafka_corpora, literal=False)
    assert isinstance(state.java, FastJavaEmulation)
    assert isinstance(state.java.balancing_pairs([1, 1], [0, 0]), ListPairs)
    polled = state.priority_set(state.task_load, lambda c, t: True)
    assert isinstance(polled, ConstrainedPrioritySet)
    assert isinstance(state.java.caught_up_clients_by_task_load(state), ExactCaughtUpClients)


def test_the_literal_state_is_built_with_kafkas_structures(kafka_corpora: Path) -> None:
    state = _state(kafka_corpora, literal=True)
    assert isinstance(state.java, LiteralJavaEmulation)
    assert isinstance(state.java.balancing_pairs([1, 1], [0, 0]), AllPairs)
    polled = state.priority_set(state.task_load, lambda c, t: True)
    assert isinstance(polled, KafkaLiteralPrioritySet)
    caught_up = state.java.caught_up_clients_by_task_load(state)
    assert isinstance(caught_up, KafkaLiteralPrioritySet)
