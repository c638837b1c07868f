"""The model-facing texts of the supervision face's structured errors, as pure functions.

Each error carries a `message` (what went wrong, naming the cause) and, where there
is one, a `next_action` (what the controller does next); `errors.render_error` puts
them into the tool result. Tests hold every text to the character.
"""

from __future__ import annotations

# ---- which agent, and whether the action is allowed ---------------------------------

NEXT_LIST = "call list"
NEXT_LIST_LABELS = "call list for the current labels"
NEXT_LIST_OWNED = "call list for the agents you own"
NEXT_LIST_ACTIONS = "call list for its available_actions"
NEXT_CLOSE_AMBIGUOUS = "call list; close the lost or unknown one first"


def no_live_agent(label: str) -> str:
    return f"No live agent labelled {label!r}."


def label_ambiguous(label: str, count: int) -> str:
    return f"{count} agent records carry the label {label!r}."


def not_owned(label: str) -> str:
    return f"{label!r} is not an agent you own directly."


def action_unavailable(action: str, label: str, state: str) -> str:
    return f"{action} is not available for {label} while it is {state}."


def runs_elsewhere(label: str, placement: str) -> str:
    return f"{label} does not run in this runtime ({placement})."


NOT_A_CONTROLLER = "Only the lead and delegating agents may use the agent tool."


# ---- definitions ----------------------------------------------------------------------

NEXT_FIX_DEFINITIONS = "fix the named definition files, then call list"


def definitions_unusable(reason: object) -> str:
    return f"The agent definitions cannot be used: {reason}"


# ---- delegate and continue ------------------------------------------------------------

NEXT_DELEGATE_FRESH = "delegate a fresh agent and pass it the handoff and files"
NEXT_FORK_INSTEAD = "use delegate with fork for a separate derived context"
NEXT_STEER_OR_CLOSE = "call list, then steer or close that agent"
NEXT_COPY_SESSION = "copy the session from a result or from list"
NEXT_CHECK_DEFINITION = "check the definition's model and settings, then try again"
CONTINUE_OWN_SESSION = "A controller cannot continue its own session."


def retired_not_forkable(session: str) -> str:
    return f"Session {session} was retired and cannot be forked."


def retired_not_continuable(session: str) -> str:
    return f"Session {session} was retired and cannot be continued."


def not_managed_session(session: str) -> str:
    return f"Session {session} is not a managed agent's session."


def session_busy(session: str) -> str:
    return f"Session {session} already has a live managed agent."


def cwd_has_nul(given: str) -> str:
    return f"cwd {given!r} is not a valid path (it holds a NUL byte)."


def cwd_not_a_directory(given: str, path: object) -> str:
    return f"cwd {given!r} is not a directory ({path})."


def label_taken(label: str) -> str:
    return f"The label {label!r} is already used by a live agent."


def label_taken_next(operation: str) -> str:
    """What to do about a taken label: `delegate` picks another, `continue` frees it."""
    if operation == "delegate":
        return "choose another label"
    return "close the agent that holds the label, then continue"


def no_saved_session(given: str, field_name: str) -> str:
    return f"No saved session {given!r} (`{field_name}` takes a full session ID or path)."


def start_failed(reason: object) -> str:
    return f"The agent could not be started: {reason}"


# ---- placement in a worker process ----------------------------------------------------

NEXT_LOADABLE_MODEL = (
    "use spawnPlacement inline, or a model a worker can load by name "
    "(faux/<module>:<function> for scripted models)"
)


def model_not_loadable(model: str, where: str) -> str:
    return (
        f"The model {model!r} exists only in this process, so placement {where!r} cannot "
        "run it in a worker process."
    )


def worker_start_failed(placement: str, reason: str) -> str:
    return f"The agent's worker could not be started ({placement}): {reason}"


def check_worker_log(log: object) -> str:
    return f"check the worker log in {log}, then try again"


# ---- attachments ----------------------------------------------------------------------

NEXT_SHORTEN = "shorten the message, or put long text in a file passed in `files`"


def message_too_large(size: int, limit: int, *, with_references: bool) -> str:
    what = "with its file references " if with_references else ""
    return f"The message {what}is {size} bytes, over the mailbox payload limit of {limit} bytes."
