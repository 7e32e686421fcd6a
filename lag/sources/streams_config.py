"""The application's own Kafka Streams properties file: the assignment configs it sets.

``streams-lag compute --streams-config app.properties`` reads the file the application is
started with and takes from it the configs Kafka's group leader assigns with (``StreamsConfig``):

==================================  ==========  ===========  ==============================
Kafka name                          type        default      range (``StreamsConfig``)
==================================  ==========  ===========  ==============================
``acceptable.recovery.lag``         long        10000        >= 0
``max.warmup.replicas``             int         2            >= 1
``num.standby.replicas``            int         0            >= 0 (no validator in Kafka)
``probing.rebalance.interval.ms``   long        600000       >= 60000
``rack.aware.assignment.tags``      list        (empty)      at most 5 tags
==================================  ==========  ===========  ==============================

An explicit command-line flag overrides the file; a config in neither is Kafka's default, and
:meth:`ResolvedConfigs.notes` says so. ``client.tag.*`` values are one instance's tags: the
file cannot say which process they belong to, so they are reported, not written.

The file is read as ``java.util.Properties.load(InputStream)`` reads it (Kafka's
``Utils.loadProps``): ISO-8859-1; natural lines ending in ``\\n``, ``\\r`` or ``\\r\\n``; blank
lines and lines whose first non-blank character is ``#`` or ``!`` skipped; a line ending in an
odd number of backslashes continues on the next one, whose leading blanks are dropped; the key
ends at the first unescaped ``=``, ``:`` or blank, then blanks, at most one ``=`` or ``:`` and
blanks again separate it from the value; ``\\t``, ``\\n``, ``\\r``, ``\\f`` and ``\\uXXXX`` are
escapes, and a backslash before any other character stands for that character; a later
duplicate key wins. Values are parsed as ``ConfigDef.parseType`` does (trimmed; a long or int in
decimal with an optional sign; a list split on commas with the blanks around them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lag.kafka_rules import INT_MAX, LONG_MAX
from streams_assign.errors import LagInputError

__all__ = [
    "CONFIG_FLAGS",
    "ResolvedConfigs",
    "StreamsConfigSpec",
    "parse_properties",
    "read_properties",
    "resolve_configs",
]

_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_LIST_SEPARATOR = re.compile(r"\s*,\s*")
#: ``StreamsConfig.MAX_RACK_AWARE_ASSIGNMENT_TAG_LIST_SIZE``.
MAX_TAGS = 5
CLIENT_TAG_PREFIX = "client.tag."


@dataclass(frozen=True, slots=True)
class StreamsConfigSpec:
    """One assignment config: its Kafka name, type, default and range.

    Attributes
    ----------
    name:
        Kafka's name (``StreamsConfig``).
    field:
        The name in the cluster state's ``configs`` and in ``AssignmentConfigs``.
    kind:
        ``"long"``, ``"int"`` or ``"list"``.
    default:
        Kafka's default.
    low, high:
        The valid range of a number.
    """

    name: str
    field: str
    kind: str
    default: Any
    low: int = 0
    high: int = LONG_MAX

    def parse(self, text: str) -> Any:
        """The value of ``text`` as ``ConfigDef.parseType`` and the validators read it.

        Raises
        ------
        ValueError
            With a reason, for text that is no such value or a value out of range.
        """
        trimmed = text.strip()
        if self.kind == "list":
            tags = tuple(_LIST_SEPARATOR.split(trimmed)) if trimmed else ()
            if any(not tag for tag in tags):
                raise ValueError("a tag name is empty")
            if len(tags) > MAX_TAGS:
                raise ValueError(f"at most {MAX_TAGS} tags are allowed, got {len(tags)}")
            return tags
        if not _INTEGER.match(trimmed):
            raise ValueError(f"not {'a long' if self.kind == 'long' else 'an int'}")
        value = int(trimmed)
        top = INT_MAX if self.kind == "int" else LONG_MAX
        if not -top - 1 <= value <= top:
            raise ValueError(f"out of the range of a Java {self.kind}")
        if not self.low <= value <= self.high:
            raise ValueError(f"must be between {self.low} and {self.high}")
        return value

    def show(self, value: Any) -> str:
        """The value as the file would write it."""
        return ",".join(value) if self.kind == "list" else str(value)


#: The configs taken from the file, each with the flag of ``streams-lag compute`` that overrides it.
CONFIG_FLAGS: dict[str, StreamsConfigSpec] = {
    "--acceptable-recovery-lag": StreamsConfigSpec(
        "acceptable.recovery.lag", "acceptable_recovery_lag", "long", 10_000
    ),
    "--max-warmup-replicas": StreamsConfigSpec(
        "max.warmup.replicas", "max_warmup_replicas", "int", 2, 1, INT_MAX
    ),
    "--num-standby-replicas": StreamsConfigSpec(
        "num.standby.replicas", "num_standby_replicas", "int", 0, 0, INT_MAX
    ),
    "--probing-rebalance-interval-ms": StreamsConfigSpec(
        "probing.rebalance.interval.ms", "probing_rebalance_interval_ms", "long", 600_000, 60_000
    ),
    "--rack-aware-assignment-tags": StreamsConfigSpec(
        "rack.aware.assignment.tags", "rack_aware_assignment_tags", "list", ()
    ),
}


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """``Properties.LineReader``: (first line number, logical line without its escapes read)."""
    natural = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, line in enumerate(natural, start=1):
        if pending:
            line = line.lstrip(_BLANKS)
        else:
            stripped = line.lstrip(_BLANKS)
            if not stripped or stripped[0] in "#!":
                continue
            start, line = number, stripped
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending.append(line[:-1])
            continue
        pending.append(line)
        lines.append((start, "".join(pending)))
        pending = []
    if pending:  # the file ends inside a continuation: Java drops the backslash
        lines.append((start, "".join(pending)))
    return lines


def _unescape(text: str, source: str, number: int) -> str:
    """``Properties.loadConvert``: the escapes of a key or a value."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if char != "\\" or i == len(text):
            out.append(char)
            continue
        char = text[i]
        i += 1
        if char == "u":
            digits = text[i : i + 4]
            if len(digits) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                escape = "\\u" + digits
                raise LagInputError(
                    f"--streams-config {source}: line {number}: malformed \\uxxxx encoding "
                    f"{escape!r}"
                )
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(char, char))
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    """Key and value text of a logical line, as ``Properties.load0`` splits them."""
    i = 0
    escaped = False
    while i < len(line):
        char = line[i]
        if not escaped and char in "=:" + _BLANKS:
            break
        escaped = char == "\\" and not escaped
        i += 1
    key, rest = line[:i], line[i:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def parse_properties(text: str, source: str = "<text>") -> dict[str, str]:
    """Parse a Java properties text as ``java.util.Properties.load`` does.

    Parameters
    ----------
    text:
        The file's text.
    source:
        The file, for the message.

    Returns
    -------
    dict
        Key -> value, a later duplicate winning.

    Raises
    ------
    LagInputError
        For a malformed ``\\uXXXX`` escape (Java throws ``IllegalArgumentException``), naming the
        file and the line.
    """
    properties: dict[str, str] = {}
    for number, line in _logical_lines(text):
        key, value = _split_key(line)
        properties[_unescape(key, source, number)] = _unescape(value, source, number)
    return properties


def read_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file as Kafka's ``Utils.loadProps`` does (ISO-8859-1).

    Raises
    ------
    LagInputError
        When the file does not exist or cannot be read, or its text is malformed.
    """
    target = Path(path)
    if not target.is_file():
        raise LagInputError(f"--streams-config {path}: no such file")
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise LagInputError(f"--streams-config {path}: unreadable: {exc}") from None
    return parse_properties(data.decode("iso-8859-1"), str(path))


@dataclass
class ResolvedConfigs:
    """The assignment configs and where each came from.

    Attributes
    ----------
    values:
        ``AssignmentConfigs`` field -> value.
    origins:
        Kafka name -> ``"flag --x"``, ``"<file>"`` or ``"Kafka's default"``.
    client_tags:
        The ``client.tag.*`` entries of the file (one instance's tags; not written).
    source:
        The properties file, or None.
    """

    values: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    client_tags: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def notes(self) -> list[str]:
        """Lines for stderr: every config that fell back to Kafka's default, and client tags."""
        lines = []
        for spec in CONFIG_FLAGS.values():
            if self.origins[spec.name] == "Kafka's default":
                shown = spec.show(self.values[spec.field]) or "(none)"
                lines.append(f"{spec.name} = {shown} (Kafka's default; not given)")
        if self.client_tags:
            tags = ", ".join(f"{k}={v}" for k, v in sorted(self.client_tags.items()))
            lines.append(
                f"{', '.join(sorted(self.client_tags))} in {self.source}: one instance's tags "
                f"({tags}); no input of streams-lag says which process has which tags, so the "
                "cluster state carries no client tags (add each client's `tags`)"
            )
        return lines

    def description(self) -> str:
        """One line for the cluster state's ``description``: each config and its origin."""
        parts = [
            f"{spec.name}={spec.show(self.values[spec.field]) or '(none)'} "
            f"({self.origins[spec.name]})"
            for spec in CONFIG_FLAGS.values()
        ]
        return "configs: " + "; ".join(parts)


def resolve_configs(flags: dict[str, Any], streams_config: str | None) -> ResolvedConfigs:
    """The assignment configs from the flags given, the properties file and Kafka's defaults.

    Parameters
    ----------
    flags:
        Flag (``--num-standby-replicas``) -> value, None when not given.
    streams_config:
        The application's properties file, or None.

    Returns
    -------
    ResolvedConfigs

    Raises
    ------
    LagInputError
        When the file is missing or malformed, or holds a value that is not valid for its config,
        naming the file, the key and the value.
    """
    properties = read_properties(streams_config) if streams_config is not None else {}
    resolved = ResolvedConfigs(source=streams_config)
    resolved.client_tags = {k: v for k, v in properties.items() if k.startswith(CLIENT_TAG_PREFIX)}
    for flag, spec in CONFIG_FLAGS.items():
        given = flags.get(flag)
        if given is not None:
            resolved.values[spec.field] = given
            resolved.origins[spec.name] = f"flag {flag}"
        elif spec.name in properties:
            raw = properties[spec.name]
            try:
                resolved.values[spec.field] = spec.parse(raw)
            except ValueError as exc:
                raise LagInputError(
                    f"--streams-config {streams_config}: {spec.name} = {raw!r}: {exc}"
                ) from None
            resolved.origins[spec.name] = str(streams_config)
        else:
            resolved.values[spec.field] = spec.default
            resolved.origins[spec.name] = "Kafka's default"
    return resolved
