# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What steers a run from outside: approvals, the budget hook, the hooks around calls and the cancel token."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..models.base import ToolSpec
from ..tools.entry import ToolContext
from ..wires.canonical import Request, Response
from .results import CallReport


def json_text(value: Any) -> str:
    """Compact JSON, the way tool-call arguments are written when they come as data."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class CancelToken(Protocol):
    """Anything with is_set(): threading.Event, asyncio.Event, or your own flag.

    It is read from the loop's thread while the loop waits (every few tens of milliseconds), so is_set() must be
    cheap and must not block. A token may also carry an attribute `reason`, "cancelled" or "deadline": once it
    is set, the run stops with that reason (a durable engine folds its own deadline into its token this way);
    without one, with `cancelled`. A token with `watched = False` is never read while the loop waits, only
    between steps: one set only by what the run's own model and tool calls return (a durable run's) needs no
    watching.
    """

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class ApprovalRequest:
    """A call to a tool that requires approval, before its handler runs."""

    conversation_id: str
    call_id: str
    name: str
    arguments: str
    tool: ToolSpec


@dataclass(frozen=True)
class Approval:
    """The answer to an ApprovalRequest: approve, deny (with a reason the model reads), or edit the arguments."""

    decision: Literal["approve", "deny", "edit"]
    reason: str | None = None
    arguments: str | None = None

    @classmethod
    def approve(cls) -> Approval:
        return cls("approve")

    @classmethod
    def deny(cls, reason: str = "the user denied this call") -> Approval:
        return cls("deny", reason)

    @classmethod
    def edit(
        cls, arguments: str | Mapping[str, Any], reason: str | None = None
    ) -> Approval:
        text = arguments if isinstance(arguments, str) else json_text(dict(arguments))
        return cls("edit", reason, text)


# Spelled without quotes, so that typing.get_type_hints resolves them wherever they are used.
Approver = Callable[[ApprovalRequest], Approval | bool | Awaitable[Approval | bool]]
Conversation = list[dict[str, Any]]


@dataclass(frozen=True)
class BudgetInfo:
    """What a budget hook knows before a model call: the step about to run and the tokens used so far.

    estimated_input_tokens: the run's token estimate of the conversation about to be sent (so that a budget can
    act before the first call). overflow: the provider has just refused the conversation as longer than its
    context window; the call is made once more with what the hook returns.
    """

    step: int
    usage: Mapping[str, int]
    last_input_tokens: int | None
    estimated_input_tokens: int | None = None
    overflow: bool = False


# Called before every model call with the conversation; returns the conversation to use from then on (trimmed or
# with old turns summarized), or None to leave it as it is. Async in arun() if you like.
Budget = Callable[
    [Conversation, BudgetInfo], Conversation | None | Awaitable[Conversation | None]
]


def keep_last_turns(turns: int, *, above_input_tokens: int | None = None) -> Budget:
    """A budget hook keeping the system messages and the last `turns` user turns (a user message and what follows
    it), once the previous call's input or the estimate of the next one passes `above_input_tokens` (always,
    when None), and whenever the provider said the conversation is too long. A turn is never cut in half, so
    every tool result keeps its call."""

    def trim(
        messages: list[dict[str, Any]], info: BudgetInfo
    ) -> list[dict[str, Any]] | None:
        tokens = max(info.last_input_tokens or 0, info.estimated_input_tokens or 0)
        if (
            not info.overflow
            and above_input_tokens is not None
            and tokens <= above_input_tokens
        ):
            return None
        starts = [
            i for i, message in enumerate(messages) if message.get("role") == "user"
        ]
        if len(starts) <= turns:
            return None
        cut = starts[-turns] if turns > 0 else len(messages)
        system = [m for m in messages[:cut] if m.get("role") == "system"]
        return system + messages[cut:]

    return trim


@dataclass(frozen=True)
class Hooks:
    """Callbacks around every model call and tool call; in arun() each may be async.

    before_model may return a replacement Request (another system prompt, other settings); None keeps it.
    """

    before_model: Callable[[int, Request], Any] | None = None
    after_model: Callable[[int, Response], Any] | None = None
    before_tool: Callable[[dict[str, Any], ToolContext], Any] | None = None
    after_tool: Callable[[CallReport], Any] | None = None
