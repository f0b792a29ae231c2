# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Tool calls and their results paired up in a conversation: what is unanswered, duplicated or unknown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """A tool call and its result that do not pair up, with a JSON pointer into the messages."""

    pointer: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "code": self.code, "message": self.message}


def check_pairing(
    messages: list[Mapping[str, Any]], allow_pending: bool = False
) -> list[Problem]:
    """Tool results whose call id no earlier call has, duplicate ids, and calls left without a result.

    With `allow_pending`, calls of the last assistant message that nothing but their own results follow are not
    reported: a conversation that ends by asking for tools is waiting for their results.
    """
    problems: list[Problem] = []
    calls: dict[str, str] = {}
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            for j, call in enumerate(message.get("tool_calls") or ()):
                _record_call(call.get("id"), f"/{i}/tool_calls/{j}", calls, problems)
        elif role == "tool":
            _record_result(
                message.get("tool_call_id"),
                f"/{i}/tool_call_id",
                calls,
                answered,
                problems,
            )
    pending = _pending_calls(messages) if allow_pending else set()
    for call_id, pointer in calls.items():
        if call_id not in answered and call_id not in pending:
            text = f"tool call {call_id!r} has no tool message answering it"
            problems.append(Problem(pointer, "missing_result", text))
    return problems


def _record_call(
    call_id: Any, pointer: str, calls: dict[str, str], problems: list[Problem]
) -> None:
    if not isinstance(call_id, str) or not call_id:
        problems.append(
            Problem(
                f"{pointer}/id",
                "missing_call_id",
                "a tool call has no id to pair its result with",
            )
        )
    elif call_id in calls:
        message = f"tool call id {call_id!r} is also used at {calls[call_id]}"
        problems.append(Problem(f"{pointer}/id", "duplicate_call_id", message))
    else:
        calls[call_id] = pointer


def _record_result(
    call_id: Any,
    pointer: str,
    calls: Mapping[str, str],
    answered: set[str],
    problems: list[Problem],
) -> None:
    if call_id not in calls:
        message = f"tool result for {call_id!r}, but no earlier assistant message made a call with that id"
        problems.append(Problem(pointer, "unknown_call", message))
    elif call_id in answered:
        problems.append(
            Problem(
                pointer,
                "duplicate_result",
                f"tool call {call_id!r} is answered more than once",
            )
        )
    else:
        answered.add(call_id)


def _pending_calls(messages: list[Mapping[str, Any]]) -> set[str]:
    for message in reversed(messages):
        if message.get("role") == "tool":
            continue
        if message.get("role") == "assistant":
            return {
                call.get("id")
                for call in message.get("tool_calls") or ()
                if isinstance(call.get("id"), str)
            }
        return set()
    return set()
