"""A store's URL: checked (`url_problem`) and shown without its password
(`location_of`), without importing anything of PostgreSQL."""

from __future__ import annotations

import urllib.parse

SCHEMES = ("postgresql", "postgres")
EXAMPLE = "postgresql://user:password@host:5432/dbname"


def url_problem(url: object) -> str | None:
    """What is wrong with `url` as a store URL, or None when it is one."""
    if not isinstance(url, str) or not url:
        return f"expected a PostgreSQL URL such as {EXAMPLE}"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError as exc:
        return f"not a valid URL ({exc}); expected one such as {EXAMPLE}"
    if parts.scheme not in SCHEMES:
        shown = parts.scheme or url.split(":", 1)[0]
        return f"unknown store {shown!r}: expected a PostgreSQL URL such as {EXAMPLE}"
    if not parts.path.strip("/"):
        return f"the URL names no database; expected one such as {EXAMPLE}"
    return None


def location_of(url: str) -> str:
    """`url` as messages name it: without its password (in the user part, or given as
    a `password` parameter)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url
    netloc = parts.netloc
    if parts.password is not None:
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        netloc = f"{parts.username or ''}@{host}" + (f":{port}" if port else "")
    query = urllib.parse.urlencode(
        [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "password"]
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def checked_url(value: object) -> tuple[str | None, str | None]:
    """(the store URL, None) for a valid `value`, (None, its problem) for another one;
    (None, None) when there is none."""
    if value is None:
        return None, None
    problem = url_problem(value)
    return (None, problem) if problem is not None else (str(value), None)
