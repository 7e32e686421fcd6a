"""``read_streams_members`` against a live Kafka Streams 4.2.1 group on the session's broker.

Two instances of the project's ``OrdersApp`` (``devtools.kafka.streams_app``), tagged by zone.
Once the second has joined and the group is stable, every member read through
``DescribeGroups`` must carry its instance's process id (the state directory's
``kafka-streams-process-metadata``), its tags and endpoint, the tasks its thread reports running,
and, summed per process, exactly the task offset sums the group leader logged as its input
(``ClientState#toString`` in the leader's ``Decided on assignment`` line). ``streams-lag
members`` prints the same members, and exits 2 for a group that does not exist.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.streams_app import StreamsCluster
from lag.cli import main as lag_main
from lag.sources.streams_group_state import read_streams_members
from streams_assign.errors import LagInputError
from streams_assign.model import TaskId

pytestmark = pytest.mark.kafka

APP_ID = "userdata-live"
_CLIENT_SUMS = re.compile(
    r"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})=\[activeTasks: .*?"
    r"changelogOffsetTotalsByTask: \(\[([^\]]*)\]\)"
)


def _last_logged_sums(cluster: StreamsCluster) -> dict[str, dict[str, int]]:
    """Process id -> task -> offset sum of the leader's last ``Decided on assignment`` line."""
    lines = [line for i in cluster.instances for line in i.log_lines("Decided on assignment")]
    assert lines, "the leader logged no decision"
    last = max(lines, key=lambda line: line[:25])
    logged = {}
    for process_id, sums in _CLIENT_SUMS.findall(last):
        pairs = (entry.split("=") for entry in sums.split(", ") if entry)
        logged[process_id] = {task: int(total) for task, total in pairs}
    return logged


def test_live_group_members_match_the_application(
    kafka_broker: KafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StreamsCluster(kafka_broker, APP_ID, standbys=1, work_dir=tmp_path) as cluster:
        cluster.create_input_topics()
        cluster.produce(200)
        first = cluster.add_instance(
            threads=2, configs={"client.tag.zone": "a", "application.server": "one:9001"}
        )
        cluster.wait_stable(timeout=240)
        cluster.add_instance(
            threads=1, configs={"client.tag.zone": "b", "application.server": "two:9002"}
        )
        cluster.wait_stable(timeout=240, quiet_ms=5000)
        members = read_streams_members(kafka_broker.bootstrap_servers, APP_ID, 30_000)
        assert cluster.wait_stable(timeout=60, quiet_ms=5000)  # nothing moved meanwhile

        by_process: dict[str, dict[str, set[int]]] = {}
        threads = {
            f"{name}-consumer": (instance, tasks)
            for instance in cluster.instances
            for name, tasks in instance.assignment().threads.items()  # type: ignore[union-attr]
        }
        assert len(members) == len(threads) == 3
        for member in members:
            instance, (active, standby) = threads[member.client_id]
            metadata = instance.state_dir / APP_ID / "kafka-streams-process-metadata"
            process_id = json.loads(metadata.read_text())["processId"]
            sub, asg = member.subscription, member.assignment
            assert str(sub.process_id) == process_id
            assert sub.client_tags == {"zone": instance.configs["client.tag.zone"]}
            assert sub.user_endpoint == instance.configs["application.server"]
            assert asg is not None
            assert set(asg.active_tasks) == {TaskId.parse(t) for t in active}
            assert set(asg.standby_tasks) == {TaskId.parse(t) for t in standby}
            sums = by_process.setdefault(process_id, {})
            for task, offset_sum in sub.task_offset_sums.items():
                sums.setdefault(str(task), set()).add(offset_sum)
        assert any({-2} in sums.values() for sums in by_process.values())
        assert by_process[first.process_id]
        # Each thread of a process sends the offset sums it read when it joined
        # (TaskManager.getTaskOffsetSums), so two threads that both report an unowned task
        # directory may have read its checkpoint at different moments; Kafka's leader keeps one
        # value per task and process (ClientState.addPreviousTasksAndOffsetSums, the last
        # consumer's wins). So the leader's logged sum of every task is one of the values the
        # process's threads sent, and it logs exactly the tasks they sent.
        logged = {pid: s for pid, s in _last_logged_sums(cluster).items() if s}
        assert set(logged) == {pid for pid, s in by_process.items() if s}
        for pid, sums in logged.items():
            assert set(sums) == set(by_process[pid]), pid
            for task, total in sums.items():
                assert total in by_process[pid][task], (pid, task, total, by_process[pid][task])

        with pytest.raises(LagInputError, match=r"group 'no-such-app': no such group"):
            read_streams_members(kafka_broker.bootstrap_servers, "no-such-app", 30_000)

        server = ["--bootstrap-server", kafka_broker.bootstrap_servers]
        assert lag_main(["members", *server, "--application-id", APP_ID, "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert {m["subscription"]["process_id"] for m in printed["members"]} == set(by_process)
        assert lag_main(["members", *server, "--application-id", "no-such-app"]) == 2
        assert "no such group" in capsys.readouterr().err
