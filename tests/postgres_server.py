"""The tests' PostgreSQL server: `piagents.testing_postgres`, shared with the benchmarks
(this name kept so `import postgres_server` in conftest and the tests reads as before)."""

from piagents.testing_postgres import PASSWORD, USER, PostgresServer, binaries, running

__all__ = ["PASSWORD", "USER", "PostgresServer", "binaries", "running"]
