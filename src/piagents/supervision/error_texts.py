"""The model-facing texts of the supervision face's structured errors, as pure functions.

Each error carries a `message` (what went wrong, naming the cause) and, where there
is one, a `next_action` (what the controller does next); `errors.render_error` puts
them into the tool result. Tests hold every text to the character.
"""

from __future__ import annotations

from piagents.counted import counted

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


# Why `delegate` or `continue` refuses a definition name (`Roster.resolve`).


def definition_untrusted(name: str, project_dir: str | None, path: str) -> str:
    return (
        f"definition {name!r} comes from the project {project_dir} "
        f"({path}), which is not trusted; definitions of an untrusted "
        f"project are not used. The user can trust it with "
        f"`pi-agents trust {project_dir}`."
    )


def _choices(names: list[str]) -> str:
    return ", ".join(names) or "none"


def definition_unknown(shown_name: str, choices: list[str]) -> str:
    return f"no agent definition named {shown_name}; available: {_choices(choices)}"


def definition_disabled(name: str, choices: list[str]) -> str:
    return f"definition {name!r} is disabled; available: {_choices(choices)}"


def definition_is_leaf(delegator: str) -> str:
    return f"definition {delegator!r} is a leaf and cannot delegate"


def definition_not_delegatable(delegator: str, name: str, choices: list[str]) -> str:
    return (
        f"definition {delegator!r} may not delegate to {name!r}; "
        f"it may delegate to: {_choices(choices)}"
    )


# What discovery finds wrong with the definition files (each names its file).


def bundled_unreadable(folder: object, exc: object) -> str:
    return f"{folder}: cannot read the bundled definitions: {exc}"


def not_a_directory(folder: object) -> str:
    return f"{folder}: is not a directory"


def too_many_files(folder: object, limit: int) -> str:
    return f"{folder}: holds more than {limit} definition files"


def directory_unreadable(folder: object, reason: object) -> str:
    return f"{folder}: cannot read the directory: {reason}"


def file_too_large(path: str, limit_mib: int) -> str:
    return f"{path}: is larger than {limit_mib} MiB"


def not_utf8(path: str) -> str:
    return f"{path}: is not UTF-8 text"


def file_unreadable(path: object, reason: object) -> str:
    return f"{path}: cannot be read: {reason}"


def defined_twice(path: str, name: str, first: str, layer: str) -> str:
    return f"{path}: `name`: {name!r} is also defined by {first} in the {layer} layer"


UNDEFINED_TARGET = "is not defined in any layer"
DISABLED_TARGET = "is disabled"
DELEGATING_TARGET = "delegates itself; depth is fixed at lead → delegating agent → leaf"


def untrusted_target(project_dir: str | None) -> str:
    return f"is defined only by the untrusted project {project_dir}"


def bad_target(path: str, target: str, why: str) -> str:
    return f"{path}: `agents`: {target!r} {why}"


def unknown_tool(path: str, key: str, shown_name: str, offered: str) -> str:
    return f"{path}: `{key}`: unknown tool {shown_name}; the tools are {offered}"


# Why a global override is not written (`write_global_override`).


def not_overwritten(target: object, name: str) -> str:
    return f"{target}: exists and does not define {name!r}; not overwritten"


def still_delegated_to(target: object, name: str, users: list[str]) -> str:
    return (
        f"{target}: `enabled`: {name!r} cannot be disabled while "
        f"{', '.join(users)} may delegate to it; disable those first"
    )


def renamed_by_override(target: object, name: str) -> str:
    return f"{target}: `name`: the file now defines {name!r}"


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


# Why a worker did not run its generation (the reason `worker_start_failed` gives).

WORKER_TOO_SLOW = "it did not record itself in time"
NO_POOL_WORKERS = (
    "no pi-agents worker is running for this store: start one with "
    "`pi-agents worker --store postgresql://…`"
)
WORKER_EXITED_EARLY = "the worker exited before it recorded itself"


def worker_could_not_run(reason: object) -> str:
    return f"the worker could not run it: {reason}"


def definition_unavailable(definition: str) -> str:
    return f"the definition {definition!r} is not available to the worker"


def agent_not_loaded(reason: object) -> str:
    return f"the agent could not be loaded: {reason}"


TMUX_MISSING = "tmux is not installed (placement tmux)"


def tmux_session_failed(session: str, reason: str) -> str:
    return f"tmux could not create session {session}: {reason}"


def tmux_window_failed(reason: str) -> str:
    return f"tmux could not open a window: {reason}"


# ---- attachments ----------------------------------------------------------------------

NEXT_SHORTEN = "shorten the message, or put long text in a file passed in `files`"


def message_too_large(size: int, limit: int, *, with_references: bool) -> str:
    what = "with its file references " if with_references else ""
    return (
        f"The message {what}is {counted(size, 'byte')}, over the mailbox payload limit of "
        f"{counted(limit, 'byte')}."
    )


NOT_A_PATH = "is not a valid path (it holds a NUL byte)"


def cwd_not_a_path() -> str:
    return f"`files`: the working directory {NOT_A_PATH}."


def file_not_a_path(given: str) -> str:
    return f"`files`: {given!r} {NOT_A_PATH}."


def _resolved(given: str, path: str) -> str:
    return "" if given == path else f" (resolved to {path})"


def file_missing(given: str, path: str) -> str:
    return f"`files`: {given} does not exist{_resolved(given, path)}."


def file_not_regular(given: str, path: str) -> str:
    return f"`files`: {given} is not a regular file{_resolved(given, path)}."


