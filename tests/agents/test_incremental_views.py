"""What a spawn updates in place instead of rebuilding from the whole tree: the
short-ID maps, the directory's copy of a tree, its address indexes and the tree's
outstanding count. Each stays what a rebuild or a scan from scratch would give."""

import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from piagents.agents.address_index import AddressIndex
from piagents.agents.addressing import Candidate, ShortIds, resolve
from piagents.agents.directory import Directory
from piagents.agents.tree import Tree, Waiter
from piagents.store.records import SessionRecord
from piagents.store.sqlite import SQLiteStore

hex_ids = st.lists(st.text("0123456789abcdef", min_size=1, max_size=12), max_size=30)


@given(hex_ids, hex_ids)
def test_a_short_id_map_that_takes_ids_one_by_one_is_the_map_made_of_them_all(first, later):
    grown = ShortIds(first)
    asked = {i: grown[i] for i in first}  # made before the others arrive, then outgrown
    for i in later:
        grown.add(i)
    whole = ShortIds([*first, *later])
    assert dict(grown) == dict(whole)
    assert len(grown) == len(whole)
    assert set(asked) <= set(whole)


def test_an_id_added_between_two_neighbours_lengthens_theirs():
    shorts = ShortIds(["abcdefgh000", "abcdefgh999"])
    assert shorts["abcdefgh000"] == "abcdefgh0"
    shorts.add("abcdefgh001")
    assert shorts["abcdefgh000"] == "abcdefgh000"
    assert shorts["abcdefgh001"] == "abcdefgh001"
    assert shorts["abcdefgh999"] == "abcdefgh9"


def test_the_directory_takes_a_new_agent_into_the_maps_that_show_it(tmp_path):
    store = SQLiteStore(tmp_path / "store.db")
    root = SessionRecord(id="root0000-a", cwd="/")
    other = SessionRecord(id="root1111-b", cwd="/")
    for r in (root, other):
        store.create_session(r)
    directory = Directory(store)
    seen = SessionRecord(id="c0000000-0", cwd="/", owner_id=root.id, root_id=root.id)
    store.create_session(seen)
    directory.add(seen)
    root_map, child_map = directory.short_map(root), directory.short_map(seen)
    other_map = directory.short_map(other)

    late = SessionRecord(id="c0000000-1", cwd="/", owner_id=root.id, root_id=root.id)
    store.create_session(late)
    directory.add(late)

    assert directory.short_map(root) is root_map  # taken in, not rebuilt
    assert directory.short_map(seen) is child_map
    assert set(root_map) == {root.id, other.id, seen.id, late.id}
    assert set(child_map) == {root.id, seen.id, late.id}
    assert set(directory.short_map(other)) == {other.id, root.id}
    assert directory.short_map(other) is other_map
    rebuilt = Directory(store)
    for reader in (root, seen, other):
        assert dict(directory.short_map(reader)) == dict(rebuilt.short_map(reader))
    store.close()


def test_a_trees_outstanding_count_follows_its_open_inputs():
    tree = Tree("r", 3)
    tree.open("a", "i1", counts=True, has_result=True)
    tree.open("a", "i1", counts=True, has_result=True)  # the same input again
    tree.open("a", "i2", counts=True, has_result=False)
    tree.open("b", "i3", counts=False, has_result=True)
    tree.open("b", "i4", counts=True, has_result=False)
    assert tree.outstanding == 3
    tree.close("a", "i1")
    tree.close("a", "i1")
    tree.close("b", "i3")  # not counted
    tree.close("c", "i9")  # unknown
    assert tree.outstanding == 2 == sum(len(v) for v in tree.open_inputs.values())
    tree.close("a", "i2")
    tree.close("b", "i4")
    assert tree.outstanding == 0
    assert tree.open_inputs == {} and tree.pending_results == {}


