"""YAML input of the cluster state (PyYAML, the ``yaml`` extra), with task ids kept as text."""

from __future__ import annotations

import functools
import re
from typing import Any

from streams_assign.errors import InvalidScenarioError

__all__ = ["YAML_HINT", "load_yaml"]

YAML_HINT = "YAML input needs PyYAML: pip install 'streams-assign[yaml]'"


def load_yaml(text: str, required: bool) -> Any:
    """The YAML document in ``text``; ``None`` when PyYAML is missing and not ``required``.

    Task ids such as ``1_3`` stay strings: YAML 1.1 would read them as the integer 13, so the
    loader resolves only plain integers and floats without underscores.
    """
    try:
        import yaml
    except ModuleNotFoundError:
        if required:
            raise InvalidScenarioError("", YAML_HINT) from None
        return None
    try:
        return yaml.load(text, Loader=_strict_yaml_loader(yaml))  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidScenarioError("", f"malformed YAML: {problem}{where}") from None


@functools.cache
def _strict_yaml_loader(yaml: Any) -> Any:
    class StrictLoader(yaml.SafeLoader):  # type: ignore[misc,name-defined]
        pass

    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if not tag.endswith((":int", ":float"))]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789")
    )
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"),
        list("-+0123456789."),
    )
    return StrictLoader
