"""The PostgreSQL store (issue 14) against its floor and against SQLite, in one run.

Starts a throwaway server of its own (`piagents.testing_postgres`: initdb / pg_ctl
in a temp dir, loopback TCP; the benches and the tests share that code), with
pg_stat_statements loaded so statements can be counted. Every measurement goes
over the same kind of connection the store makes: loopback TCP, or `--socket` for
the Unix socket.

    floor       one ~500-byte row committed: an INSERT in autocommit (one round
                trip, its own transaction) and BEGIN / INSERT / COMMIT (three)
    append      `store.append(session, [one MessageEntry])`, as a turn commits an
                entry, on PostgreSQL and on SQLite (the home's file); statements
                per append counted on both (pg_stat_statements; sqlite3's trace)
    turn        `prompt()` with 3 `ls` calls (bench_turn's parallel layout), per
                committed entry, with the statements per prompt on both stores
    fanout      bench_fanout's 100 x 10 fan-out (plain; `--tools`: also tools),
                SQLite and PostgreSQL alternating, each in a fresh process

Targets: append <= 3x the floor (the autocommit INSERT); fan-out <= 2x SQLite.
`--durable` runs the server with its default fsync and synchronous_commit (the
tests' server turns both off). `--rtt MS` puts `latency_proxy.py` between the
store and the server, adding MS of round trip (a database on another machine).

    python bench/bench_postgres.py [--quick] [--reps N] [--only floor,append,turn,fanout]
"""

from __future__ import annotations

import asyncio
import json
import socket as socket_module
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    common_args,
    emit,
    machine,
    note,
    ratio_row,
    result,
    run_json,
    temp_home,
)
from bench_fanout import run_ours
from bench_reopen import messages
from bench_turn import make_route

import piagents
from piagents.harness.session import Session
from piagents.store.base import Store
from piagents.store.postgres import PostgresStore
from piagents.store.records import MessageEntry
from piagents.store.sqlite import SQLiteStore
from piagents.testing_postgres import PostgresServer, binaries

APPEND_TARGET = 3.0
FANOUT_TARGET = 2.0
ROW_BYTES = 500


def body(i: int) -> str:
    line = {"run": "run-0001", "agent": "sub42", "step": i, "kind": "tool_result", "pad": ""}
    line["pad"] = "x" * (ROW_BYTES - len(json.dumps(line)))
    return json.dumps(line)


