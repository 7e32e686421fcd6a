"""The literal mode is decided in one place (``streams_assign._java.emulation``)."""

from __future__ import annotations

import ast
from pathlib import Path

import streams_assign.assignors
from streams_assign._java.emulation import FastJavaEmulation, LiteralJavaEmulation
from streams_assign._java.heap import ExactCaughtUpClients
from streams_assign._java.priority import ConstrainedPrioritySet, KafkaLiteralPrioritySet
from streams_assign.assignors.state import AssignmentState
from streams_assign.formats.cluster_state import load_cluster_state

ASSIGNORS = Path(streams_assign.assignors.__file__).resolve().parent


def _branches_on_literal(path: Path) -> list[int]:
    """Lines of ``if`` statements or expressions whose test reads a name ``literal``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            for inner in ast.walk(node.test):
                if (isinstance(inner, ast.Name) and inner.id == "literal") or (
                    isinstance(inner, ast.Attribute) and inner.attr == "literal"
                ):
                    lines.append(node.lineno)
    return lines


def test_no_assignor_module_branches_on_the_literal_mode() -> None:
    modules = sorted(ASSIGNORS.rglob("*.py"))
    assert len(modules) > 10  # the package was really found
    found = {p.name: lines for p in modules if (lines := _branches_on_literal(p))}
    assert found == {}


def test_the_literal_switch_itself_is_found_by_the_check() -> None:
    # The check above must be able to fail: the emulation module, which decides, branches.
    emulation = ASSIGNORS.parent / "_java" / "emulation.py"
    assert _branches_on_literal(emulation) != []


def _state(kafka_corpora: Path, literal: bool) -> AssignmentState:
    paths = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    assert paths, f"no kafka-diff input under {kafka_corpora}"
    return AssignmentState(load_cluster_state(paths[0]), literal=literal)


def test_the_default_state_is_built_with_the_fast_structures(kafka_corpora: Path) -> None:
    state = _state(kafka_corpora, literal=False)
    assert isinstance(state.java, FastJavaEmulation)
    assert not state.java.visits_every_pair
    polled = state.priority_set(state.task_load, lambda c, t: True)
    assert isinstance(polled, ConstrainedPrioritySet)
    assert isinstance(state.java.caught_up_clients_by_task_load(state), ExactCaughtUpClients)


def test_the_literal_state_is_built_with_kafkas_structures(kafka_corpora: Path) -> None:
    state = _state(kafka_corpora, literal=True)
    assert isinstance(state.java, LiteralJavaEmulation)
    assert state.literal and state.java.visits_every_pair
    polled = state.priority_set(state.task_load, lambda c, t: True)
    assert isinstance(polled, KafkaLiteralPrioritySet)
    caught_up = state.java.caught_up_clients_by_task_load(state)
    assert isinstance(caught_up, KafkaLiteralPrioritySet)