def test_an_agent_of_a_program_is_shown_short_ids_unique_in_its_program_only(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    root = SessionRecord(id="root0000-0", cwd="/")
    store.create_session(root)

    def owned(id, owner=root.id, program=None):
        meta = {"program": program} if program else {}
        r = SessionRecord(id=id, cwd="/", owner_id=owner, root_id=root.id, meta=meta)
        store.create_session(r)
        return r

    p1 = owned("abcdefgh-1111", program="P")
    p2 = owned("abcdefgh-2222", program="P")
    plain = owned("abcdefgh-1112")  # outside the Program: p1's reader never sees it
    directory = Directory(store)
    for r in (p1, p2, plain):
        directory.add(r)
    root_map = directory.short_map(root)  # the user sees every group
    group_map, tree_map = directory.short_map(p1), directory.short_map(plain)
    assert root_map[p1.id] == "abcdefgh-1111"
    assert dict(group_map) == {p1.id: "abcdefgh-1", p2.id: "abcdefgh-2"}
    assert directory.short_map(p2) is group_map
    assert tree_map[p1.id] == "abcdefgh-1111" and tree_map[plain.id] == "abcdefgh-1112"

    sub = owned("abcdefgh-1113", owner=p1.id)  # spawned by a Program Agent: in its group
    directory.add(sub)
    assert directory.short_map(p1) is group_map  # taken in, not rebuilt
    assert dict(group_map) == {p1.id: "abcdefgh-1111", p2.id: "abcdefgh-2", sub.id: sub.id}
    rebuilt = Directory(store)
    for reader in (root, p1, sub, plain):
        assert dict(directory.short_map(reader)) == dict(rebuilt.short_map(reader))
    store.close()


def test_an_address_index_follows_renames():
    index = AddressIndex([SessionRecord(id="b1", cwd="/", name="x")])
    index.add(SessionRecord(id="a2", cwd="/", name="x"))
    index.add(SessionRecord(id="b3", cwd="/"))
    assert index.named("x") == ["b1", "a2"]
    assert index.prefixed("b") == ["b1", "b3"] and index.prefixed("") == ["a2", "b1", "b3"]
    index.add(SessionRecord(id="b1", cwd="/", name="y"))  # renamed
    index.add(SessionRecord(id="a2", cwd="/"))  # its name taken away
    assert index.named("x") == [] and index.named("y") == ["b1"]
    assert index.prefixed("b1") == ["b1"] and index.prefixed("c") == []


_names = st.sampled_from([None, "w", "x", "ab"])
_tree = st.lists(
    st.tuples(
        st.text("ab01", min_size=1, max_size=4),  # an ID's tail: shared prefixes are common
        _names,
        st.integers(0, 5),  # its owner: the root, or an earlier one
        st.sampled_from([None, None, "P", "Q"]),  # the Program that marks it, if any
    ),
    max_size=12,
    unique_by=lambda t: t[0],
)


@settings(max_examples=60, deadline=None)
@given(_tree, st.lists(st.tuples(st.integers(0, 13), _names), max_size=4), st.data())
def test_a_target_resolves_through_the_indexes_as_a_scan_of_what_the_reader_sees(
    members, renames, data
):
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "s.db")
        root = SessionRecord(id="ab-root", cwd="/", name="x")
        others = [SessionRecord(id="ab-other", cwd="/", name="w"), SessionRecord(id="b", cwd="/")]
        for r in (root, *others):
            store.create_session(r)
        directory = Directory(store)
        made: list[SessionRecord] = []
        for tail, name, owner, program in members:
            owner_id = made[owner - 1].id if 0 < owner <= len(made) else root.id
            meta = {"program": program} if program else {}
            r = SessionRecord(
                id=f"ab{tail}", cwd="/", name=name, owner_id=owner_id, root_id=root.id, meta=meta
            )
            store.create_session(r)
            directory.add(r)
            made.append(r)
        everyone = [root, *others, *made]
        for i, name in renames:  # renamed after the indexes were made
            directory.resolve(root, "x")
            if i < len(made):
                made[i] = replace(made[i], name=name)
                directory.add(made[i])
                everyone[3 + i] = made[i]
        for reader in everyone:
            seen = directory.visible(reader)
            targets = [r.id for r in everyone] + [r.id[:n] for r in everyone for n in (1, 2, 3)]
            targets += ["w", "x", "ab", "", "zz", data.draw(st.text("ab01-rotx", max_size=4))]
            for target in targets:
                by_scan = resolve(target, [Candidate(s.id, s.name) for s in seen]).matches
                by_index = directory.resolve(reader, target)
                assert [s.id for s in by_index] == [c.id for c in by_scan], (reader.id, target)
        store.close()


