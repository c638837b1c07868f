"""What only the PostgreSQL store meets: a server that is down, wrong credentials, a
database of another program or of a newer pi-agents, in-place upgrades of its
layout, read-only openings, and a connection the server drops: a read is made
again on a new connection, a write is either saved exactly once or fails saying so."""

from __future__ import annotations

import re
import socket
import threading

import msgspec
import psycopg
import pytest

from piagents.ai.messages import UserMessage
from piagents.store import postgres_layout
from piagents.store.base import (
    StoreError,
    StoreIncompatible,
    StoreNotFound,
    StoreReadOnly,
    StoreUnavailable,
)
from piagents.store.postgres import PostgresStore
from piagents.store.records import (
    InputRecord,
    MessageEntry,
    ProgramRecord,
    SessionRecord,
    new_program_id,
)
from piagents.store.url import location_of
from support import eventually


def an_input(i: str, **changes: object) -> InputRecord:
    fields: dict[str, object] = dict(
        id=i,
        root_id="r",
        recipient_id="s",
        sender_id=None,
        kind="input",
        delivery="followUp",
        text="hi",
        delivered=False,
    )
    fields.update(changes)
    return InputRecord(**fields)  # type: ignore[arg-type]


def run(url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    """`sql` on a connection of the test's own, behind the store's back."""
    with psycopg.connect(url, autocommit=True) as db:
        cur = db.execute(sql, args)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


def tables(url: str) -> list[str]:
    return [
        r[0]
        for r in run(
            url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
    ]


def end_connection(url: str, store: PostgresStore) -> None:
    """The server ends the store's connection (as a restart or a network cut does)."""
    pid = store.backend_pid
    run(url, "SELECT pg_terminate_backend(%s)", pid)
    eventually(
        lambda: not run(url, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", pid),
        what="the store's server process to end",
    )


# ---- opening -----------------------------------------------------------------------


def test_a_server_that_is_down_is_store_unavailable_naming_the_database() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://piagents:secret@127.0.0.1:{port}/pi"
    with pytest.raises(StoreUnavailable, match="cannot reach the PostgreSQL server") as raised:
        PostgresStore(url)
    message = str(raised.value)
    assert f"postgresql://piagents@127.0.0.1:{port}/pi" in message
    assert "secret" not in message  # the password is never shown


def test_wrong_credentials_are_a_clear_error_without_the_password(postgres_server) -> None:
    url = postgres_server.url("postgres", password="not-the-password")
    with pytest.raises(StoreUnavailable, match="refused the credentials") as raised:
        PostgresStore(url)
    assert "not-the-password" not in str(raised.value)
    assert location_of(url) in str(raised.value)


def test_a_database_that_does_not_exist_is_a_clear_error(postgres_server) -> None:
    with pytest.raises(StoreUnavailable, match=r"there is no such database.*createdb"):
        PostgresStore(postgres_server.url("no_such_database"))


def test_a_new_database_is_laid_out_at_this_schema_version(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    assert run(postgres_url, "SELECT version FROM piagents_schema") == [
        (postgres_layout.schema_version(),)
    ]
    assert {"sessions", "entries", "entry_blocks", "inputs", "programs"} <= set(
        tables(postgres_url)
    )


def test_a_database_of_another_program_is_refused_and_left_untouched(postgres_url: str) -> None:
    run(postgres_url, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    run(postgres_url, "INSERT INTO customers VALUES (1, 'ada')")
    with pytest.raises(StoreIncompatible, match=r"another program.*public\.customers"):
        PostgresStore(postgres_url)
    with pytest.raises(StoreIncompatible, match="another program"):
        PostgresStore(postgres_url, read_only=True)
    assert tables(postgres_url) == ["customers"]
    assert run(postgres_url, "SELECT * FROM customers") == [(1, "ada")]


def test_a_store_of_a_newer_schema_is_refused_before_anything_is_written(
    postgres_url: str,
) -> None:
    PostgresStore(postgres_url).close()
    run(postgres_url, "UPDATE piagents_schema SET version = 99")
    run(postgres_url, "DROP TABLE search_docs")  # what a newer layout might have done
    before = tables(postgres_url)
    location = re.escape(location_of(postgres_url))
    with pytest.raises(StoreIncompatible, match=f"{location} was written by a newer pi-agents"):
        PostgresStore(postgres_url)
    assert tables(postgres_url) == before
    assert run(postgres_url, "SELECT version FROM piagents_schema") == [(99,)]


def test_an_earlier_layout_is_upgraded_in_place_keeping_what_it_holds(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore(postgres_url)  # the layout of "this" pi-agents
    store.create_session(SessionRecord(id="old", cwd="/w"))
    store.close()
    # A later pi-agents, whose layout has one step more.
    later = [*postgres_layout.STEPS, ("CREATE INDEX sessions_cwd ON sessions (cwd)",)]
    monkeypatch.setattr(postgres_layout, "STEPS", later)

    reader = PostgresStore(postgres_url, read_only=True)  # upgraded first, then read
    assert reader.get_session("old") is not None
    reader.close()
    assert run(postgres_url, "SELECT version FROM piagents_schema") == [(len(later),)]
    assert run(postgres_url, "SELECT 1 FROM pg_indexes WHERE indexname = 'sessions_cwd'") == [(1,)]
    again = PostgresStore(postgres_url)  # nothing left to do
    assert [s.id for s in again.list_sessions()] == ["old"]
    again.close()


def test_programs_of_a_store_from_before_scopes_are_upgraded_and_read_as_scripts(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as first:  # the layout before Program kinds: version 1
        first.setattr(postgres_layout, "STEPS", postgres_layout.STEPS[:1])
        old = PostgresStore(postgres_url)
        old.create_session(SessionRecord(id="me", cwd="/"))
        old.close()
    script = ProgramRecord(id=new_program_id(), caller_id="me", root_id="me", code="return 1")
    body = msgspec.json.encode(
        {"id": script.id, "callerId": "me", "rootId": "me", "code": "return 1"}
    )
    run(
        postgres_url,
        "INSERT INTO programs (id, caller_id, root_id, state, body) VALUES (%s, %s, %s, %s, %s)",
        script.id,
        "me",
        "me",
        "running",
        body,
    )
    store = PostgresStore(postgres_url)
    try:
        assert store.get_program(script.id) == script
        assert [p.id for p in store.programs("me", kind="script")] == [script.id]
        assert store.programs("me", kind="scope") == []
        scope = ProgramRecord(
            id=new_program_id(), caller_id="me", root_id="me", code="", kind="scope"
        )
        store.add_program(scope)
        assert [p.kind for p in store.programs("me")] == ["scope", "script"]
        assert store.count_programs("me", kind="scope") == 1
    finally:
        store.close()


def test_read_only_where_there_is_no_store_yet_creates_nothing(postgres_url: str) -> None:
    with pytest.raises(StoreNotFound, match="no pi-agents store here yet"):
        PostgresStore(postgres_url, read_only=True)
    assert tables(postgres_url) == []


def test_a_store_opened_read_only_refuses_writes(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    reader = PostgresStore(postgres_url, read_only=True)
    with pytest.raises(StoreReadOnly):
        reader.create_session(SessionRecord(id="s", cwd="/"))
    assert reader.list_sessions() == []
    reader.close()


def test_two_runtimes_opening_one_new_database_at_once_lay_it_out_once(postgres_url: str) -> None:
    opened: list[PostgresStore] = []
    failures: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(PostgresStore(postgres_url))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert run(postgres_url, "SELECT count(*) FROM piagents_schema") == [(1,)]
    for s in opened:
        s.close()


# ---- a connection the server drops --------------------------------------------------


def test_a_read_after_the_connection_was_dropped_reconnects(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create_session(SessionRecord(id="s", cwd="/"))
    before = store.backend_pid
    end_connection(postgres_url, store)

    got = store.get_session("s")

    assert got is not None and got.id == "s"
    assert store.backend_pid != before
    store.close()


def test_writes_after_the_connection_was_dropped_are_saved_exactly_once(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    store.create_session(SessionRecord(id="s", cwd="/"))

    end_connection(postgres_url, store)
    store.add_input(an_input("i1"))
    end_connection(postgres_url, store)
    entry = MessageEntry(UserMessage.of("hello"))
    store.append("s", [entry])

    assert run(postgres_url, "SELECT id FROM inputs") == [("i1",)]
    assert store.entries("s") == [entry]
    assert [i.id for i in store.take_undelivered(["s"])] == ["i1"]
    store.close()


def kill_at_commit(url: str, table: str, event: str) -> None:
    """The next transaction that `event`s (INSERT, UPDATE) a row of `table` loses its
    connection as it commits, and is not saved: its COMMIT gets no answer."""
    run(url, "CREATE SEQUENCE IF NOT EXISTS kill_once")
    run(
        url,
        "CREATE OR REPLACE FUNCTION kill_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN IF nextval('kill_once') = 1 THEN "
        "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); END IF; "
        "RETURN NULL; END $$",
    )
    run(
        url,
        f"CREATE CONSTRAINT TRIGGER kill_at_commit AFTER {event} ON {table} "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION kill_at_commit()",
    )


def test_a_keyed_insert_whose_commit_went_unanswered_is_checked_and_saved_once(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    before = store.backend_pid
    kill_at_commit(postgres_url, "inputs", "INSERT")

    added = store.add_input(an_input("i1"))  # not saved at first: found so, done again

    assert store.backend_pid != before  # its first connection did end at COMMIT
    assert run(postgres_url, "SELECT last_value FROM kill_once") == [(2,)]  # two commits
    assert run(postgres_url, "SELECT id, seq FROM inputs") == [("i1", added.seq)]
    store.close()


def test_a_take_whose_commit_went_unanswered_is_checked_and_hands_over_once(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    store.add_input(an_input("i1"))
    kill_at_commit(postgres_url, "inputs", "UPDATE")

    # Not saved (the server ended before committing): found so, and taken again.
    assert [i.id for i in store.take_undelivered(["s"])] == ["i1"]
    assert store.take_undelivered(["s"]) == []
    assert run(postgres_url, "SELECT last_value FROM kill_once") == [(2,)]
    store.close()


def test_a_batch_whose_connection_was_dropped_fails_and_saves_nothing(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    lost = "during a batch: nothing of it was saved"
    with pytest.raises(StoreUnavailable, match=lost), store.batch():
        store.create_session(SessionRecord(id="a", cwd="/"))
        end_connection(postgres_url, store)
        store.create_session(SessionRecord(id="b", cwd="/"))
    assert store.list_sessions() == []  # and the store works again, on a new connection
    store.create_session(SessionRecord(id="a", cwd="/"))
    assert [s.id for s in store.list_sessions()] == ["a"]
    store.close()


def test_a_batch_on_a_connection_dropped_before_it_is_begun_on_a_new_one(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    before = store.backend_pid
    end_connection(postgres_url, store)  # nothing of the batch has been sent yet
    with store.batch():
        store.create_session(SessionRecord(id="a", cwd="/"))
        store.create_session(SessionRecord(id="b", cwd="/"))
    assert store.backend_pid != before
    assert sorted(s.id for s in store.list_sessions()) == ["a", "b"]
    store.close()


def statements_sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements every psycopg connection executes from now on (until the patch
    is undone), in order."""
    sent: list[str] = []
    real = psycopg.Connection.execute

    def execute(conn, query, params=None, **kw):  # type: ignore[no-untyped-def]
        sent.append(str(query))
        return real(conn, query, params, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    return sent


def test_a_batch_sends_its_own_commands_with_the_next_one(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three calls in a batch: BEGIN+SAVEPOINT, call, RELEASE+SAVEPOINT, call,
    RELEASE+SAVEPOINT, call, RELEASE+COMMIT: seven round trips, not eleven."""
    store = PostgresStore(postgres_url)
    sent = statements_sent(monkeypatch)
    with store.batch():
        store.create_session(SessionRecord(id="a", cwd="/"))
        store.add_input(an_input("i1", recipient_id="a", root_id="a"))
        store.create_session(SessionRecord(id="b", cwd="/"))
    monkeypatch.undo()
    controls = [q for q in sent if not q.startswith(("INSERT", "WITH", "SELECT"))]
    assert controls == [
        "BEGIN; SAVEPOINT inner1",
        "RELEASE SAVEPOINT inner1; SAVEPOINT inner1",
        "RELEASE SAVEPOINT inner1; SAVEPOINT inner1",
        "RELEASE SAVEPOINT inner1; COMMIT",
    ]
    assert len(sent) == 7
    assert sorted(s.id for s in store.list_sessions()) == ["a", "b"]
    store.close()


def test_an_atomic_batch_sends_no_savepoints(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same three calls in an atomic batch: BEGIN, call, call, call, COMMIT."""
    store = PostgresStore(postgres_url)
    sent = statements_sent(monkeypatch)
    with store.batch(atomic=True):
        store.create_session(SessionRecord(id="a", cwd="/"))
        store.add_input(an_input("i1", recipient_id="a", root_id="a"))
        store.create_session(SessionRecord(id="b", cwd="/"))
    monkeypatch.undo()
    controls = [q for q in sent if not q.startswith(("INSERT", "WITH", "SELECT"))]
    assert controls == ["BEGIN", "COMMIT"]
    assert len(sent) == 5
    assert sorted(s.id for s in store.list_sessions()) == ["a", "b"]
    store.close()


def test_after_a_refused_statement_an_atomic_batch_refuses_the_rest_at_once(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore(postgres_url)
    store.create_session(SessionRecord(id="a", cwd="/"))
    doomed = "nothing of the batch was saved"
    with pytest.raises(StoreError, match=doomed), store.batch(atomic=True):
        store.create_session(SessionRecord(id="b", cwd="/"))
        with pytest.raises(StoreError) as refused:  # the same id twice: caught
            store.create_session(SessionRecord(id="a", cwd="/"))
        assert "nothing of the batch" not in str(refused.value)  # the server's reason
        sent = statements_sent(monkeypatch)
        with pytest.raises(StoreError, match=doomed):
            store.get_session("a")  # a read, refused here: the server would too
        with pytest.raises(StoreError, match=doomed):
            store.create_session(SessionRecord(id="c", cwd="/"))
    monkeypatch.undo()
    assert sent == ["ROLLBACK"]  # nothing sent for the calls after the refused one
    assert [s.id for s in store.list_sessions()] == ["a"]
    store.create_session(SessionRecord(id="b", cwd="/"))  # the store is usable again
    assert sorted(s.id for s in store.list_sessions()) == ["a", "b"]
    store.close()


def test_an_atomic_batch_whose_connection_was_dropped_fails_and_saves_nothing(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    lost = "during a batch: nothing of it was saved"
    with pytest.raises(StoreUnavailable, match=lost), store.batch(atomic=True):
        store.create_session(SessionRecord(id="a", cwd="/"))
        end_connection(postgres_url, store)
        store.create_session(SessionRecord(id="b", cwd="/"))
    assert store.list_sessions() == []
    before = store.backend_pid
    end_connection(postgres_url, store)  # before the next batch's BEGIN: begun anew
    with store.batch(atomic=True):
        store.create_session(SessionRecord(id="a", cwd="/"))
    assert store.backend_pid != before
    assert [s.id for s in store.list_sessions()] == ["a"]
    store.close()


def test_inputs_taken_by_two_stores_at_once_are_each_taken_once(postgres_url: str) -> None:
    stores = [PostgresStore(postgres_url) for _ in range(3)]
    for i in range(60):
        stores[0].add_input(an_input(f"i{i}"))
    taken: list[list[str]] = [[] for _ in stores]

    def take(n: int) -> None:
        for _ in range(20):
            taken[n].extend(r.id for r in stores[n].take_undelivered(["s"]))

    threads = [threading.Thread(target=take, args=(n,)) for n in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [i for got in taken for i in got]
    assert sorted(everything) == sorted(f"i{i}" for i in range(60))  # none twice, none lost
    for s in stores:
        s.close()


# ---- a COMMIT that was saved, its answer lost --------------------------------------


@pytest.fixture
def proxied(postgres_server, postgres_url: str):
    """(a store reaching its database through a CommitProxy, the proxy)."""
    from commit_proxy import CommitProxy

    proxy = CommitProxy(("127.0.0.1", postgres_server.port))
    url = postgres_url.replace(f":{postgres_server.port}/", f":{proxy.port}/")
    store = PostgresStore(url)
    yield store, proxy
    store.close()
    proxy.close()


def test_a_keyed_insert_saved_but_unanswered_is_found_saved_not_done_twice(
    proxied, postgres_url: str
) -> None:
    store, proxy = proxied
    proxy.lose_answer_to(b"INSERT INTO inputs")  # one statement, its own transaction

    added = store.add_input(an_input("i1"))

    assert proxy.lost.is_set()  # the answer did not reach the store
    assert run(postgres_url, "SELECT id, seq FROM inputs") == [("i1", added.seq)]


def test_an_append_saved_but_unanswered_is_found_saved_not_appended_twice(
    proxied, postgres_url: str
) -> None:
    store, proxy = proxied
    store.create_session(SessionRecord(id="s", cwd="/"))
    entries = [MessageEntry(UserMessage.of(f"m{i}")) for i in range(3)]
    proxy.lose_answer_to(b"INSERT INTO entries")

    store.append("s", entries)

    assert proxy.lost.is_set()
    assert store.entries("s") == entries
    later = MessageEntry(UserMessage.of("later"))
    store.append("s", [later])  # the next seq follows on, no gap and no repeat
    assert run(postgres_url, "SELECT seq FROM entries ORDER BY seq") == [(0,), (1,), (2,), (3,)]


def test_a_compare_and_set_saved_but_unanswered_reports_it_was_applied_once(
    proxied, postgres_url: str
) -> None:
    import msgspec

    from piagents.store.records import GenerationRecord

    store, proxy = proxied
    g = GenerationRecord(
        id="g1",
        label="scout-1",
        definition="scout",
        root_id="r",
        owner_id="r",
        session_id="s",
        cwd="/w",
        task="look",
        placement="inline",
    )
    store.add_generation(g)
    ended = msgspec.structs.replace(g, state="ended", outcome="completed")
    proxy.lose_answer_to(b"COMMIT\x00")

    assert store.update_generation(ended, end=True, result=an_input("result"))

    assert proxy.lost.is_set()
    assert store.get_generation("g1") == ended
    assert run(postgres_url, "SELECT id FROM inputs") == [("result",)]  # its result, once
    assert not store.update_generation(ended, end=True, result=an_input("again"))


def test_a_take_saved_but_unanswered_hands_over_what_it_took_once(proxied) -> None:
    store, proxy = proxied
    store.add_input(an_input("i1"))
    store.add_input(an_input("i2"))
    proxy.lose_answer_to(b"COMMIT\x00")

    taken = store.take_undelivered(["s"])

    assert proxy.lost.is_set()
    assert [(i.id, i.delivered) for i in taken] == [("i1", True), ("i2", True)]
    assert store.take_undelivered(["s"]) == []  # neither lost nor handed over twice


def test_a_batch_saved_but_unanswered_fails_saying_it_may_have_been_saved(proxied) -> None:
    store, proxy = proxied
    proxy.lose_answer_to(b"COMMIT\x00")

    with pytest.raises(StoreUnavailable, match="may or may not have been saved"), store.batch():
        store.create_session(SessionRecord(id="a", cwd="/"))
        store.create_session(SessionRecord(id="b", cwd="/"))

    assert proxy.lost.is_set()
    assert {s.id for s in store.list_sessions()} == {"a", "b"}  # it was, this time


def test_a_row_locked_elsewhere_for_too_long_is_store_busy(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piagents.store import postgres_open
    from piagents.store.base import StoreBusy

    monkeypatch.setattr(postgres_open, "LOCK_TIMEOUT_MS", 200)
    store = PostgresStore(postgres_url)
    store.create_session(SessionRecord(id="s", cwd="/"))
    with psycopg.connect(postgres_url) as other:  # a transaction left open, holding the row
        other.execute("SELECT 1 FROM sessions WHERE id = 's' FOR UPDATE")
        with pytest.raises(StoreBusy, match="Try again"):
            store.append("s", [MessageEntry(UserMessage.of("hi"))])
    store.append("s", [MessageEntry(UserMessage.of("hi"))])  # works once it is released
    assert len(store.entries("s")) == 1
    store.close()


def test_text_with_nul_characters_is_kept_with_them_replaced(postgres_url: str) -> None:
    # PostgreSQL text cannot hold NUL: it becomes U+FFFD, the rest is kept.
    store = PostgresStore(postgres_url)
    store.add_input(an_input("i1", text="a\x00b", rendered="r\x00"))
    store.end_inputs(["i1"], "completed", "out\x00put")
    got = store.inputs()[0]
    assert (got.text, got.rendered, got.result) == ("a\ufffdb", "r\ufffd", "out\ufffdput")
    store.close()


# ---- many connections at once -------------------------------------------------------


def at_once(work, n: int) -> list[object]:
    """`work(i)` for i in range(n), in n threads let go together; their results."""
    go = threading.Barrier(n)
    results: list[object] = [None] * n

    def run_one(i: int) -> None:
        go.wait()
        try:
            results[i] = work(i)
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run_one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_appends_from_many_connections_to_one_session_each_get_their_own_seqs(
    postgres_url: str,
) -> None:
    stores = [PostgresStore(postgres_url) for _ in range(4)]
    stores[0].create_session(SessionRecord(id="s", cwd="/"))
    made = [[MessageEntry(UserMessage.of(f"{i}-{j}")) for j in range(150)] for i in range(4)]

    def append_all(i: int) -> None:
        for e in made[i]:
            stores[i].append("s", [e])

    assert at_once(append_all, 4) == [None] * 4
    got = stores[0].entries("s")
    assert sorted(e.id for e in got) == sorted(e.id for m in made for e in m)
    for m in made:  # each connection's own entries in the order it appended them
        mine = {e.id for e in m}
        assert [e for e in got if e.id in mine] == m
    seqs = run(postgres_url, "SELECT seq FROM entries ORDER BY seq")
    assert seqs == [(i,) for i in range(600)]
    assert run(postgres_url, "SELECT count(*) FROM entry_blocks") == [(1,)]  # 512 packed
    for s in stores:
        s.close()


def test_an_input_ended_from_many_connections_at_once_ends_once(postgres_url: str) -> None:
    stores = [PostgresStore(postgres_url) for _ in range(4)]
    stores[0].add_input(an_input("i1", has_result=True))

    ended = at_once(lambda i: stores[i].end_inputs(["i1"], "completed", f"by {i}"), 4)

    winners = [r for r in ended if r]
    assert len(winners) == 1
    assert stores[0].inputs()[0].result == winners[0][0].result  # type: ignore[index]
    for s in stores:
        s.close()


def test_a_generation_changed_from_many_connections_at_once_changes_once(
    postgres_url: str,
) -> None:
    import msgspec

    from piagents.store.records import GenerationRecord

    stores = [PostgresStore(postgres_url) for _ in range(4)]
    g = GenerationRecord(
        id="g1",
        label="scout-1",
        definition="scout",
        root_id="r",
        owner_id="r",
        session_id="s",
        cwd="/w",
        task="look",
        placement="inline",
    )
    stores[0].add_generation(g)

    def end(i: int) -> bool:
        done = msgspec.structs.replace(g, state="ended", outcome="completed", result=f"by {i}")
        return stores[i].update_generation(
            done, expect_state="starting", end=True, result=an_input(f"r{i}")
        )

    changed = at_once(end, 4)

    assert changed.count(True) == 1 and changed.count(False) == 3
    winner = changed.index(True)
    got = stores[0].get_generation("g1")
    assert got is not None and got.result == f"by {winner}"
    assert run(postgres_url, "SELECT id FROM inputs") == [(f"r{winner}",)]  # one result
    for s in stores:
        s.close()


# ---- a server that goes down and comes back ------------------------------------------


def test_a_server_that_goes_down_fails_operations_clearly_and_they_work_once_it_is_back(
    own_server,
) -> None:
    store = PostgresStore(own_server.database())
    store.create_session(SessionRecord(id="s", cwd="/"))
    own_server.halt()

    with pytest.raises(StoreUnavailable, match="cannot reach the PostgreSQL server"):
        store.get_session("s")
    with pytest.raises(StoreUnavailable, match="cannot reach the PostgreSQL server"):
        store.add_input(an_input("i1"))

    own_server.start(own_server.port)
    got = store.get_session("s")  # a new connection, once the server is back
    assert got is not None and got.id == "s"
    store.add_input(an_input("i1"))
    assert [i.id for i in store.inputs()] == ["i1"]  # the failed one was never saved
    store.close()