@contextmanager
def server(durable: bool) -> Iterator[PostgresServer]:
    bin_dir = binaries()
    if bin_dir is None:
        raise SystemExit("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    pg = PostgresServer(bin_dir, durable=durable)
    try:
        pg.start()
        with pg.admin() as db:
            version = db.execute("SHOW server_version").fetchone()
        note(f"postgres {version[0] if version else '?'} in {pg.dir}, port {pg.port}")
        yield pg
    finally:
        pg.stop()


class StatementCount:
    """Statements the store sends (every `execute` on a psycopg connection: one round
    trip each, BEGIN and COMMIT included, which pg_stat_statements does not count)."""

    def __init__(self) -> None:
        import psycopg

        self.seen: Counter[str] = Counter()
        self._cls = psycopg.Connection
        self._orig = psycopg.Connection.execute
        seen, orig = self.seen, self._orig

        def execute(conn: Any, query: Any, params: Any = None, **kw: Any) -> Any:
            seen[str(query)[:80]] += 1
            return orig(conn, query, params, **kw)

        self._counting = execute

    def __enter__(self) -> StatementCount:
        self._cls.execute = self._counting  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self._cls.execute = self._orig  # type: ignore[method-assign]

    def top(self, n: int) -> list[tuple[str, int]]:
        return self.seen.most_common(n)


PROXY_PORT: int | None = None  # `--rtt`: the latency proxy's port


def database(pg: PostgresServer, socket: bool) -> tuple[str, str]:
    """A fresh database: its URL (TCP or Unix socket, or through the latency proxy)
    and name."""
    url = pg.database()
    name = url.rsplit("/", 1)[1]
    if PROXY_PORT is not None:
        return url.replace(f":{pg.port}/", f":{PROXY_PORT}/"), name
    return (pg.socket_url(name) if socket else url), name


@contextmanager
def latency_proxy(pg: PostgresServer, rtt_ms: float) -> Iterator[None]:
    """`latency_proxy.py` in front of the server while inside (nothing for 0 ms)."""
    global PROXY_PORT
    if rtt_ms <= 0:
        yield
        return
    with socket_module.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proxy = subprocess.Popen(
        [sys.executable, str(BENCH_DIR / "latency_proxy.py"), str(port), str(pg.port),
         str(rtt_ms)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == "ready"
        PROXY_PORT = port
        yield
    finally:
        PROXY_PORT = None
        proxy.kill()
        proxy.wait()


def timed(fn: Callable[[int], None], n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


# ---- floor and append ------------------------------------------------------------


def paired(pg: PostgresServer, socket: bool, blocks: int, per_block: int) -> dict[str, Any]:
    """The floor and the store's append in alternating blocks over one run, so both
    see the same load (the machine is shared): per block, the median of each; the
    ratio is taken per block."""
    import psycopg

    url, _ = database(pg, socket)
    floor_url, _ = database(pg, socket)
    n = blocks * per_block
    rows = [body(i) for i in range(n + 200)]
    with psycopg.connect(floor_url, autocommit=True) as db, StatementCount() as count:
        db.execute("CREATE TABLE log (id bigserial PRIMARY KEY, body text NOT NULL)")
        store = PostgresStore(url)
        session = Session.create(store, cwd="/tmp", model="faux/function")
        stream = messages(1_700_000_000_000)
        parent: str | None = None
        entries = []
        for _ in range(n + 200):
            e = MessageEntry(next(stream), parent_id=parent)
            entries.append(e)
            parent = e.id

        def single(i: int) -> None:
            db.execute("INSERT INTO log (body) VALUES (%s)", (rows[i],))

        def three(i: int) -> None:
            db.execute("BEGIN")
            db.execute("INSERT INTO log (body) VALUES (%s)", (rows[i],))
            db.execute("COMMIT")

        def append(i: int) -> None:
            store.append(session.id, [entries[i]])

        for i in range(200):  # warm: psycopg prepares a statement on its 5th use
            single(i)
            three(i)
            append(i)
        count.seen.clear()
        out: dict[str, list[float]] = {"single": [], "three": [], "append": []}
        for b in range(blocks):
            at = 200 + b * per_block
            jobs = [("single", single), ("three", three), ("append", append)]
            for key, fn in jobs if b % 2 == 0 else jobs[::-1]:
                times = timed(lambda i, fn=fn, at=at: fn(at + i), per_block)
                out[key].append(statistics.median(times) * 1e6)
        appends = sum(v for q, v in count.seen.items() if q.startswith("WITH s AS"))
        pg_statements = (sum(count.seen.values()) - 4 * n) / appends  # less the floor's
        store.close()
    with temp_home() as base:
        lite = SQLiteStore(base / "home" / "store.db")
        seen = sqlite_statements(lite)
        lite_times = append_run(lite, str(base / "work"), n)
        lite.close()
    ratios = [a / f for a, f in zip(out["append"], out["single"], strict=True)]
    return {
        "single_us": statistics.median(out["single"]),
        "three_us": statistics.median(out["three"]),
        "pg_us": statistics.median(out["append"]),
        "ratio": statistics.median(ratios),
        "sqlite_us": statistics.median(lite_times) * 1e6,
        "pg_statements_per_append": pg_statements,
        "sqlite_statements_per_append": len(seen) / (n + 200 + 1),
        "pg_top": count.top(4),
    }


def append_run(store: Store, cwd: str, n: int) -> list[float]:
    session = Session.create(store, cwd=cwd, model="faux/function")
    stream = messages(1_700_000_000_000)
    parent: str | None = None
    entries = []
    for _ in range(n + 200):
        e = MessageEntry(next(stream), parent_id=parent)
        entries.append(e)
        parent = e.id
    warm = entries[:200]
    for e in warm:
        store.append(session.id, [e])
    return timed(lambda i: store.append(session.id, [entries[200 + i]]), n)


def sqlite_statements(store: SQLiteStore) -> list[str]:
    seen: list[str] = []
    store._conn.db.set_trace_callback(seen.append)
    return seen


def per_call(counts: Counter[str], calls: int) -> float:
    return sum(counts.values()) / calls


def sqlite_floor() -> dict[str, Any]:
    """The SQLite WAL commit floor (synchronous=NORMAL), /work/shared/peers."""
    lines = run_json([sys.executable, "/work/shared/peers/sqlite_floor.py", "3000"])
    return next(line for line in lines if line.get("synchronous") == "NORMAL")


# ---- turns ----------------------------------------------------------------------


async def turn_once(home: Path, cwd: Path, store: Store | None, runs: int) -> dict[str, Any]:
    async with piagents.Runtime(home=home, model=make_route("parallel"), store=store) as rt:
        root = await rt.open_root(cwd=cwd)
        for i in range(5):
            await root.prompt(f"warm-up {i}: list the directory three times")
        before = len(rt.store.entries(root.id))
        times = []
        for i in range(runs):
            t0 = time.perf_counter()
            await root.prompt(f"prompt {i}: list the directory three times")
            times.append(time.perf_counter() - t0)
        entries = len(rt.store.entries(root.id)) - before
    return {"entry_ms": statistics.median(times) * 1e3 * runs / entries, "per_run": entries / runs}


def turn_bench(pg: PostgresServer, socket: bool, runs: int) -> dict[str, Any]:
    url, _ = database(pg, socket)
    with temp_home() as base, StatementCount() as count:
        store = PostgresStore(url)
        on_pg = asyncio.run(turn_once(base / "home", base / "work", store, runs))
    with temp_home() as base:
        lite = SQLiteStore(base / "home" / "store.db")
        seen = sqlite_statements(lite)
        on_lite = asyncio.run(turn_once(base / "home", base / "work", lite, runs))
    prompts = runs + 5
    return {
        "pg_entry_ms": on_pg["entry_ms"],
        "sqlite_entry_ms": on_lite["entry_ms"],
        "entries_per_prompt": on_pg["per_run"],
        "pg_statements_per_prompt": per_call(count.seen, prompts),
        "sqlite_statements_per_prompt": len(seen) / prompts,
        "pg_top": count.top(8),
    }


# ---- fan-out --------------------------------------------------------------------


def fanout_once(mode: str, store: str | None, quick: bool) -> dict[str, Any]:
    argv = [sys.executable, str(BENCH_DIR / "bench_fanout.py"), "worker", mode]
    if quick:
        argv += ["--agents", "10", "--inputs", "3"]
    if store is not None:
        argv += ["--store", store]
    (line,) = run_json(argv)
    return line


def fanout_counted(pg: PostgresServer, socket: bool, mode: str, quick: bool) -> dict[str, Any]:
    """One fan-out on each store in this process, its statements counted (not timed)."""
    agents, inputs = (10, 3) if quick else (100, 10)
    with StatementCount() as count:
        on_pg = asyncio.run(run_ours(mode, agents, inputs, "wide", store=database(pg, socket)[0]))
    seen: list[str] = []
    real = SQLiteStore.__init__

    def traced(self: SQLiteStore, *a: Any, **kw: Any) -> None:
        real(self, *a, **kw)
        self._conn.db.set_trace_callback(seen.append)

    SQLiteStore.__init__ = traced  # type: ignore[method-assign]
    try:
        asyncio.run(run_ours(mode, agents, inputs, "wide"))
    finally:
        SQLiteStore.__init__ = real  # type: ignore[method-assign]
    runs = on_pg["runs"]
    return {
        "mode": mode,
        "pg_statements_per_input": per_call(count.seen, runs),
        "sqlite_statements_per_input": len(seen) / runs,
        "pg_top": count.top(10),
    }


def main() -> None:
    p = common_args(__doc__ or "")
    p.add_argument("--only", default="floor,append,turn,fanout")
    p.add_argument("--socket", action="store_true", help="the Unix socket, not loopback TCP")
    p.add_argument("--durable", action="store_true", help="fsync and synchronous_commit on")
    p.add_argument("--tools", action="store_true", help="the fan-out's tools mode too")
    p.add_argument("--rtt", type=float, default=0.0, help="ms of round trip added (a proxy)")
    args = p.parse_args()
    only = set(args.only.split(","))
    reps = args.reps or (1 if args.quick else 5)
    n = 300 if args.quick else 2_000
    how = "unix socket" if args.socket else "loopback TCP"
    emit({"kind": "machine", **machine(), "connection": how, "durable": args.durable,
          "added_rtt_ms": args.rtt})  # fmt: skip
    with server(args.durable) as pg, latency_proxy(pg, args.rtt):
        floors: list[dict[str, Any]] = []
        if only & {"floor", "append"}:
            for rep in range(reps):
                f = paired(pg, args.socket, 10 if args.quick else 20, n // 10)
                emit({"kind": "detail", "bench": "postgres", "rep": rep, **f})
                note(
                    f"postgres: floor {f['single_us']:.0f} us, append {f['pg_us']:.0f} us, "
                    f"ratio {f['ratio']:.2f}"
                )
                floors.append(f)
            appends = floors
            single = [f["single_us"] for f in floors]
            pg_us = [a["pg_us"] for a in appends]
            where = f"{how}{', durable' if args.durable else ''}"
            result(
                "postgres",
                f"PG commit floor: 1-row INSERT, autocommit ({where})",
                single,
                unit="us",
                target=None,
                spread="minmax",
            )
            result(
                "postgres",
                f"PG commit floor: BEGIN/INSERT/COMMIT ({where})",
                [f["three_us"] for f in floors],
                unit="us",
                target=None,
                spread="minmax",
            )
            result(
                "postgres",
                f"PG store append of one entry ({where})",
                pg_us,
                unit="us",
                target=None,
                spread="minmax",
                statements=appends[0]["pg_statements_per_append"],
            )
            result(
                "postgres",
                "SQLite store append of one entry",
                [a["sqlite_us"] for a in appends],
                unit="us",
                target=None,
                spread="minmax",
                statements=appends[0]["sqlite_statements_per_append"],
            )
            result(
                "postgres",
                "PG append / PG floor (autocommit INSERT)",
                [a["ratio"] for a in appends],
                unit="x",
                target=APPEND_TARGET,
                spread="minmax",
            )
            emit({"kind": "peer", "bench": "sqlite_floor", **sqlite_floor()})
        if "turn" in only:
            turns = []
            for rep in range(reps):
                t = turn_bench(pg, args.socket, 10 if args.quick else 40)
                emit({"kind": "detail", "bench": "postgres-turn", "rep": rep, **t})
                note(f"turn: pg {t['pg_entry_ms']:.3f} ms/entry, sqlite {t['sqlite_entry_ms']:.3f}")
                turns.append(t)
            result(
                "postgres",
                "turn, 3 ls calls, per committed entry, PG",
                [t["pg_entry_ms"] for t in turns],
                unit="ms",
                target=1.0,
                spread="minmax",
                statements_per_prompt=turns[0]["pg_statements_per_prompt"],
            )
            result(
                "postgres",
                "turn, 3 ls calls, per committed entry, SQLite",
                [t["sqlite_entry_ms"] for t in turns],
                unit="ms",
                target=1.0,
                spread="minmax",
                statements_per_prompt=turns[0]["sqlite_statements_per_prompt"],
            )
        if "fanout" in only:
            modes = ("plain", "tools") if args.tools else ("plain",)
            walls: dict[str, list[float]] = {}
            for rep in range(reps):
                for mode in modes:
                    order = ("sqlite", "pg") if rep % 2 == 0 else ("pg", "sqlite")
                    for which in order:
                        url = None if which == "sqlite" else database(pg, args.socket)[0]
                        line = fanout_once(mode, url, args.quick)
                        emit({"kind": "detail", "bench": "postgres-fanout", **line})
                        walls.setdefault(f"{which}/{mode}", []).append(line["wall_s"])
                note("fanout: " + json.dumps({k: round(v[-1], 2) for k, v in walls.items()}))
            size = "10 x 3" if args.quick else "100 x 10"
            for mode in modes:
                pg_w, lite_w = walls[f"pg/{mode}"], walls[f"sqlite/{mode}"]
                result(
                    "postgres",
                    f"fan-out {size}, {mode}, limits 100/1000, PG",
                    pg_w,
                    unit="s",
                    target=None,
                    spread="minmax",
                )
                result(
                    "postgres",
                    f"fan-out {size}, {mode}, limits 100/1000, SQLite",
                    lite_w,
                    unit="s",
                    target=None,
                    spread="minmax",
                )
                result(
                    "postgres",
                    f"fan-out {size}, {mode}: PG / SQLite",
                    [a / b for a, b in zip(pg_w, lite_w, strict=True)],
                    unit="x",
                    target=FANOUT_TARGET,
                    spread="minmax",
                )
                ratio_row("postgres", f"fan-out {size}, {mode}", pg_w, lite_w, "SQLite store")
                emit(
                    {
                        "kind": "detail",
                        "bench": "postgres-fanout-statements",
                        **fanout_counted(pg, args.socket, mode, args.quick),
                    }
                )


if __name__ == "__main__":
    main()