def test_the_directory_lists_an_owners_agents_oldest_first_as_they_are_made(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    root = SessionRecord(id="root0000-0", cwd="/")
    store.create_session(root)

    def owned(id, created, owner=root.id):
        r = SessionRecord(id=id, cwd="/", owner_id=owner, root_id=root.id, created=created)
        store.create_session(r)
        return r

    older, newer = owned("b-older", 1), owned("a-newer", 2)
    directory = Directory(store)  # these two read from the store
    assert [s.id for s in directory.owned(root.id, root.id)] == ["b-older", "a-newer"]
    late = owned("c-late", 3)
    grandchild = owned("d-grand", 4, owner=older.id)
    for r in (late, grandchild):
        directory.add(r)
    assert [s.id for s in directory.owned(root.id, root.id)] == ["b-older", "a-newer", "c-late"]
    assert [s.id for s in directory.owned(older.id, root.id)] == ["d-grand"]
    renamed = replace(newer, name="n")
    directory.add(renamed)  # changed in place: it keeps its place
    assert directory.owned(root.id, root.id)[1] == renamed
    assert directory.owned("nobody", root.id) == []
    store.close()


def test_a_session_taken_back_leaves_the_directory_and_its_maps(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    root = SessionRecord(id="root0000-0", cwd="/")
    store.create_session(root)
    kept = SessionRecord(id="abcdefgh-1", cwd="/", owner_id=root.id, root_id=root.id)
    gone = SessionRecord(id="abcdefgh-2", cwd="/", name="g", owner_id=root.id, root_id=root.id)
    directory = Directory(store)
    for r in (kept, gone):
        store.create_session(r)
        directory.add(r)
    assert directory.short_map(root)[kept.id] == "abcdefgh-1"
    assert [s.id for s in directory.resolve(root, "g")] == [gone.id]
    directory.owned(root.id, root.id)
    directory.remove(gone)
    assert gone.id not in directory.tree(root.id)
    assert [s.id for s in directory.owned(root.id, root.id)] == [kept.id]
    assert directory.resolve(root, "g") == []
    assert dict(directory.short_map(root)) == {root.id: "root0000", kept.id: "abcdefgh"}
    directory.remove(gone)  # taken back once only
    store.close()


def test_a_wait_is_settled_when_its_last_pending_target_ends_even_one_that_had_none_at_first():
    tree = Tree("r", 3)
    tree.open("a", "i1", counts=True, has_result=True)
    tree.open("b", "i2", counts=True, has_result=True)
    waiter = Waiter("r", frozenset({"a", "b", "c"}), unsettled={"a", "b"})
    tree.close("a", "i1")
    assert not waiter.settled("a", tree.pending)
    tree.open("c", "i3", counts=True, has_result=True)  # a target given work meanwhile
    tree.close("b", "i2")
    assert not waiter.settled("b", tree.pending)  # none left unsettled, but c is pending
    tree.open("b", "i4", counts=True, has_result=True)
    tree.close("c", "i3")
    assert not waiter.settled("c", tree.pending)
    assert not waiter.settled("b", tree.pending)  # b is pending again: not its end
    tree.close("b", "i4")
    assert waiter.settled("b", tree.pending)


_op = st.one_of(
    st.tuples(st.just("spawn"), st.sampled_from(["root", "c0"]), _names, st.booleans()),
    st.tuples(st.just("rename"), st.integers(0, 20), _names, st.booleans()),
    st.tuples(st.just("take back"), st.integers(0, 20), _names, st.booleans()),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_op, max_size=25))
def test_a_sibling_name_is_found_in_memory_as_the_store_would_find_it(ops):
    """A spawn checks its name in the directory's index, kept in step with spawns,
    renames (a Program's mark among them) and spawns taken back: it names the Agent the
    store's newest record of that name would, outside the caller's Programs, also when
    a rename gave two Agents one name and one of them gives it up."""
    from piagents.agents.program_members import program_mark

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "s.db")
        root = SessionRecord(id="root", cwd="/")
        store.create_session(root)
        directory = Directory(store)
        c0 = SessionRecord(id="c0", cwd="/", owner_id="root", root_id="root", created=1, updated=1)
        store.create_session(c0)
        directory.add(c0)
        made: list[SessionRecord] = [c0]
        assert directory.named("root", "root", "w") is None  # the index is made now
        for step, (kind, arg, name, in_program) in enumerate(ops, start=2):
            meta = {"program": "P"} if in_program else {}
            if kind == "spawn":
                record = SessionRecord(
                    id=f"s{step}",
                    cwd="/",
                    name=name,
                    owner_id=arg,
                    root_id="root",
                    created=step,
                    updated=step,
                    meta=meta,
                )
                store.create_session(record)
                directory.add(record)
                made.append(record)
            elif kind == "rename":
                old = made[arg % len(made)]
                record = replace(old, name=name, meta=meta, updated=step)
                made[arg % len(made)] = record
                directory.add(record)
            elif len(made) > 1:
                gone = made.pop(1 + arg % (len(made) - 1))
                directory.remove(gone)
            for owner in ("root", "c0"):
                for each in ("w", "x", "ab"):
                    expected = [  # the newest first, as the store orders them
                        r
                        for r in sorted(made, key=lambda r: r.updated, reverse=True)
                        if r.owner_id == owner and r.name == each and program_mark(r) is None
                    ]
                    found = directory.named(owner, "root", each)
                    assert (found.id if found else None) == (
                        expected[0].id if expected else None
                    ), (owner, each)
        store.close()
