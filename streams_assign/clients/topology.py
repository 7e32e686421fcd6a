"""The app's topology as the assignor sees it: sub-topologies, source topics, changelog topics.

A Python stream app describes its topology once. As in Kafka Streams
(``InternalTopologyBuilder.TopicsInfo`` and ``PartitionGrouper``), partition ``p`` of every
source topic of sub-topology ``s`` forms task ``s_p`` (the source topics of one sub-topology are
co-partitioned), and partition ``p`` of each of its stores' changelog topics belongs to the same
task. A sub-topology with changelog topics is stateful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from streams_assign.errors import TopologyError
from streams_assign.model import Subtopology, TaskId, TopicPartition

__all__ = [
    "EndOffsetFetcher",
    "Topology",
    "partitions_by_endpoint",
]


@dataclass(frozen=True, slots=True)
class Topology:
    """The sub-topologies of one application.

    Raises
    ------
    TopologyError
        For duplicate sub-topology ids, a sub-topology without source topics, or a topic used
        by two sub-topologies.

    Examples
    --------
    >>> t = Topology((Subtopology(0, ("words",), ("app-counts-changelog",)),))
    >>> sorted(str(task) for task in t.tasks({"words": 2, "app-counts-changelog": 2}))
    ['0_0', '0_1']
    """

    subtopologies: tuple[Subtopology, ...]

    def __post_init__(self) -> None:
        seen_ids: set[int] = set()
        owner: dict[str, int] = {}
        for i, sub in enumerate(self.subtopologies):
            if sub.id < 0 or sub.id in seen_ids:
                raise TopologyError(f"subtopologies[{i}].id: duplicate or negative id {sub.id}")
            seen_ids.add(sub.id)
            if not sub.source_topics:
                raise TopologyError(f"subtopologies[{i}].source_topics: empty")
            for topic in (*sub.source_topics, *sub.changelog_topics):
                if topic in owner:
                    raise TopologyError(
                        f"subtopologies[{i}]: topic {topic!r} also belongs to sub-topology "
                        f"{owner[topic]}"
                    )
                owner[topic] = sub.id

    @classmethod
    def from_dict(cls, document: Mapping[str, object]) -> Topology:
        """Build from ``{"<sub id>": {"source_topics": [...], "changelog_topics": [...]}}``.

        Raises
        ------
        TopologyError
            Naming the key and the bad value.
        """
        subs: list[Subtopology] = []
        for key, raw in document.items():
            if not str(key).isdigit() or not isinstance(raw, Mapping):
                raise TopologyError(f"{key!r}: expected a sub-topology number and an object")
            sources = raw.get("source_topics")
            changelogs = raw.get("changelog_topics", [])
            for name, value in (("source_topics", sources), ("changelog_topics", changelogs)):
                if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                    raise TopologyError(f"{key}.{name}: expected a list of topics, got {value!r}")
            assert isinstance(sources, list) and isinstance(changelogs, list)
            subs.append(Subtopology(int(key), tuple(sources), tuple(changelogs)))
        return cls(tuple(sorted(subs, key=lambda s: s.id)))

    @property
    def source_topics(self) -> tuple[str, ...]:
        """Every source topic, the consumer group's subscription."""
        return tuple(t for sub in self.subtopologies for t in sub.source_topics)

    @property
    def changelog_topics(self) -> tuple[str, ...]:
        """Every changelog topic."""
        return tuple(t for sub in self.subtopologies for t in sub.changelog_topics)

    def subtopology(self, sub_id: int) -> Subtopology:
        """The sub-topology with this id; raises ``KeyError`` when there is none."""
        for sub in self.subtopologies:
            if sub.id == sub_id:
                return sub
        raise KeyError(sub_id)

    def partition_count(self, sub: Subtopology, partitions: Mapping[str, int]) -> int:
        """Number of tasks of ``sub``: the common partition count of its source topics.

        Raises
        ------
        TopologyError
            When the source topics are not co-partitioned; ``KeyError`` never: a topic missing
            from ``partitions`` counts as 0 partitions (not created yet).
        """
        counts = {topic: partitions.get(topic, 0) for topic in sub.source_topics}
        if len(set(counts.values())) > 1:
            raise TopologyError(
                f"sub-topology {sub.id}: source topics are not co-partitioned: {counts}"
            )
        return next(iter(counts.values()))

    def tasks(self, partitions: Mapping[str, int]) -> dict[TaskId, bool]:
        """Every task with whether it is stateful, given the partition count per topic."""
        result: dict[TaskId, bool] = {}
        for sub in self.subtopologies:
            for p in range(self.partition_count(sub, partitions)):
                result[TaskId(sub.id, p)] = sub.stateful
        return result

    def source_partitions(self, task: TaskId) -> tuple[TopicPartition, ...]:
        """The source partitions of a task (what the member consumes for it as active)."""
        return tuple((t, task.partition) for t in self.subtopology(task.subtopology).source_topics)

    def changelog_partitions(self, task: TaskId) -> tuple[TopicPartition, ...]:
        """The changelog partitions of a task (what a standby or warmup replica reads)."""
        sub = self.subtopology(task.subtopology)
        return tuple((t, task.partition) for t in sub.changelog_topics)

    def task_of(self, partition: TopicPartition) -> TaskId | None:
        """The task a source or changelog partition belongs to, or ``None``."""
        topic, number = partition
        for sub in self.subtopologies:
            if topic in sub.source_topics or topic in sub.changelog_topics:
                return TaskId(sub.id, number)
        return None


def partitions_by_endpoint(
    topology: Topology, endpoints: Mapping[str, Iterable[TaskId]]
) -> dict[TopicPartition, str]:
    """Source partition -> ``host:port`` of the process running its task as active.

    Kafka's ``partitionsByHost`` inverted, for interactive queries: which process to ask for
    the state of a key.
    """
    result: dict[TopicPartition, str] = {}
    for endpoint, tasks in endpoints.items():
        for task in tasks:
            for partition in topology.source_partitions(task):
                result[partition] = endpoint
    return result


#: Fetches end offsets (records) of changelog partitions; ``None`` when the fetch failed.
EndOffsetFetcher = Callable[[list[TopicPartition]], "Mapping[TopicPartition, int] | None"]
