# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What the SDK cannot read of a server's answers, made something the connection can say instead of waiting.

- A tools/call answer the SDK's result model refuses as a whole (one block of a type it does not know) raises a
  pydantic error before toolgen sees the blocks. `KeptAnswers` wraps the session's dispatcher and keeps the JSON
  of each tools/call answer for the task that asked, so that the connection reads it block by block instead
  (answers.py).
- A line that is no JSON-RPC message (`{"result": null}`, a line cut short, a lone surrogate) reaches the SDK's
  message handler as an exception, and the request it answered would wait out its whole timeout. `Unreadable`
  finds the request's id in it and fails that request at once with PARSE_ERROR and a short reason; a line with
  no id of a request in flight is counted, and said when a call then runs out of time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..tools.guards import cut_text
from .sdk import mcp_module, mcp_types

# JSON-RPC's code for a message that could not be parsed: what a request answered unreadably fails with.
PARSE_ERROR = -32700
# How much of an unreadable line an error quotes.
_QUOTED = 200
# A JSON string (its closing quote missing where the line is cut), a bracket or a colon: what finding a top-level
# "id" in a line that is no JSON needs; read in the line's first characters only (the id comes first in practice).
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]:]')
_SCANNED = 100_000
# A \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or one of those not after the first kind: what
# Python's json reads and pydantic's refuses (looked for only in a line Python's json has read so).
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class KeptAnswers:
    """The JSON of the latest tools/call answer of each task that asked for it (`expect`), kept by a stand-in
    for the session's dispatcher; every other attribute is the dispatcher's own."""

    def __init__(self, dispatcher: Any) -> None:
        self._dispatcher = dispatcher
        self._kept: dict[int, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dispatcher, name)

    async def send_raw_request(
        self, method: str, params: Any, opts: Any = None, **more: Any
    ) -> Any:
        raw = await self._dispatcher.send_raw_request(method, params, opts, **more)
        if method == "tools/call":
            task = _task_id()
            if task in self._kept:
                self._kept[task] = raw
        return raw

    def expect(self) -> None:
        """Keep the answers to the current task's tools/call requests from now on."""
        self._kept[_task_id()] = None

    def take(self) -> Any:
        """The current task's latest kept answer (None without one); kept no longer."""
        return self._kept.pop(_task_id(), None)


def _task_id() -> int:
    task_id: int = mcp_module("anyio").get_current_task().id
    return task_id


def keep_answers(session: Any) -> KeptAnswers | None:
    """Stand a KeptAnswers in for the session's dispatcher; None where this SDK keeps no dispatcher there."""
    dispatcher = getattr(session, "_dispatcher", None)
    if dispatcher is None or not hasattr(dispatcher, "send_raw_request"):
        return None
    if isinstance(dispatcher, KeptAnswers):
        return dispatcher
    kept = KeptAnswers(dispatcher)
    session._dispatcher = kept
    return kept


def _top_level_id(text: str) -> Any:
    """The value of `"id"` at the top level of a JSON object's text, read as far as the text goes (it may be cut
    short, or hold what Python's json reads and pydantic's does not); None when there is none in its first
    _SCANNED characters."""
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, Mapping):
        return _usable_id(whole.get("id"))
    depth, before = 0, ""
    for token in _TOKENS.finditer(text, 0, _SCANNED):
        found = token.group(0)
        if found in "{[":
            depth += 1
        elif found in "}]":
            depth -= 1
        elif found == ":" and depth == 1 and before == '"id"':
            return _leading_value(text[token.end() : token.end() + 200].lstrip())
        before = found
    return None


def _usable_id(value: Any) -> Any:
    """`value` when it can be a JSON-RPC request's id (a string or an integer), else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value


def _leading_value(text: str) -> Any:
    """A JSON-RPC id (a string or an integer) at the start of `text`, or None."""
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return _usable_id(value)


def _reason(error: Exception) -> tuple[Any, str]:
    """The id of the request an unreadable message answered (None when it names none), and why it is unreadable."""
    errors = getattr(error, "errors", None)
    found = errors() if callable(errors) else []
    first = found[0] if found and isinstance(found[0], Mapping) else {}
    given = first.get("input")
    if isinstance(given, Mapping):
        request_id = _usable_id(given.get("id"))
        if "result" in given:
            branch = "JSONRPCResponse"
        else:
            branch = "JSONRPCError" if "error" in given else ""
        for problem in found:
            place = tuple(problem.get("loc", ()))
            if branch and place[:1] == (branch,):
                where = ".".join(str(part) for part in place[1:])
                why = f"{where}: {problem.get('msg')}" if where else problem.get("msg")
                return request_id, f"{why} (the message began {_began(given)})"
        return request_id, f"it is no JSON-RPC message (it began {_began(given)})"
    if isinstance(given, (str, bytes, bytearray)):
        text = (
            given if isinstance(given, str) else bytes(given).decode("utf-8", "replace")
        )
        lone = _lone_surrogate(text)
        why = (
            f"it holds a lone surrogate ({lone}), which is no Unicode character"
            if lone is not None
            else first.get("msg") or "it is not JSON"
        )
        return _top_level_id(text), f"{why} (the line began {_quoted(text)})"
    return None, f"{type(error).__name__}: {cut_text(str(error), _QUOTED)}"


def _lone_surrogate(text: str) -> str | None:
    """The first lone surrogate escape of a line Python's json reads though pydantic's does not, or None."""
    try:
        json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        found = _LONE_SURROGATE.search(text)
        return found.group(0) if found is not None else "\\u...."
    except (ValueError, RecursionError):
        return None
    return None


def _quoted(text: str) -> str:
    return repr(cut_text(text, _QUOTED))


def _began(data: Mapping[str, Any]) -> str:
    try:
        text = json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(data)
    return _quoted(text)


class Unreadable:
    """What a connection does with the messages its server sent that could not be read: a request they answer
    fails at once; the others are counted, the last kept, for the error of a call that then runs out of time."""

    def __init__(self) -> None:
        self.count = 0
        self.last = ""

    def seen(self, error: Exception, dispatcher: Any) -> None:
        request_id, why = _reason(error)
        pending = getattr(dispatcher, "_pending", None)
        resolve = getattr(dispatcher, "_resolve_pending", None)
        if (
            request_id is not None
            and isinstance(pending, Mapping)
            and callable(resolve)
            and _in_flight(request_id, pending)
        ):
            resolve(request_id, mcp_types().ErrorData(code=PARSE_ERROR, message=why))
            return
        self.count += 1
        self.last = why

    def said(self) -> str:
        """The words a timeout's error adds, or "" when every message could be read."""
        if not self.count:
            return ""
        lines = "a message" if self.count == 1 else f"{self.count:,} messages"
        return f"; it had sent {lines} that could not be read, the last: {self.last}"


def _in_flight(request_id: Any, pending: Mapping[Any, Any]) -> bool:
    # Keyed as the SDK keys them (shared/dispatcher.coerce_request_id): an answer may echo 7 as "7".
    if isinstance(request_id, str) and request_id.lstrip("-").isdigit():
        request_id = int(request_id)
    return request_id in pending
