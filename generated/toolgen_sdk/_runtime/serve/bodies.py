# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's request bodies, checked: each problem names its field as a JSON pointer."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..loop.events import finite_json
from ..loop.policies import Approval, json_text
from ..models.jsontext import JSONTextError, parse_json
from ..models.problems import escape_pointer_part

ROLES = ("system", "user", "assistant", "tool")
DECISIONS = ("approve", "deny", "edit")


class BodyError(ValueError):
    """A request body the service cannot take: `field` is the JSON pointer of the bad value."""

    def __init__(self, field: str, message: str) -> None:
        # Both may hold a key or text the client sent: written so that UTF-8 (the answer's JSON) can carry them.
        field, message = readable(field), readable(message)
        super().__init__(message)
        self.field = field
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return {"error": {"field": self.field, "message": self.message}}


class BodyTooLarge(BodyError):
    """A body past its limit (MAX_BODY_BYTES unless said): refused (413) before it is read whole."""

    def __init__(self, limit: int | None = None) -> None:
        limit = MAX_BODY_BYTES if limit is None else limit
        super().__init__("", f"the body is larger than {limit:,} bytes")


@dataclass(frozen=True)
class NewRun:
    """What `POST /runs` asks for."""

    messages: list[dict[str, Any]]
    conversation_id: str | None
    deadline: float | None = None


# The longest deadline a run may ask for: thirty days.
MAX_DEADLINE_SECONDS = 30 * 24 * 3600
# The largest body the service reads; a run's conversation and an edit are far smaller.
MAX_BODY_BYTES = 16_000_000
# The largest login body (`{"token": ...}`), read before the caller is known.
MAX_SESSION_BODY_BYTES = 4096
# The longest conversation_id a run takes: every stored event of the run repeats it.
MAX_CONVERSATION_ID_CHARS = 256
# The longest tool call id a client's message may give: the call's events repeat it.
MAX_CALL_ID_CHARS = 256
# How many runs GET /runs lists at most at once, and by default.
MAX_LISTED_RUNS = 100
LISTED_RUNS = 20


