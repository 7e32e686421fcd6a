"""``streams_assign.cli._live`` without a cluster: which input is used, the usage errors, and the
application's ``session.timeout.ms`` (the live runs are in ``tests/kafka/test_live_*.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from streams_assign.cli import main
from streams_assign.cli._live import add_live_options, live_requested, session_timeout_ms
from streams_assign.errors import UsageError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_live_options(parser)
    return parser.parse_args(list(argv))


def test_a_file_or_the_cluster_never_both_nor_neither() -> None:
    assert live_requested(_args("--bootstrap-server", "b:1", "--application-id", "a"), None)
    assert not live_requested(_args(), "state.json")
    with pytest.raises(UsageError, match="not both"):
        live_requested(_args("--bootstrap-server", "b:1", "--application-id", "a"), "s.json")
    with pytest.raises(UsageError, match="give a state file"):
        live_requested(_args(), [])
    with pytest.raises(UsageError, match="go together"):
        live_requested(_args("--bootstrap-server", "b:1"), None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("session.timeout.ms=10000\n", 10_000),
        ("session.timeout.ms=10000\nconsumer.session.timeout.ms=20000\n", 20_000),
        (
            "consumer.session.timeout.ms=20000\nmain.consumer.session.timeout.ms=30000\n"
            "session.timeout.ms=10000\n",
            30_000,
        ),
        ("num.standby.replicas=1\n", None),
    ],
)
def test_session_timeout_follows_the_main_consumer_prefixes(
    tmp_path: Path, text: str, expected: int | None
) -> None:
    path = tmp_path / "app.properties"
    path.write_text(text)
    assert session_timeout_ms(_args("--streams-config", str(path))) == expected


def test_a_bad_session_timeout_names_file_key_and_value(tmp_path: Path) -> None:
    path = tmp_path / "app.properties"
    path.write_text("session.timeout.ms=soon\n")
    with pytest.raises(UsageError, match=r"app.properties: session.timeout.ms = 'soon'"):
        session_timeout_ms(_args("--streams-config", str(path)))


@pytest.mark.parametrize("command", ["plan", "assign", "compare"])
def test_both_inputs_exit_2_and_say_so(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    state.write_text("{}")
    status = main(
        [command, str(state), "--bootstrap-server", "127.0.0.1:1", "--application-id", "a"]
    )
    assert status == 2
    assert "not both" in capsys.readouterr().err
