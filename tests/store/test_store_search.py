"""What `list` searches, on every store: each session of a tree (and every root, when
asked) with its latest document matching a query, or matched by its ID, name or cwd.
A query is groups of terms: every term of one group must match, case-insensitively."""

from __future__ import annotations

from piagents.ai.messages import UserMessage
from piagents.store.base import Store
from piagents.store.records import CompactionEntry, MessageEntry, SearchHit, SessionRecord


def tree(store: Store) -> None:
    store.create_session(SessionRecord(id="root", cwd="/w", name="lead", created=1, updated=1))
    store.create_session(
        SessionRecord(
            id="c1", cwd="/w/api", name="alpha", owner_id="root", root_id="root", created=2
        )
    )
    store.create_session(
        SessionRecord(id="c2", cwd="/w", name="beta", owner_id="root", root_id="root", created=3)
    )
    store.create_session(SessionRecord(id="other", cwd="/x", name="solo", created=4, updated=4))
    store.append(
        "c1",
        [
            MessageEntry(UserMessage.of("Fix the Login bug"), timestamp=10),
            MessageEntry(UserMessage.of("now the login page, 100% done"), timestamp=20),
        ],
    )
    store.append(
        "c2", [CompactionEntry("summary: deployed the login_v2 service", None, 5, timestamp=30)]
    )
    store.append("other", [MessageEntry(UserMessage.of("login elsewhere"), timestamp=40)])


def hits(store: Store, query: list[list[str]], include_roots: bool = False) -> dict[str, object]:
    return {h.session_id: (h.text, h.timestamp) for h in store.search("root", include_roots, query)}


def test_the_latest_matching_document_of_each_session_of_the_tree(store: Store) -> None:
    tree(store)
    assert hits(store, [["login"]]) == {
        "c1": ("now the login page, 100% done", 20),
        "c2": ("summary: deployed the login_v2 service", 30),
    }


def test_terms_match_case_insensitively_and_all_of_a_group_in_one_document(store: Store) -> None:
    tree(store)
    assert hits(store, [["fix", "login"]]) == {"c1": ("Fix the Login bug", 10)}
    assert hits(store, [["fix", "page"]]) == {}  # in two documents, not one


def test_a_term_may_match_the_sessions_id_name_or_cwd_with_a_document(store: Store) -> None:
    tree(store)
    assert hits(store, [["alpha", "page"]]) == {"c1": ("now the login page, 100% done", 20)}
    # Matched by its cwd, name or ID alone: shown with its latest document.
    assert hits(store, [["api"]]) == {"c1": ("now the login page, 100% done", 20)}
    assert (
        hits(store, [["beta"]])
        == hits(store, [["c2"]])
        == {"c2": ("summary: deployed the login_v2 service", 30)}
    )
    assert hits(store, [["lead"]]) == {"root": (None, 1)}  # no document: when it was made


def test_groups_are_alternatives(store: Store) -> None:
    tree(store)
    assert set(hits(store, [["deployed"], ["bug"]])) == {"c1", "c2"}
    assert hits(store, []) == {}


def test_wildcards_in_a_term_are_plain_characters(store: Store) -> None:
    tree(store)
    assert set(hits(store, [["100%"]])) == {"c1"}
    assert set(hits(store, [["login_v2"]])) == {"c2"}
    assert hits(store, [["%"], ["_"]]) == {
        "c1": ("now the login page, 100% done", 20),
        "c2": ("summary: deployed the login_v2 service", 30),
    }


def test_roots_of_other_trees_are_searched_only_when_asked(store: Store) -> None:
    tree(store)
    assert "other" not in hits(store, [["elsewhere"]])
    assert hits(store, [["elsewhere"]], include_roots=True) == {"other": ("login elsewhere", 40)}


def test_a_hit_is_a_search_hit(store: Store) -> None:
    tree(store)
    assert store.search("root", False, [["bug"]]) == [SearchHit("c1", "Fix the Login bug", 10)]
