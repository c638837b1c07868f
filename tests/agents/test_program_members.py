"""Which Program an Agent belongs to (agents/program_members.py): its own mark, else its
nearest marked owner's; Agents of no Program belong to None."""

from piagents.agents.program_members import marked, program_mark, program_of
from piagents.store.records import SessionRecord


def record(id, owner, program=None):
    meta = {"program": program} if program else {}
    return SessionRecord(id=id, cwd="/", name=id, owner_id=owner, root_id="root", meta=meta)


def test_an_agent_belongs_to_its_own_mark_or_its_nearest_marked_owners():
    owned = {
        r.id: r
        for r in (
            record("mine", "root"),
            record("p", "root", program="P1"),
            record("sub", "p"),
            record("inner", "sub", program="P2"),  # a Program run by an Agent of P1
            record("deep", "inner"),
        )
    }

    assert program_of(owned["mine"], owned) is None
    assert program_of(owned["p"], owned) == "P1"
    assert program_of(owned["sub"], owned) == "P1"
    assert program_of(owned["inner"], owned) == "P2"
    assert program_of(owned["deep"], owned) == "P2"


def test_a_mark_is_added_to_the_meta_it_keeps():
    r = SessionRecord(id="a", cwd="/", owner_id="root", meta={"agentApi": "agents"})

    assert marked(r, "P1") == {"agentApi": "agents", "program": "P1"}
    assert program_mark(r) is None
    assert program_mark(record("b", "root", program="P1")) == "P1"
