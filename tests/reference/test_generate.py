"""The random state generator: replayable, valid, and covering what the differential needs."""

from __future__ import annotations

import random
import uuid

from devtools.generators.cluster_states import SITUATIONS, random_cluster_state
from streams_assign.formats.cluster_state import parse_cluster_state


def _draw(seed: int, count: int, **options: object) -> list[dict]:
    rng = random.Random(seed)
    return [random_cluster_state(rng, **options) for _ in range(count)]  # type: ignore[arg-type]


def test_same_seed_gives_the_same_states() -> None:
    assert _draw(7, 20, threads=True, tags=True) == _draw(7, 20, threads=True, tags=True)


def test_every_state_is_a_valid_cluster_state() -> None:
    options = [{}, {"tags": True}, {"threads": True, "revocation": True}, {"racks": "min_traffic"}]
    for i, option in enumerate(options):
        for document in _draw(i, 50, **option):
            parse_cluster_state(document)


def test_draws_cover_situations_sentinels_and_signed_uuid_halves() -> None:
    documents = _draw(3, 400)
    situations = {d["description"].split()[-1] for d in documents}
    lags = {lag for d in documents for c in d["clients"] for lag in c["task_lags"].values()}
    highs = {uuid.UUID(c["id"]).int >> 127 for d in documents for c in d["clients"]}
    assert situations == set(SITUATIONS)
    assert {-2, -3} <= lags
    assert highs == {0, 1}, "process ids must fall on both sides of the signed order"
    assert any(
        d["configs"]["acceptable_recovery_lag"] == 9_223_372_036_854_775_807 for d in documents
    )
