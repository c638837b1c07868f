"""Writing one `"pi-agents"` setting to `<home>/settings.json` from the UI.

The file keeps every other key; it is replaced atomically; a file that cannot be
read as a JSON object is never overwritten (the error says why instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from piagents.atomic_file import write_atomically
from piagents.config import MAX_DEPTH, MESSAGE_LIMIT_RANGE
from piagents.json_depth import json_depth
from piagents.read_model import ReadModel

SECTION = "pi-agents"
# The settings the UI writes are those a runtime may change while it runs
# (`config.LIVE_AGENTS_FIELDS`): a flag and two message limits.
LIMIT_KEYS = ("inlineAttachmentLimitBytes", "mailboxPayloadLimitBytes")


class SettingsFileError(ValueError):
    """The setting was not written; the message names the file or the key."""


def check_value(key: str, value: object) -> None:
    """Refuse a value the settings loader would refuse, naming the key."""
    if key == "contextRetirement":
        if not isinstance(value, bool):
            raise SettingsFileError(f"{SECTION}.{key}: expected true or false")
        return
    if key not in LIMIT_KEYS:
        raise SettingsFileError(f"{SECTION}.{key}: not a setting the UI writes")
    low, high = MESSAGE_LIMIT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingsFileError(
            f"{SECTION}.{key}: expected an integer from {low} to {high}, got {json.dumps(value)}"
        )


def parse_limit(key: str, text: str) -> int:
    """The integer typed for a message limit, or SettingsFileError naming the key."""
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        low, high = MESSAGE_LIMIT_RANGE
        raise SettingsFileError(
            f"{SECTION}.{key}: expected an integer from {low} to {high}, got {text.strip()!r}"
        ) from None
    check_value(key, value)
    return value


LEFT = "it was left as it is: fix it, then try again"


def read_object(path: Path) -> dict[str, Any]:
    """The settings file as a JSON object ({} when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise SettingsFileError(f"{path}: is not UTF-8 text; it was left as it is") from exc
    if not text.strip():
        return {}
    if json_depth(text) > MAX_DEPTH:
        raise SettingsFileError(f"{path}: nested more than {MAX_DEPTH} levels deep; {LEFT}")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsFileError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
            "it was left as it is: fix it, then try again"
        ) from exc
    except ValueError:  # an integer of more digits than Python converts
        raise SettingsFileError(f"{path}: holds a number too long to read; {LEFT}") from None
    if not isinstance(raw, dict):
        raise SettingsFileError(f"{path}: expected a JSON object; it was left as it is")
    return raw


def write_agents_setting(home: Path, key: str, value: object) -> Path:
    """Set `"pi-agents": {key: value}` in `<home>/settings.json`, keeping every other key."""
    check_value(key, value)
    path = home / "settings.json"
    raw = read_object(path)
    section = raw.get(SECTION, {})
    if not isinstance(section, dict):
        raise SettingsFileError(f'{path}: "{SECTION}" is not an object; it was left as it is')
    raw[SECTION] = {**section, key: value}
    text = json.dumps(raw, indent=2, ensure_ascii=False) + "\n"
    try:
        write_atomically(path, text)
    except OSError as exc:
        raise SettingsFileError(f"{path}: cannot be written ({exc.strerror or exc})") from exc
    return path


def apply_agents_setting(model: ReadModel, key: str, value: object) -> None:
    """Write the setting to the runtime's home, then use it there from now on."""
    write_agents_setting(model.home, key, value)
    model.use_agents_setting(key, value)
