"""A sibling found by name: what spawn's uniqueness check asks, on every store."""

from piagents.store.records import SessionRecord


def child(i, name, owner="r", **extra):
    return SessionRecord(id=f"c{i}", cwd="/", name=name, owner_id=owner, root_id="r", **extra)


def test_a_session_is_found_by_its_owner_and_its_name_only(store):
    store.create_session(SessionRecord(id="r", cwd="/", name="w1"))  # a root of that name
    store.create_session(child(1, "w1"))
    store.create_session(child(2, "w2"))
    store.create_session(child(3, "w1", owner="c2"))  # a grandchild of that name

    assert store.session_named("r", "w1") == store.get_session("c1")
    assert store.session_named("c2", "w1") == store.get_session("c3")
    assert store.session_named("r", "w3") is None
    assert store.session_named("c1", "w1") is None


def test_of_several_siblings_of_one_name_the_newest_is_found_as_the_list_finds_it(store):
    store.create_session(child(1, "twin", created=5, updated=5))
    store.create_session(child(2, "twin", created=9, updated=9))
    store.create_session(child(3, "twin", created=7, updated=7))
    store.create_session(child(4, "twin", created=9, updated=9))  # same time: later row wins

    first = next(s for s in store.list_sessions(owner_id="r") if s.name == "twin")
    assert store.session_named("r", "twin") == first == store.get_session("c4")
