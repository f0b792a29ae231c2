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
    # call id -> (message index, call index): pointers are spelled only for the problems that name them.
    calls: dict[str, tuple[int, int]] = {}
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in calls and call_id not in answered:
                answered.add(call_id)
            else:
                _bad_result(call_id, f"/{i}/tool_call_id", calls, problems)
        elif role == "assistant":
            tool_calls = message.get("tool_calls")
            if not tool_calls:
                continue
            for j, call in enumerate(tool_calls):
                call_id = call.get("id")
                if isinstance(call_id, str) and call_id and call_id not in calls:
                    calls[call_id] = (i, j)
                else:
                    _bad_call(call_id, (i, j), calls, problems)
    if len(answered) == len(calls):
        return problems  # every call answered (the answered are all calls): nothing pending to look for
    pending = _pending_calls(messages) if allow_pending else set()
    for call_id, at in calls.items():
        if call_id not in answered and call_id not in pending:
            text = f"tool call {call_id!r} has no tool message answering it"
            problems.append(Problem(_call_pointer(at), "missing_result", text))
    return problems


def _call_pointer(at: tuple[int, int]) -> str:
    return f"/{at[0]}/tool_calls/{at[1]}"


def _bad_call(
    call_id: Any,
    at: tuple[int, int],
    calls: dict[str, tuple[int, int]],
    problems: list[Problem],
) -> None:
    pointer = f"{_call_pointer(at)}/id"
    if not isinstance(call_id, str) or not call_id:
        problems.append(
            Problem(
                pointer,
                "missing_call_id",
                "a tool call has no id to pair its result with",
            )
        )
    else:
        first = _call_pointer(calls[call_id])
        message = f"tool call id {call_id!r} is also used at {first}"
        problems.append(Problem(pointer, "duplicate_call_id", message))


def _bad_result(
    call_id: Any,
    pointer: str,
    calls: Mapping[str, tuple[int, int]],
    problems: list[Problem],
) -> None:
    if call_id not in calls:
        message = f"tool result for {call_id!r}, but no earlier assistant message made a call with that id"
        problems.append(Problem(pointer, "unknown_call", message))
    else:
        problems.append(
            Problem(
                pointer,
                "duplicate_result",
                f"tool call {call_id!r} is answered more than once",
            )
        )


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
