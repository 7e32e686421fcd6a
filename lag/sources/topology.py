"""Read the text of Kafka Streams' ``Topology#describe()``.

Both printings are understood: the current multi-line one (Kafka 2.x and later,
``InternalTopologyBuilder.TopologyDescription``), where every node and its edges sit on their own
lines::

    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [input])
          --> KSTREAM-FILTER-0000000001

and the older one-line printing (Kafka 1.x, the WordCount tutorial), one node per line::

    Sub-topologies:
      Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000(topics: streams-plaintext-input) --> KSTREAM-...

Only what task placement needs is kept: per sub-topology, its source topics (or pattern) and its
state stores. Sub-topologies of global stores (``for global store (will not generate tasks)``) and
the ``Global Stores:`` section create no tasks and are skipped, as Kafka does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from streams_assign.errors import LagInputError

_SUBTOPOLOGY = re.compile(r"^\s*Sub-topology:\s*(?P<id>\d+)\b(?P<rest>.*)$")
_SOURCE = re.compile(r"Source:\s*(?P<name>[^\s(]+)\s*\(topics:\s*(?P<topics>.*?)\)(?:\s|$)")
_PROCESSOR = re.compile(r"Processor:\s*(?P<name>[^\s(]+)\s*\(stores:\s*\[(?P<stores>[^\]]*)\]\)")
_SINK = re.compile(r"Sink:\s*(?P<name>[^\s(]+)\s*\(topic:\s*(?P<topic>[^)]*)\)")
_GLOBAL_SECTION = re.compile(r"^\s*Global Stores:")
#: A line that starts a node: it must then parse whole as a source, processor or sink.
_NODE_START = re.compile(r"^\s*(?P<kind>Source|Processor|Sink):")
#: Edges: ``--> a, b`` (successors) and ``<-- a, b`` (predecessors), on their own line or after
#: the node in the one-line printing.
_EDGES = re.compile(r"(?P<arrow>-->|<--)\s*(?P<names>[^<>]*?)\s*(?=-->|<--|$)")
_NODE_NAME = re.compile(r"^\s*(?:Source|Processor|Sink):\s*(?P<name>[^\s(]+)")
#: Kafka's legal topic name characters (``org.apache.kafka.common.internals.Topic``).
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")


@dataclass(frozen=True, slots=True)
class SubtopologyDescription:
    """One sub-topology (Kafka's ``TopicsInfo`` / topic group): a unit that becomes tasks.

    Attributes
    ----------
    id:
        The sub-topology number, the ``<sub>`` of task ids ``<sub>_<partition>``.
    source_topics:
        Source topic names exactly as printed (internal repartition topics without the
        ``<application.id>-`` prefix, as ``describe()`` prints them).
    source_patterns:
        Regular expressions of pattern subscriptions (``builder.stream(Pattern)``).
    stores:
        State store names, in order of appearance.
    sink_topics:
        Topics the sub-topology writes to (used to recognise internal repartition topics).
    """

    id: int
    source_topics: tuple[str, ...] = ()
    source_patterns: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    sink_topics: tuple[str, ...] = ()

    @property
    def is_stateful(self) -> bool:
        """Whether the sub-topology owns a state store (its tasks have changelogs)."""
        return bool(self.stores)


@dataclass(frozen=True, slots=True)
class Topology:
    """The sub-topologies of an application, as read from ``Topology#describe()``.

    Attributes
    ----------
    subtopologies:
        By sub-topology id, in id order.
    """

    subtopologies: dict[int, SubtopologyDescription] = field(default_factory=dict)

    def changelog_topics(self, application_id: str) -> dict[str, tuple[int, str]]:
        """Changelog topic of every store, with the sub-topology and store it belongs to.

        Kafka names the changelog of store ``S`` ``<application.id>-S-changelog``
        (``ProcessorStateManager.storeChangelogTopic``); partition ``p`` of it is restored by
        task ``<sub>_<p>``.

        Parameters
        ----------
        application_id:
            Kafka Streams' ``application.id``.

        Returns
        -------
        dict
            Topic name -> (sub-topology id, store name).
        """
        return {
            f"{application_id}-{store}-changelog": (sub.id, store)
            for sub in self.subtopologies.values()
            for store in sub.stores
        }

    def source_topics(self, application_id: str) -> dict[str, int]:
        """Source topic name -> sub-topology id, with internal topics under their real names.

        ``describe()`` prints internal repartition topics without the ``<application.id>-``
        prefix Kafka gives them (``InternalTopologyBuilder.decorateTopic``); both spellings are
        mapped, for any source topic that another sub-topology writes to or whose name ends
        with ``-repartition``.

        Parameters
        ----------
        application_id:
            Kafka Streams' ``application.id``.

        Returns
        -------
        dict
            Topic name -> sub-topology id.
        """
        sinks = {topic for sub in self.subtopologies.values() for topic in sub.sink_topics}
        mapping: dict[str, int] = {}
        for sub in self.subtopologies.values():
            for topic in sub.source_topics:
                mapping[topic] = sub.id
                if topic in sinks or topic.endswith("-repartition"):
                    mapping[f"{application_id}-{topic}"] = sub.id
        return mapping

    def subtopology_of_source(self, topic: str, application_id: str) -> int | None:
        """The sub-topology that reads ``topic`` (by name or pattern), or None."""
        found = self.source_topics(application_id).get(topic)
        if found is not None:
            return found
        for sub in self.subtopologies.values():
            if any(re.fullmatch(pattern, topic) for pattern in sub.source_patterns):
                return sub.id
        return None


def parse_topology(text: str, source: str = "topology") -> Topology:
    """Parse the text of ``Topology#describe()`` (either printing).

    Parameters
    ----------
    text:
        The whole description, as ``System.out.println(topology.describe())`` prints it.
    source:
        Name of the input for error messages (the file path).

    Returns
    -------
    Topology
        Sub-topologies with their source topics and stores.

    Raises
    ------
    LagInputError
        Naming the file, the line and the text: when the text holds no sub-topology that
        generates tasks, a node line appears before any ``Sub-topology:`` header, a
        ``Sub-topology: N`` header appears twice, a node line does not parse whole, or an edge
        (``-->``/``<--``) names a node its sub-topology never describes (a text cut short: Kafka
        prints every node of a sub-topology, and edges never leave it).

    Notes
    -----
    Follows the ``toString`` methods of ``InternalTopologyBuilder.Source``, ``Processor``,
    ``Sink`` and ``Subtopology``. A source prints its topic set as ``[a, b]`` (or, in the one-line
    printing, as ``a, b``) and a pattern subscription as the bare regular expression; a name made
    only of legal topic characters is taken as a topic, anything else as a pattern.
    """
    subs: dict[int, dict[str, list[str]]] = {}
    header_lines: dict[int, int] = {}
    current: dict[str, list[str]] | None = None
    #: Per sub-topology (global ones too): the nodes it defines and the edges it names.
    nodes: list[tuple[str, set[str], list[tuple[int, str]]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _GLOBAL_SECTION.match(line):
            current = None
            break
        header = _SUBTOPOLOGY.match(line)
        if header is not None:
            sub_id = int(header["id"])
            nodes.append((line.strip(), set(), []))
            if "global store" in header["rest"]:
                current = {"global": []}  # parsed but dropped: global stores make no tasks
                continue
            if sub_id in header_lines:
                raise LagInputError(
                    f"{source}:{number}: duplicate 'Sub-topology: {sub_id}' (first at line "
                    f"{header_lines[sub_id]}); is the text two descriptions pasted together?"
                )
            header_lines[sub_id] = number
            current = {"topics": [], "patterns": [], "stores": [], "sinks": []}
            subs[sub_id] = current
            continue
        starts = _NODE_START.match(line)
        node = _SOURCE.search(line) or _PROCESSOR.search(line) or _SINK.search(line)
        if starts is not None and (node is None or node.re.pattern[:3] != starts["kind"][:3]):
            raise LagInputError(
                f"{source}:{number}: unreadable {starts['kind'].lower()} line "
                f"{line.strip()!r} (is the text cut short?)"
            )
        if nodes:
            if starts is not None:
                named = _NODE_NAME.match(line)
                if named is not None:
                    nodes[-1][1].add(named["name"])
            for edge in _EDGES.finditer(line):
                nodes[-1][2].extend((number, name) for name in _split_list(edge["names"]))
        if node is None:
            continue
        if current is None:
            raise LagInputError(f"{source}:{number}: node line before any 'Sub-topology:' header")
        if "global" in current:
            continue
        if node.re is _SOURCE:
            topics, patterns = _split_sources(node["topics"])
            current["topics"].extend(topics)
            current["patterns"].extend(patterns)
        elif node.re is _PROCESSOR:
            current["stores"].extend(_split_list(node["stores"]))
        else:
            current["sinks"].append(node["topic"].strip())
    for header_text, defined, edges in nodes:
        for number, name in edges:
            if name != "none" and name not in defined:
                raise LagInputError(
                    f"{source}:{number}: {header_text} names node {name!r}, which it never "
                    "describes (is the text cut short?)"
                )
    if not subs:
        raise LagInputError(
            f"{source}: no sub-topology found (is it the text of Topology#describe()?)"
        )
    return Topology(
        {
            sub_id: SubtopologyDescription(
                id=sub_id,
                source_topics=tuple(dict.fromkeys(parts["topics"])),
                source_patterns=tuple(dict.fromkeys(parts["patterns"])),
                stores=tuple(dict.fromkeys(parts["stores"])),
                sink_topics=tuple(dict.fromkeys(parts["sinks"])),
            )
            for sub_id, parts in sorted(subs.items())
        }
    )


def _split_list(inner: str) -> list[str]:
    return [item.strip() for item in inner.split(",") if item.strip()]


def _split_sources(printed: str) -> tuple[list[str], list[str]]:
    printed = printed.strip()
    if printed.startswith("[") and printed.endswith("]"):
        return _split_list(printed[1:-1]), []
    names = _split_list(printed)
    if names and all(_LEGAL_TOPIC.match(name) for name in names):
        return names, []
    return [], [printed]
