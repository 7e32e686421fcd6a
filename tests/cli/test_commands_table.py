"""The ``streams-assign`` command table: lazy imports, the base install, missing extras."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streams_assign.cli import COMMANDS, EXTRA_MODULES, build_parser, main

REPO = Path(__file__).resolve().parents[2]
HAND_CLUSTER = REPO / "tests" / "optimal" / "data" / "hand-cluster.json"

#: A meta-path finder that makes the optional dependencies look uninstalled, then runs the CLI.
_BLOCKED_RUN = """
import sys
BLOCKED = {blocked!r}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
from streams_assign.cli import main
status = main(sys.argv[1:])
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(BLOCKED))
assert not loaded, loaded
sys.exit(status)
"""
BLOCKED = ("ortools", "pandas", "matplotlib", "pyspark", "networkx", "pyarrow", "yaml")


def run_blocked(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED_RUN.format(blocked=BLOCKED), *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )


def test_every_command_module_has_configure_and_run() -> None:
    import importlib

    for command in COMMANDS:
        module = importlib.import_module(command.module)
        assert callable(module.configure), command.name
        assert callable(module.run), command.name
        assert command.extra is None or command.extra in set(EXTRA_MODULES.values())


def test_help_lists_every_command_without_importing_any(capsys) -> None:
    code = (
        "import sys\n"
        "from streams_assign.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in sys.modules if m.startswith('streams_assign.cli.')\n"
        "         or m.startswith(('streams_assign.views', 'streams_assign.simulation'))\n"
        "         or m.split('.')[0] in ('ortools', 'matplotlib', 'pyspark', 'pandas', 'numpy')\n"
        "         or m.startswith('streams_assign.assignors')]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    lines = done.stdout.splitlines()
    assert lines[-1] == "[]"
    for command in COMMANDS:
        assert command.name in done.stdout


def test_only_the_chosen_command_gets_its_arguments() -> None:
    parser = build_parser(["assign", "x.json"])
    args = parser.parse_args(["assign", "x.json", "--json"])
    assert args.command == "assign"
    assert args.files == ["x.json"]
    assert args.json is True


def test_base_install_runs_assign_and_simulate_with_extras_blocked(capsys) -> None:
    assert main(["assign", "--json", str(HAND_CLUSTER)]) == 0
    expected = json.loads(capsys.readouterr().out)
    done = run_blocked("assign", "--json", str(HAND_CLUSTER))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected

    done = run_blocked("simulate", "--json", str(HAND_CLUSTER))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["converged"] is True


@pytest.mark.parametrize("name", [c.name for c in COMMANDS if c.extra == "optimal"])
def test_a_command_whose_extra_is_missing_names_the_extra(name: str) -> None:
    argv = ["score", str(HAND_CLUSTER), str(HAND_CLUSTER)] if name == "score" else [name]
    done = run_blocked(*argv, *([str(HAND_CLUSTER)] if name != "score" else []))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"streams-assign {name} needs the 'optimal' extra" in done.stderr
    assert "pip install 'streams-assign[optimal]'" in done.stderr


def test_help_of_a_command_with_a_missing_extra_still_works() -> None:
    done = run_blocked("optimal", "--help")
    assert done.returncode == 0, done.stderr
    assert "--time-limit" in done.stdout


def test_light_copies_of_choices_agree_with_their_sources() -> None:
    from streams_assign.assignors import ASSIGNOR_ALIASES, ASSIGNORS
    from streams_assign.cli import _solver
    from streams_assign.cli.assign import ASSIGNOR_CHOICES
    from streams_assign.cli.optimal import PROBLEMS
    from streams_assign.optimal import solve
    from streams_assign.optimal.model import Problem

    assert list(ASSIGNOR_CHOICES) == sorted([*ASSIGNORS, *ASSIGNOR_ALIASES])
    assert list(PROBLEMS) == [p.value for p in Problem]
    assert _solver.DEFAULT_TIME_LIMIT == solve.DEFAULT_TIME_LIMIT
    assert _solver.DEFAULT_NUM_WORKERS == solve.DEFAULT_NUM_WORKERS
    assert _solver.DEFAULT_RANDOM_SEED == solve.DEFAULT_RANDOM_SEED


def test_yaml_without_pyyaml_names_the_extra(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("clients: []\n", encoding="utf-8")
    done = run_blocked("assign", str(state))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(state) in done.stderr
    assert "pip install 'streams-assign[yaml]'" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["assign", "{bad}"],
        ["assign", "--json", "{good}", "{bad}"],
        ["simulate", "{bad}"],
        ["optimal", "{bad}"],
        ["score", "{bad}", "{good}"],
        ["score", "{good}", "{bad}"],
        ["compare", "{bad}"],
    ],
    ids=lambda argv: "-".join(a.strip("{}-") for a in argv),
)
def test_every_subcommand_names_the_file_in_its_error(argv: list[str], tmp_path: Path, capsys):
    good = tmp_path / "good.json"
    good.write_text(HAND_CLUSTER.read_text(encoding="utf-8"), encoding="utf-8")
    document = json.loads(HAND_CLUSTER.read_text(encoding="utf-8"))
    document["clients"][0]["capacity"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    names = {"{good}": str(good), "{bad}": str(bad)}
    assert main([names.get(a, a) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    named = str(bad) if "{bad}" in argv else str(good)
    assert err.startswith(f"streams-assign: error: {named}: ") or f" {named}: " in err, err


@pytest.mark.parametrize("command", ["assign", "simulate"])
def test_tables_fit_100_columns_on_a_wide_terminal(
    command: str, monkeypatch, capsys, tmp_path: Path
) -> None:
    from devtools.generators.cluster_states import scale_scenario

    monkeypatch.setenv("COLUMNS", "240")
    state = tmp_path / "wide.json"
    document = scale_scenario(6, stateful_tasks=200, stateless_tasks=100, seed=2)
    for client in document["clients"]:
        client["tags"] = {"zone": "a-rather-long-zone-name-" + client["id"][:8]}
    state.write_text(json.dumps(document), encoding="utf-8")
    assert main([command, str(state)]) == 0
    out = capsys.readouterr().out
    assert out.strip()
    assert max(len(line) for line in out.splitlines()) <= 100
