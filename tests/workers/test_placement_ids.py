"""How placements are named (DBOS runs each workflow id once) and where DBOS keeps them."""

from __future__ import annotations

from piagents.store.base import WaitingRoot
from piagents.workers.placement_ids import QUEUED, system_database_url, workflow_id


def test_a_placement_is_named_by_its_root_its_first_open_input_its_lapsed_holder_and_starter() -> (
    None
):
    fresh = WaitingRoot("r1", "i1", None)
    assert workflow_id(fresh, "w1") == "root:r1:i1:free:w1"
    assert workflow_id(fresh, QUEUED) == "root:r1:i1:free:queue"
    # A takeover from a worker that died is a need of its own, not the placement that died.
    assert workflow_id(WaitingRoot("r1", "i1", "dead"), "w1") == "root:r1:i1:dead:w1"
    assert workflow_id(WaitingRoot("r1", "i2", None), "w1") != workflow_id(fresh, "w1")


def test_dbos_keeps_its_tables_in_a_database_of_its_own_beside_the_stores() -> None:
    url = "postgresql://u:pw@db.example:5433/agents?sslmode=require"
    assert (
        system_database_url(url) == "postgresql://u:pw@db.example:5433/agents_dbos?sslmode=require"
    )
    assert system_database_url("postgresql://u@h/") == "postgresql://u@h/postgres_dbos"