def file_cannot_be_read(given: str, path: str, reason: object) -> str:
    return f"`files`: {given} cannot be read{_resolved(given, path)}: {reason}."


# ---- arguments that are not plain JSON (the harness checks them first) ----------------


def unusable_arguments(message: str, path: str | None) -> str:
    """The harness's problem with the arguments, as an invalid_request message."""
    if path is not None:
        return f"Field `{path}`: {message}."
    return f"{message[:1].upper() + message[1:]}."


# ---- a definition file's problems (`definition_file`), each naming the file ----------


def problems_listed(problems: tuple[str, ...]) -> str:
    listed = "\n".join(f"  - {p}" for p in problems)
    return f"{counted(len(problems), 'problem')} in agent definitions:\n{listed}"


def field_problem(path: str, key: str, what: str) -> str:
    return f"{path}: `{key}`: {what}"


NAME_MISSING = "missing; every definition needs a name"
GIVEN_TWICE = "given more than once"
EXPECTED_MODEL = "expected provider/modelId"


def unknown_field(fields: tuple[str, ...]) -> str:
    return f"unknown field; the fields are {', '.join(fields)}"


def expected_type(boolean: bool, got: str) -> str:
    return f"expected {'true or false' if boolean else 'a string'}, got {got}"


def name_mismatch(shown_name: str, pattern: str) -> str:
    return f"{shown_name} must match {pattern}"


def delegates_to_itself(shown_name: str) -> str:
    return f"{shown_name} cannot delegate to itself"


def bad_prompt_mode(shown_value: str) -> str:
    return f"expected append or replace, got {shown_value}"


def expected_model(got: str) -> str:
    return f"{EXPECTED_MODEL}, got {got}"


def bad_thinking(levels: tuple[str, ...], shown_value: str) -> str:
    return f"expected one of {', '.join(levels)} or false, got {shown_value}"


def expected_list(got: str) -> str:
    return f"expected a list such as [a, b], got {got}"


def invalid_name(shown_item: str, pattern: str) -> str:
    return f"{shown_item} is not a valid name (must match {pattern})"


def listed_twice(shown_item: str) -> str:
    return f"{shown_item} is listed twice"


def definition_too_large(where: str, limit_mib: int) -> str:
    return f"{where}: is larger than {limit_mib} MiB; a definition is a short file"


def not_a_regular_file(where: str) -> str:
    return f"{where}: is not a regular file"


def no_front_matter(path: str) -> str:
    return f"{path}: no front matter; a definition begins with a `---` line, YAML, and `---`"


def front_matter_too_large(path: str, limit_kib: int) -> str:
    return f"{path}: the front matter is larger than {limit_kib} KiB"


def front_matter_unclosed(path: str) -> str:
    return f"{path}: the front matter opened on line 1 is never closed by `---`"


def nested_too_deep(limit: int) -> str:
    return f"nested deeper than {limit} levels"


def expands_too_far(limit: int) -> str:
    return f"expands to more than {limit} values (each alias counts its anchor's)"


def invalid_yaml(path: str, line: int | None, what: object) -> str:
    where = f" (line {line})" if line is not None else ""
    return f"{path}: front matter is not valid YAML{where}: {what}"


def number_too_long(path: str) -> str:
    return f"{path}: front matter holds a number too long to read"


def front_matter_not_a_mapping(path: str) -> str:
    return f"{path}: front matter must be a mapping of fields"


def field_names_not_plain(path: str) -> str:
    return f"{path}: front matter field names must be plain words"


def a_value_of(kind: str, characters: int) -> str:
    """A long value as a problem quotes it: by kind and length."""
    return f"a {kind} of {characters} characters"


def a_value(kind: str) -> str:
    """A value that is not a scalar, as a problem quotes it: by kind."""
    return f"a {kind}"


# ---- a call's arguments (`requests`, `labels`) --------------------------------------


def not_an_object(got: str) -> str:
    return f"The arguments must be a JSON object, got {got}."


def action_required(choices: str) -> str:
    return f"`action` is required: one of {choices}."


def unknown_action(shown_action: str, choices: str) -> str:
    return f"Unknown action {shown_action}. Actions: {choices}."


def fields_not_allowed(names: list[str], operation: str, allowed: tuple[str, ...]) -> str:
    noun, verb = ("Field", "is") if len(names) == 1 else ("Fields", "are")
    return (
        f"{noun} {', '.join(names)} {verb} not allowed for {operation}. "
        f"Allowed fields: {', '.join(allowed)}."
    )


def fields_missing(operation: str, missing: list[str]) -> str:
    return f"{operation} needs {', '.join(f'`{k}`' for k in missing)}."


def not_a_string(key: str, got: str) -> str:
    return f"`{key}` must be a string, got {got}."


def empty_field(key: str) -> str:
    return f"`{key}` must be non-empty."


def files_not_an_array(got: str) -> str:
    return f"`files` must be an array of paths, got {got}."


def file_not_a_path_string(index: int) -> str:
    return f"`files[{index}]` must be a non-empty path string."


def timeout_out_of_range(low: int, high: int, shown_value: str) -> str:
    return f"`timeoutMs` must be an integer from {low} through {high}, got {shown_value}."


def invalid_label(label_json: str) -> str:
    return (
        f"`label` {label_json} must match ^[a-z][a-z0-9_-]{{0,31}}$: "
        "a lower-case letter, then up to 31 lower-case letters, digits, `_` or `-`."
    )
