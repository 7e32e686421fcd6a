"""What-if: the next cluster state as Kafka's group leader would see it after a change.

Starting from the cluster state of the last rebalance, :func:`apply_changes` adds new instances,
removes instances that shut down, kills instances that crash, bounces (restarts) instances and
changes ``num.standby.replicas``, and returns the input of the next rebalance. What each change
means follows what Kafka Streams reports in its subscription (``SubscriptionInfo``: the task
offset sums of every task directory it has) and how the leader turns that into
``ClientState`` (``addPreviousTasksAndOffsetSums``: an offset sum of ``Task.LATEST_OFFSET`` is a
previous active, any other a previous standby):

- ``add``: a new process id with no local state; it reports no tasks.
- ``remove`` (graceful shutdown) and ``kill`` (crash): the process is gone from the group. The
  next rebalance's input is the same for both: no surviving client runs the gone client's actives,
  the survivors keep their own states and lags. They differ in time, not in the decision: a crashed
  member is only dropped when ``session.timeout.ms`` expires, and its actives serve nobody until
  then (see :mod:`streams_assign.simulation.probing`).
- ``bounce`` (restart): the process comes back with its state directories. Its running actives
  were checkpointed on close, so they come back at lag 0, not running: no task is a previous
  active any more, every task it has state for is a previous standby.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any

from streams_assign.errors import PlanInputError
from streams_assign.model import (
    LATEST_OFFSET,
    AssignmentConfigs,
    ClientState,
    ClusterState,
    process_id_sort_key,
)

__all__ = ["Changes", "apply_changes", "new_client_ids", "resolve_client"]

#: Namespace of the process ids given to added instances (uuid5, so a plan is deterministic).
_NEW_CLIENT_NAMESPACE = uuid.UUID("6c0f3d0e-2b1a-5c7e-9f44-5f1b6a3c2d10")


@dataclass(frozen=True)
class Changes:
    """The changes to apply before the next rebalance.

    Attributes
    ----------
    add:
        Number of new instances (>= 0), each with ``capacity`` stream threads and no state.
    capacity:
        Stream threads of each added instance (>= 1); ``None`` takes the most common capacity
        of the current clients.
    zone:
        The ``client.tag.*`` value of the added instances for the first tag key of
        ``rack.aware.assignment.tags`` (``zone`` when none is configured), KIP-708.
    remove, kill, bounce:
        Process ids (or unique prefixes of them) of the instances that shut down, crash, or
        restart with their state directories.
    standbys:
        The new ``num.standby.replicas``, or ``None`` to keep it.
    add_ids:
        Process ids of the added instances, in order (``--add-id``; Kafka Streams keeps a
        process id in ``<state.dir>/<application.id>/kafka-streams-process-metadata``); the
        instances beyond them get deterministic uuid5 ids.
    """

    add: int = 0
    capacity: int | None = None
    zone: str | None = None
    remove: tuple[str, ...] = ()
    kill: tuple[str, ...] = ()
    bounce: tuple[str, ...] = ()
    standbys: int | None = None
    add_ids: tuple[str, ...] = ()


def resolve_client(cluster: ClusterState, given: str, option: str) -> str:
    """The process id a command-line value names: the whole id or a unique prefix of it.

    Parameters
    ----------
    cluster:
        The cluster state whose clients are searched.
    given:
        A process id, or the start of one (the tables show the first 8 hex digits), or else
        the end of one (the tables show the last 12 digits of sequential ids).
    option:
        The option that gave it (``--kill``), for the message.

    Raises
    ------
    PlanInputError
        When no client or more than one client matches, naming the option and the value.
    """
    wanted = given.strip().lower()
    ids = [client.id for client in cluster.clients]
    if wanted in ids:
        return wanted
    matches = [pid for pid in ids if wanted and pid.startswith(wanted)]
    if not matches:  # sequential test ids differ in their last digits
        matches = [pid for pid in ids if wanted and pid.endswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise PlanInputError(
            f"{option} {given!r}: no client has this process id (clients: "
            f"{', '.join(pid[:8] for pid in ids)})"
        )
    raise PlanInputError(
        f"{option} {given!r}: matches {len(matches)} clients ({', '.join(matches)}); "
        "give more of the process id"
    )


def new_client_ids(cluster: ClusterState, count: int, given: tuple[str, ...] = ()) -> list[str]:
    """Process ids for ``count`` added instances: ``given`` first, then deterministic uuid5 ids
    distinct from the current ones.

    Raises
    ------
    PlanInputError
        For a given id that is not a UUID, repeats, or is a current client's.
    """
    taken = {client.id for client in cluster.clients}
    ids: list[str] = []
    for value in given[:count]:
        try:
            pid = str(uuid.UUID(value.strip()))
        except ValueError:
            raise PlanInputError(f"--add-id {value!r}: not a UUID") from None
        if pid in taken:
            raise PlanInputError(f"--add-id {value!r}: already a client's process id")
        taken.add(pid)
        ids.append(pid)
    serial = 0
    while len(ids) < count:
        candidate = str(uuid.uuid5(_NEW_CLIENT_NAMESPACE, f"{cluster.name or ''}/{serial}"))
        serial += 1
        if candidate not in taken:
            taken.add(candidate)
            ids.append(candidate)
    return ids


def _common_capacity(cluster: ClusterState) -> int:
    counts: dict[int, int] = {}
    for client in cluster.clients:
        counts[client.capacity] = counts.get(client.capacity, 0) + 1
    return max(sorted(counts), key=lambda c: counts[c]) if counts else 1


def _bounced(client: ClientState) -> ClientState:
    lags = {task: (0 if lag == LATEST_OFFSET else lag) for task, lag in client.task_lags.items()}
    return replace(
        client,
        prev_active=(),
        prev_standby=tuple(sorted(lags)),
        task_lags=lags,
        task_offset_sums=None,
        consumers=None,
    )


def _resolve_all(cluster: ClusterState, changes: Changes) -> dict[str, str]:
    """Process id -> the option that names it; each client named at most once."""
    named: dict[str, str] = {}
    for option, values in (
        ("--remove", changes.remove),
        ("--kill", changes.kill),
        ("--bounce", changes.bounce),
    ):
        for value in values:
            pid = resolve_client(cluster, value, option)
            if pid in named:
                raise PlanInputError(
                    f"{option} {value!r}: client {pid} is already named by {named[pid]}"
                )
            named[pid] = option
    return named


def _without_clients(extensions: dict[str, Any], gone: set[str]) -> dict[str, Any]:
    result = dict(extensions)
    racks = result.get("client_racks")
    if isinstance(racks, dict):
        result["client_racks"] = {pid: rack for pid, rack in racks.items() if pid not in gone}
    return result


def apply_changes(cluster: ClusterState, changes: Changes) -> ClusterState:
    """The next rebalance's cluster state after ``changes``.

    Parameters
    ----------
    cluster:
        The cluster state of the last rebalance (what each client reported then).
    changes:
        What happens before the next rebalance.

    Returns
    -------
    ClusterState
        Clients in ``java.util.UUID`` order; the gone clients left out, the bounced ones with
        their state as previous standbys, the added ones with no state; the warnings of the input
        kept.

    Raises
    ------
    PlanInputError
        For an unknown or ambiguous client id, a client named twice, ``add`` < 0, ``capacity``
        < 1, ``standbys`` < 0, or a change that leaves no client.

    Notes
    -----
    Kafka's ``ClientState.addPreviousTasksAndOffsetSums`` and ``SubscriptionInfo``; the crash
    and the shutdown give the same input (see the module docstring).
    """
    if changes.add < 0:
        raise PlanInputError(f"--add must be >= 0 instances, got {changes.add}")
    if len(changes.add_ids) > changes.add:
        raise PlanInputError(
            f"--add-id given {len(changes.add_ids)} times for --add {changes.add} instance(s)"
        )
    if changes.capacity is not None and changes.capacity < 1:
        raise PlanInputError(f"--capacity must be >= 1 stream threads, got {changes.capacity}")
    if changes.standbys is not None and changes.standbys < 0:
        raise PlanInputError(f"--standbys must be >= 0, got {changes.standbys}")
    named = _resolve_all(cluster, changes)
    gone = {pid for pid, option in named.items() if option in ("--remove", "--kill")}
    clients = [
        _bounced(client) if named.get(client.id) == "--bounce" else client
        for client in cluster.clients
        if client.id not in gone
    ]
    capacity = changes.capacity if changes.capacity is not None else _common_capacity(cluster)
    tags: dict[str, str] = {}
    if changes.zone is not None:
        keys = cluster.configs.rack_aware_assignment_tags
        tags = {(keys[0] if keys else "zone"): changes.zone}
    clients.extend(
        ClientState(id=pid, capacity=capacity, tags=tags)
        for pid in new_client_ids(cluster, changes.add, changes.add_ids)
    )
    if not clients:
        raise PlanInputError("the changes leave no client: keep or add at least one instance")
    clients.sort(key=lambda c: process_id_sort_key(c.id))
    configs: AssignmentConfigs = cluster.configs
    if changes.standbys is not None:
        configs = replace(configs, num_standby_replicas=changes.standbys)
    return replace(
        cluster,
        configs=configs,
        clients=tuple(clients),
        extensions=_without_clients(dict(cluster.extensions), gone),
        client_racks=None
        if cluster.client_racks is None
        else {pid: rack for pid, rack in cluster.client_racks.items() if pid not in gone},
    )


def describe_changes(cluster: ClusterState, changes: Changes) -> list[str]:
    """One sentence per change, for the printed plan (ids as the tables show them)."""
    lines = []
    for option, verb in (
        ("remove", "shuts down"),
        ("kill", "crashes"),
        ("bounce", "restarts with its state directories"),
    ):
        for value in getattr(changes, option):
            lines.append(f"{resolve_client(cluster, value, '--' + option)[:8]} {verb}")
    if changes.add:
        capacity = changes.capacity if changes.capacity is not None else _common_capacity(cluster)
        zone = f" in zone {changes.zone}" if changes.zone else ""
        ids = ", ".join(pid[:8] for pid in changes.add_ids)
        named = f" (process ids {ids})" if ids else ""
        lines.append(
            f"{changes.add} new instance(s), {capacity} stream thread(s) each{zone}{named}"
        )
    if changes.standbys is not None:
        lines.append(
            f"num.standby.replicas {cluster.configs.num_standby_replicas} -> {changes.standbys}"
        )
    return lines
