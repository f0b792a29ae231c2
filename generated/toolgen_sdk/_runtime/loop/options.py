# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The settings of a run, declared once: RunOptions to build and pass around, RunSettings for keyword calls.

run(), run_events(), arun() and arun_events() take `options=RunOptions(...)`, the same settings as keywords
(`stream=True, max_steps=8`), or both: keywords override the options' fields. RunSettings lists the keywords
with the types of RunOptions' fields, so a type checker checks every keyword call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from .events import RunEvent
from .policies import Approver, Budget, CancelToken, Hooks
from .recovery import (
    DEFAULT_STREAM_RETRY,
    StreamRetry,
    TokenEstimate,
    estimate_tokens,
)


@dataclass(frozen=True)
class RunOptions:
    """How a run goes.

    conversation_id: names the run in its events and in ToolContext (default: a new random id).
    stream: call the model streaming (text deltas reach on_event as they come). max_steps: model calls at most.
    max_tool_calls: tool calls at most over the run. budget: trims the conversation before each model call.
    approve: decides calls to tools that require approval (none configured: denied). hooks: callbacks around every
    model and tool call. on_event: called with every event of the run, as it happens (awaited in arun() when
    async). cancel: a token checked between steps and stream events, and watched while a model call, a stream or a
    tool call is waited for (stop reason `cancelled`, or the token's own `reason`). deadline: seconds the whole
    run may take, counted from its start (stop reason `deadline`). A tool call running when either fires gets a
    short grace, then is abandoned, answered as not finished. settings: generation settings for every request: the
    portable ones (max_tokens, temperature, reasoning_effort, ...) in each wire's spelling and the wire's own
    (frequency_penalty, thinking, ...) as given (wires/settings_types.py has a type per wire); one the model's
    wire cannot carry raises UnsupportedSettings before any request, or, with on_unsupported="note", is left out
    with a `note` event naming it. values: handed to every handler in ToolContext.values. stream_retry: which
    failed model calls are made again, and how often (None: never). token_estimate: counts the tokens of a
    conversation for the budget hook's BudgetInfo.estimated_input_tokens (default: about four characters a token).
    agent_name: names the run's `invoke_agent` span. tracer_provider, meter_provider: where the run's
    OpenTelemetry spans and metrics go (default: the global providers; nothing is recorded without
    opentelemetry-api or a configured SDK).
    """

    conversation_id: str | None = None
    stream: bool = False
    max_steps: int = 10
    max_tool_calls: int = 50
    budget: Budget | None = None
    approve: Approver | None = None
    hooks: Hooks | None = None
    on_event: Callable[[RunEvent], Any] | None = None
    cancel: CancelToken | None = None
    deadline: float | None = None
    settings: Mapping[str, Any] | None = None
    on_unsupported: Literal["error", "note"] = "error"
    values: Mapping[str, Any] | None = None
    stream_retry: StreamRetry | None = DEFAULT_STREAM_RETRY
    token_estimate: TokenEstimate | None = estimate_tokens
    agent_name: str | None = None
    tracer_provider: Any = None
    meter_provider: Any = None

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.max_tool_calls < 0:
            raise ValueError(
                "max_steps must be at least 1 and max_tool_calls at least 0"
            )
        if self.deadline is not None and not self.deadline > 0:
            raise ValueError(
                f"deadline must be a number of seconds above 0, not {self.deadline!r}"
            )
        if self.on_unsupported not in ("error", "note"):
            raise ValueError(
                f"on_unsupported must be 'error' or 'note', not {self.on_unsupported!r}"
            )


class RunSettings(TypedDict, total=False):
    """RunOptions' fields as keywords: the same names, the same types (a test holds them in step)."""

    conversation_id: str | None
    stream: bool
    max_steps: int
    max_tool_calls: int
    budget: Budget | None
    approve: Approver | None
    hooks: Hooks | None
    on_event: Callable[[RunEvent], Any] | None
    cancel: CancelToken | None
    deadline: float | None
    settings: Mapping[str, Any] | None
    on_unsupported: Literal["error", "note"]
    values: Mapping[str, Any] | None
    stream_retry: StreamRetry | None
    token_estimate: TokenEstimate | None
    agent_name: str | None
    tracer_provider: Any
    meter_provider: Any


def run_options(options: RunOptions | None, settings: Mapping[str, Any]) -> RunOptions:
    """The options of one call: `options` (or the defaults) with the keyword settings put over them.

    `settings` is a RunSettings where a type checker has looked; it is checked here too, for callers without one.
    """
    if options is not None and not isinstance(options, RunOptions):
        raise TypeError(
            f"options must be a RunOptions, not {type(options).__name__}: "
            "pass settings as keywords, or RunOptions(...)"
        )
    base = options if options is not None else RunOptions()
    if not settings:
        return base
    unknown = sorted(set(settings) - set(RunSettings.__annotations__))
    if unknown:
        # dataclasses.replace would say "unexpected keyword" about replace(), not about the run.
        raise TypeError(f"unknown run setting(s): {', '.join(unknown)}")
    return dataclasses.replace(base, **settings)