def readable(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`), as UTF-8 cannot carry one: for the
    client's text an error or the log repeats."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def answer_json(content: Any) -> bytes:
    """`content` as an answer's JSON, UTF-8, as Starlette's JSONResponse renders it; never an error for what the
    store kept. A run stored by an earlier release (before the door refused them) may hold a lone surrogate, which
    UTF-8 cannot carry: it is sent as its JSON escape (`\\ud800`), which a JSON reader reads back as the same
    string. It may hold NaN or Infinity, which JSON cannot carry: each is sent as null, and an object answer says
    where in its `notes`."""
    try:
        return json.dumps(
            content, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8")
    except ValueError:
        pass  # a lone surrogate (UnicodeEncodeError) or a number JSON has no form for
    content, found = finite_json(content)
    replaced = [readable(pointer) or "/" for pointer, _ in found]
    if replaced and isinstance(content, dict):
        shown_at = ", ".join(replaced[:5]) + (
            f" and {len(replaced) - 5:,} more" if len(replaced) > 5 else ""
        )
        note = (
            "a number JSON cannot carry (NaN or Infinity), stored by an earlier release, is sent as "
            f"null at {shown_at}"
        )
        content = {**content, "notes": [*content.get("notes", ()), note]}
    text = json.dumps(
        content, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    return readable(text).encode("utf-8")


def shown(text: str, most: int = 80) -> str:
    """The client's `text` quoted for an error message: its repr, the first `most` characters of a longer one."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}... ({len(text):,} characters)"


def is_json_type(content_type: str | None) -> bool:
    """Whether a Content-Type header says JSON: `application/json`, with parameters or not. A browser page of
    another site can send text/plain, a form's types or none without asking (no preflight); never this."""
    if content_type is None:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def body_text(raw: bytes | bytearray) -> str:
    """The body's bytes as text, UTF-8: the caller may let go of the bytes before the text is parsed."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BodyError(
            "", f"the body is not UTF-8 text (byte {error.start})"
        ) from None


def parse_json_body(raw: str | bytes | bytearray) -> Any:
    """The body as strict JSON: no NaN or Infinity, no repeated key, no lone surrogate (which neither the store
    nor UTF-8 can hold), nothing nested past the runtime's limit."""
    text = raw if isinstance(raw, str) else body_text(raw)
    return _strict_json(text or "null", "", "the body")


def _strict_json(text: str, at: str, name: str) -> Any:
    """`text` as parse_json_body reads a body; a problem's field is its pointer under `at`, its message names
    `name` (what the text is)."""
    try:
        data = parse_json(text, max_chars=MAX_BODY_BYTES)
    except JSONTextError as error:
        problem = error.problems[0]
        if error.line is not None:
            raise BodyError(at, f"{name} {problem.message}") from None
        # JSON, but not JSON data the service takes (NaN, a repeated key, too deep): at its place, when it has one.
        where = f"the value at {at}{problem.pointer}" if problem.pointer else name
        raise BodyError(at + problem.pointer, f"{where} {problem.message}") from None
    # Only a `\\udXXX` escape makes a lone surrogate (text decoded from UTF-8 has none): without one (or a
    # surrogate in text given as such), nothing to walk.
    lone = _lone_surrogate(data) if _SURROGATE_SOURCE.search(text) else None
    if lone is not None:
        raise BodyError(
            at + lone,
            "a string holds a lone surrogate (\\ud800-\\udfff), which no UTF-8 text can",
        )
    return data


def _lone_surrogate(value: Any) -> str | None:
    """The pointer of the first string (or key) holding a lone surrogate, or None; walked without recursion."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, current = stack.pop()
        if isinstance(current, str):
            if not current.isascii() and _SURROGATE.search(current):
                return pointer
        elif isinstance(current, dict):
            for key, item in current.items():
                at = f"{pointer}/{escape_pointer_part(key)}"
                if not key.isascii() and _SURROGATE.search(key):
                    return at
                stack.append((at, item))
        elif isinstance(current, list):
            stack.extend(
                (f"{pointer}/{index}", item) for index, item in enumerate(current)
            )
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_SOURCE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BodyError("", "the body must be a JSON object")
    return body


def new_run(body: Any, *, allow_tool_calls: bool = False) -> NewRun:
    """The run `POST /runs` asks for. Unless `allow_tool_calls`, a conversation whose last assistant turn has
    calls no tool message answers is refused: the loop would run them at once, with no model call."""
    data = _object(body)
    unknown = sorted(set(data) - {"messages", "conversation_id", "deadline"})
    if unknown:
        raise BodyError(
            f"/{escape_pointer_part(unknown[0])}", f"unknown field {shown(unknown[0])}"
        )
    deadline = data.get("deadline")
    if deadline is not None and (
        isinstance(deadline, bool)
        or not isinstance(deadline, (int, float))
        or not 0 < deadline <= MAX_DEADLINE_SECONDS
    ):
        raise BodyError(
            "/deadline",
            f"deadline must be a number of seconds above 0 and at most {MAX_DEADLINE_SECONDS:,}",
        )
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BodyError("/messages", "messages must be a non-empty list of messages")
    call_ids: set[str] = set()
    for index, message in enumerate(messages):
        where = f"/messages/{index}"
        if not isinstance(message, Mapping):
            raise BodyError(where, "a message must be an object")
        if message.get("role") not in ROLES:
            raise BodyError(f"{where}/role", f"role must be one of {', '.join(ROLES)}")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise BodyError(f"{where}/content", "content must be a string or a list")
        for at, part in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise BodyError(
                    f"{where}/content/{at}",
                    "a content part must be an object with a string type",
                )
        _check_calls(message.get("tool_calls"), f"{where}/tool_calls", call_ids)
        answered = message.get("tool_call_id")
        if message["role"] == "tool" and (
            not isinstance(answered, str) or not answered
        ):
            raise BodyError(
                f"{where}/tool_call_id",
                "a tool message needs tool_call_id: a non-empty string",
            )
    unanswered = None if allow_tool_calls else _unanswered_turn(messages)
    if unanswered is not None:
        raise BodyError(
            f"/messages/{unanswered}/tool_calls",
            "the conversation ends in an assistant turn whose tool calls no tool message answers: "
            "they would run at once, with no model call (the service takes such a turn only when "
            "started with --allow-client-tool-calls)",
        )
    conversation = data.get("conversation_id")
    if conversation is not None and (
        not isinstance(conversation, str)
        or not conversation.strip()
        or len(conversation) > MAX_CONVERSATION_ID_CHARS
    ):
        raise BodyError(
            "/conversation_id",
            f"conversation_id must be a non-empty string of at most {MAX_CONVERSATION_ID_CHARS} characters",
        )
    return NewRun(
        # The body's own dicts, not copies: a body of many messages is held once.
        [m if type(m) is dict else dict(m) for m in messages],
        conversation,
        None if deadline is None else float(deadline),
    )


def _unanswered_turn(messages: list[Any]) -> int | None:
    """The index of the last assistant message when it has a call the tool messages after it leave
    unanswered (what the loop runs first, as a resumed run's), else None."""
    answered = set()
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "tool":
            answered.add(message.get("tool_call_id"))
            continue
        calls = (
            message.get("tool_calls") if message.get("role") == "assistant" else None
        )
        if calls and any(call.get("id") not in answered for call in calls):
            return index
        return None
    return None


def session_token(body: Any) -> str:
    """The token `POST /session` is given."""
    data = _object(body)
    unknown = sorted(set(data) - {"token"})
    if unknown:
        raise BodyError(
            f"/{escape_pointer_part(unknown[0])}", f"unknown field {shown(unknown[0])}"
        )
    token = data.get("token")
    if not isinstance(token, str) or not token:
        raise BodyError("/token", "token must be a non-empty string")
    return token


def run_list_query(limit: str | None, before: str | None) -> tuple[int, str | None]:
    """`GET /runs`' query: how many runs (1 to MAX_LISTED_RUNS) and the run id to list from, exclusive."""
    if limit is None or limit == "":
        count = LISTED_RUNS
    elif limit.isascii() and limit.isdigit() and len(limit) <= 3:
        count = int(limit)
    else:
        count = 0
    if not 1 <= count <= MAX_LISTED_RUNS:
        raise BodyError(
            "limit", f"limit must be a whole number from 1 to {MAX_LISTED_RUNS}"
        )
    if before == "":
        raise BodyError("before", "before must be a run id (the `next` of a listing)")
    return count, before


def _check_calls(calls: Any, where: str, seen: set[str]) -> None:
    """Tool calls the run can read back and answer: a malformed one had stopped its run half way, for good."""
    if calls is None:
        return
    if not isinstance(calls, list):
        raise BodyError(where, "tool_calls must be a list of calls")
    for index, call in enumerate(calls):
        at = f"{where}/{index}"
        if not isinstance(call, Mapping):
            raise BodyError(at, "a tool call must be an object")
        call_id = call.get("id")
        if (
            not isinstance(call_id, str)
            or not call_id
            or len(call_id) > MAX_CALL_ID_CHARS
        ):
            raise BodyError(
                f"{at}/id",
                f"a tool call needs an id: a non-empty string of at most {MAX_CALL_ID_CHARS} characters",
            )
        if call_id in seen:
            # Approvals and answers are keyed by id: a second call of one id could never be decided.
            raise BodyError(
                f"{at}/id",
                f"tool call id {shown(call_id)} is used twice; each call needs its own",
            )
        seen.add(call_id)
        function = call.get("function")
        if (
            not isinstance(function, Mapping)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments", ""), str)
        ):
            raise BodyError(
                f"{at}/function",
                "function must be an object with a string name and string arguments",
            )


def approval(body: Any) -> Approval:
    data = _object(body)
    unknown = sorted(set(data) - {"decision", "reason", "arguments"})
    if unknown:
        raise BodyError(
            f"/{escape_pointer_part(unknown[0])}", f"unknown field {shown(unknown[0])}"
        )
    decision = data.get("decision")
    if decision not in DECISIONS:
        raise BodyError("/decision", f"decision must be one of {', '.join(DECISIONS)}")
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise BodyError("/reason", "reason must be a string")
    if decision != "edit" and "arguments" in data:
        # Taken and dropped, the caller would believe its arguments ran.
        raise BodyError("/arguments", f"only an edit takes arguments, not {decision!r}")
    if decision == "approve":
        return Approval("approve", reason)
    if decision == "deny":
        return Approval.deny(reason or "the user denied this call")
    arguments = data.get("arguments")
    if isinstance(arguments, str):
        # Arguments as JSON text (as a model writes them), read by the body's rules: what the store can hold.
        arguments = _strict_json(arguments, "/arguments", "arguments")
    if not isinstance(arguments, Mapping):
        raise BodyError("/arguments", "an edit needs arguments: a JSON object")
    return Approval("edit", reason, json_text(dict(arguments)))
