"""Who exists, as one runtime sees it: the trees loaded here and every root.

Owned Agents are created only by the runtime that holds their tree, so its
copy of a loaded tree is authoritative. Roots can be opened by any process
on the home; their list is re-read when the store says it changed.

Visibility keeps Programs apart (`program_members`): an Agent sees only the Agents
of its own group. Short IDs are unique among what the reader sees (spec §1): an Agent
of a Program is shown its group's Agents by the shortest prefixes no other Agent of
the group has. Every other Agent of the tree, and the user through its root (the
task panel, `/agents`: every group), is shown prefixes unique in the whole tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from piagents.agents.address_index import AddressIndex
from piagents.agents.addressing import ShortIds
from piagents.agents.program_members import program_mark, program_of
from piagents.store.base import Store
from piagents.store.records import SessionRecord

ROOTS_MAX_AGE_S = 2.0  # also re-read now and then, for renames in other processes


class Directory:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.version = 0
        self._trees: dict[str, dict[str, SessionRecord]] = {}
        self._roots: dict[str, SessionRecord] = {}
        self._roots_mark: tuple[int, int] | None = None
        self._roots_read = 0.0
        # Short-ID maps by (root ID, who reads: "roots", "tree" or a Program's ID).
        self._shorts: dict[tuple[str, str], tuple[int, ShortIds]] = {}
        self._programs: dict[str, str | None] = {}  # the Program of each owned record seen
        self._indexes: dict[str, AddressIndex] = {}  # of a tree's owned records, once asked
        # A tree's owned records by owner, oldest first, once asked.
        self._owners: dict[str, dict[str, dict[str, SessionRecord]]] = {}
        self._roots_index: tuple[dict[str, SessionRecord], AddressIndex] | None = None
        # A tree's named owned records outside Programs by (owner ID, name), once asked.
        self._names: dict[str, dict[tuple[str, str], SessionRecord]] = {}

    def tree(self, root_id: str) -> dict[str, SessionRecord]:
        """The owned records of a tree, by ID."""
        tree = self._trees.get(root_id)
        if tree is None:
            tree = {s.id: s for s in self.store.list_sessions(root_id=root_id)}
            self._trees[root_id] = tree
        return tree

    def owned(self, owner_id: str, root_id: str) -> list[SessionRecord]:
        """The records `owner_id` owns in the tree of `root_id`, oldest first: read from
        memory, so a `wait` in a tree of thousands does not read them all again."""
        owners = self._owners.get(root_id)
        if owners is None:
            owners = {}
            for s in sorted(self.tree(root_id).values(), key=lambda s: s.created):
                if s.owner_id is not None:
                    owners.setdefault(s.owner_id, {})[s.id] = s
            self._owners[root_id] = owners
        return list(owners.get(owner_id, {}).values())

    def named(self, owner_id: str, root_id: str, name: str) -> SessionRecord | None:
        """The Agent `owner_id` owns in the tree of `root_id` called `name`, outside its
        Programs (whose Agents may share a name with one of its own): from memory, so a
        spawn checks its name without a look at the store. Of two with one name (a
        rename made them so), the one changed last, as the store would order them."""
        names = self._names.get(root_id)
        if names is None:
            names = {}
            # Oldest first, so the newest of a name is the one kept (a tree read from the
            # store comes newest first: reversed, a tie keeps the store's order too).
            tree = self.tree(root_id)
            for s in sorted(reversed(tree.values()), key=_age):
                if _named_here(s):
                    names[(s.owner_id, s.name)] = s  # type: ignore[index]
            self._names[root_id] = names
        return names.get((owner_id, name))

    def _renamed(self, old: SessionRecord | None, new: SessionRecord | None) -> None:
        """Keep a tree's name index (if made) in step with one record's change."""
        record = new or old
        assert record is not None and record.root_id is not None
        names = self._names.get(record.root_id)
        if names is None:
            return
        if new is not None and _named_here(new):
            key_new: tuple[str, str] = (new.owner_id, new.name)  # type: ignore[assignment]
            holder = names.get(key_new)
            if holder is None or holder.id == new.id or _newer(new, holder):
                names[key_new] = new
        if old is None or not _named_here(old):
            return
        key: tuple[str, str] = (old.owner_id, old.name)  # type: ignore[assignment]
        held = names.get(key)
        if held is None or held.id != old.id or held is new:
            return
        # It gave up the name: another of that name (a rename made two) holds it now.
        others = [
            s
            for s in self.tree(record.root_id).values()
            if s.id != old.id and _named_here(s) and (s.owner_id, s.name) == key
        ]
        if others:
            names[key] = max(others, key=_age)
        else:
            del names[key]

    def forget(self, root_id: str) -> None:
        self._names.pop(root_id, None)
        self._indexes.pop(root_id, None)
        self._owners.pop(root_id, None)
        for session_id in self._trees.pop(root_id, {}):
            self._programs.pop(session_id, None)

    def program_of(self, record: SessionRecord) -> str | None:
        """The Program `record` belongs to (None: none); a root belongs to none."""
        if record.is_root or record.root_id is None:
            return None
        known = self._programs.get(record.id, "")
        if known != "":
            return known
        program = program_of(record, self.tree(record.root_id))
        self._programs[record.id] = program
        return program

    def roots(self) -> dict[str, SessionRecord]:
        now = time.monotonic()
        if now - self._roots_read > 0.05:  # at most one look at the store per 50 ms
            mark = self.store.roots_mark()
            if mark != self._roots_mark or now - self._roots_read > ROOTS_MAX_AGE_S:
                self._roots = {s.id: s for s in self.store.list_sessions(roots_only=True)}
                if mark != self._roots_mark:
                    self.version += 1
                self._roots_mark = mark
            self._roots_read = now
        return self._roots

    def get(self, session_id: str, root_id: str) -> SessionRecord | None:
        if session_id == root_id:
            return self.roots().get(session_id) or self.store.get_session(session_id)
        return self.tree(root_id).get(session_id)

    def add(self, record: SessionRecord) -> None:
        """A session was created or changed (renamed, marked) by this runtime."""
        self._programs.pop(record.id, None)  # its mark is read again when next asked
        if record.is_root:
            self._roots[record.id] = record
            if self._roots_index is not None and self._roots_index[0] is self._roots:
                self._roots_index[1].add(record)
        elif record.root_id is not None:
            tree = self.tree(record.root_id)
            self._renamed(tree.get(record.id), record)
            tree[record.id] = record
            index = self._indexes.get(record.root_id)
            if index is not None:
                index.add(record)
            owners = self._owners.get(record.root_id)
            if owners is not None and record.owner_id is not None:
                owners.setdefault(record.owner_id, {})[record.id] = record
        self.version += 1
        # The short-ID maps it belongs to take it in place, rather than being rebuilt
        # from the whole tree at the next look: a spawn costs the same in any tree.
        for key, (version, mapping) in list(self._shorts.items()):
            if version != self.version - 1:
                continue  # stale already: rebuilt when next asked for
            root_id, readers = key
            if readers not in ("roots", "tree"):  # a Program's group: its own Agents only
                if record.root_id == root_id and self.program_of(record) == readers:
                    mapping.add(record.id)
            elif (
                record.root_id == root_id
                or record.id == root_id
                or (readers == "roots" and record.is_root)
            ):
                mapping.add(record.id)
            self._shorts[key] = (self.version, mapping)

    def remove(self, record: SessionRecord) -> None:
        """An owned session made here was taken back (its spawn failed)."""
        if record.root_id is None or record.id not in self._trees.get(record.root_id, {}):
            return
        self._renamed(self._trees[record.root_id].pop(record.id), None)
        self._programs.pop(record.id, None)
        self._indexes.pop(record.root_id, None)  # made again when next asked
        owners = self._owners.get(record.root_id, {})
        owners.get(record.owner_id or "", {}).pop(record.id, None)
        self.version += 1  # every short-ID map is made again

    def visible(self, reader: SessionRecord) -> list[SessionRecord]:
        """The reader's tree, plus other roots when the reader is a root; not the reader.
        Only Agents of the reader's own Program (or of none) are in it."""
        root_id = reader.root_id or reader.id
        group = self.program_of(reader)
        owned = self.tree(root_id)
        members = [s for s in owned.values() if self.program_of(s) == group]
        if group is not None:  # a Program's Agents see one another, nothing else
            return [s for s in members if s.id != reader.id]
        seen: dict[str, SessionRecord] = {}
        roots = self.roots()
        root = roots.get(root_id) or self.store.get_session(root_id)
        if root is not None:
            seen[root.id] = root
        seen.update((s.id, s) for s in members)
        if reader.is_root:
            for rid, record in roots.items():
                seen.setdefault(rid, record)
        seen.pop(reader.id, None)
        return list(seen.values())

    def resolve(self, reader: SessionRecord, target: str) -> list[SessionRecord]:
        """What `target` names among what `reader` sees (`visible`), as
        `addressing.resolve` tells: an ID, else the Agents of that name, else those
        whose ID it begins; several in the order `visible` gives. Found through the
        address indexes: the cost does not grow with the Agents it does not name."""
        root_id = reader.root_id or reader.id
        group = self.program_of(reader)
        owned = self.tree(root_id)
        roots: dict[str, SessionRecord] = {}
        root: SessionRecord | None = None
        if group is None:
            roots = self.roots()
            root = roots.get(root_id) or self.store.get_session(root_id)
        others = roots if reader.is_root else {}

        def seen(session_id: str) -> SessionRecord | None:
            if session_id == reader.id:
                return None
            record = owned.get(session_id)
            if record is not None:
                return record if self.program_of(record) == group else None
            if root is not None and session_id == root.id:
                return root
            return others.get(session_id)

        exact = seen(target)
        if exact is not None:
            return [exact]
        indexes = [self._index(root_id)]
        if others:
            indexes.append(self._roots_indexed(others))
        named = [root.id] if root is not None and root.name == target else []
        found = self._seen(seen, [*(i.named(target) for i in indexes), named])
        if not found and target:
            prefixed = [root.id] if root is not None and root.id.startswith(target) else []
            found = self._seen(seen, [*(i.prefixed(target) for i in indexes), prefixed])
        if len(found) <= 1:
            return list(found.values())
        order = {s.id: n for n, s in enumerate(self.visible(reader))}
        return sorted(found.values(), key=lambda s: order[s.id])

    @staticmethod
    def _seen(
        seen: Callable[[str], SessionRecord | None], lists: list[list[str]]
    ) -> dict[str, SessionRecord]:
        """The records of these IDs the reader sees, each once."""
        found: dict[str, SessionRecord] = {}
        for ids in lists:
            for session_id in ids:
                record = seen(session_id)
                if record is not None:
                    found[session_id] = record
        return found

    def _index(self, root_id: str) -> AddressIndex:
        index = self._indexes.get(root_id)
        if index is None:
            index = self._indexes[root_id] = AddressIndex(self.tree(root_id).values())
        return index

    def _roots_indexed(self, roots: dict[str, SessionRecord]) -> AddressIndex:
        """The index of the roots, made again when their list was read again."""
        if self._roots_index is None or self._roots_index[0] is not roots:
            self._roots_index = (roots, AddressIndex(roots.values()))
        return self._roots_index[1]

    def short_map(self, reader: SessionRecord) -> ShortIds:
        """Short IDs as the reader sees them. Every owned Agent of a tree outside
        Programs is given the same set (the tree), every root the tree plus all roots,
        and every Agent of a Program its group (itself included), so maps are shared."""
        root_id = reader.root_id or reader.id
        group = self.program_of(reader)
        readers = group if group is not None else ("roots" if reader.is_root else "tree")
        key = (root_id, readers)
        if reader.is_root:
            self.roots()  # may bump the version
        cached = self._shorts.get(key)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        if group is not None:
            ids = [i for i, s in self.tree(root_id).items() if self.program_of(s) == group]
        else:
            ids = [root_id, *self.tree(root_id)]
        if reader.is_root:
            ids.extend(self.roots())
        mapping = ShortIds(ids)
        self._shorts[key] = (self.version, mapping)
        return mapping


def _named_here(record: SessionRecord) -> bool:
    """An owned record a sibling's name must not repeat: named, and not a Program's."""
    return record.owner_id is not None and record.name is not None and program_mark(record) is None


def _age(record: SessionRecord) -> tuple[int, int]:
    return record.updated, record.created


def _newer(a: SessionRecord, b: SessionRecord) -> bool:
    return _age(a) >= _age(b)
