# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""MCP tasks (protocol 2025-11-25): a tool whose `execution.taskSupport` is "required" called as a task.

The call goes out with `task` in its params; the server answers with a task (CreateTaskResult), which is polled
with `tasks/get` at the interval it suggests until it ends; once it ends or needs input, `tasks/result` is asked
for the tool's result (it waits for the end, and meanwhile carries the server's elicitation for the task, which
the connection answers as any other), while polling goes on for the status messages (the call's progress). The SDK has the types but not the flow, and checks a `tools/call` answer as a CallToolResult, which a
task is not: the first request goes out through its dispatcher, stamped as the session stamps its own. A call
abandoned (its time is up, the run stopped) asks the server to cancel the task.

Where a required-task tool cannot be run so (a server that does not offer task-augmented calls, a protocol
version without tasks, an SDK without the dispatcher), `task_refusal` says why and the connection refuses the
server at connect, naming the tool: its every call would fail otherwise. An "optional" tool is called plainly.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any

from ..tools.guards import ToolFailure
from .convert import TASK_SUPPORT_KEY
from .sdk import mcp_module, mcp_types

_TERMINAL = ("completed", "failed", "cancelled")
# Where a task's status messages go, as progress: (a count of them, no total, the message).
Status = Callable[[float, float | None, str | None], Awaitable[None]]
# The versions whose tools/call takes `task` (2026-07-28 moved tasks out of the core protocol).
_TASK_VERSIONS = ("2025-11-25",)
# Polling: the server's suggested interval, within these bounds (seconds).
_FASTEST_POLL, _SLOWEST_POLL, _DEFAULT_POLL = 0.05, 5.0, 1.0
# How long an abandoned task's cancel request may take before the connection gives up on it.
_CANCEL_WAIT = 5.0


def required_task_tools(definitions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tools that must be called as tasks (`execution.taskSupport: required`), in listing order."""
    return [
        d["name"]
        for d in definitions
        if isinstance(d.get("meta"), Mapping)
        and d["meta"].get(TASK_SUPPORT_KEY) == "required"
    ]


def task_refusal(session: Any) -> str | None:
    """Why this connection cannot call tools as tasks, or None when it can."""
    version = getattr(session, "protocol_version", None)
    if version not in _TASK_VERSIONS:
        return f"this connection speaks MCP {version}, where toolgen does not run tasks (it does on {_TASK_VERSIONS[0]})"
    capabilities = getattr(session, "server_capabilities", None)
    tasks = getattr(capabilities, "tasks", None)
    requests = getattr(tasks, "requests", None)
    if getattr(getattr(requests, "tools", None), "call", None) is None:
        return "the server does not offer task-augmented tools/call (capabilities.tasks.requests.tools.call)"
    if not (hasattr(session, "_dispatcher") and hasattr(session, "_stamp")):
        return "this version of the mcp SDK cannot send a task-augmented call"
    return None


async def _send(
    session: Any, method: str, params: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """One request, stamped (protocol header, for HTTP) as the session stamps its own; the answer as JSON data."""
    data: dict[str, Any] = {"method": method, "params": params}
    options: dict[str, Any] = {"timeout": timeout}
    session._stamp(data, options)
    answer = await session._dispatcher.send_raw_request(method, data["params"], options)
    if not isinstance(answer, dict):
        raise ToolFailure(
            f"the server answered {method} with {type(answer).__name__}, not an object"
        )
    return answer


def _poll_interval(task: Mapping[str, Any]) -> float:
    suggested = task.get("pollInterval")
    if (
        isinstance(suggested, (int, float))
        and not isinstance(suggested, bool)
        and math.isfinite(suggested)
    ):
        return min(max(suggested / 1000, _FASTEST_POLL), _SLOWEST_POLL)
    return _DEFAULT_POLL


def _task_of(answer: Mapping[str, Any], method: str) -> dict[str, Any]:
    task = answer.get("task", answer)  # CreateTaskResult holds it; GetTaskResult is it
    if (
        not isinstance(task, Mapping)
        or not isinstance(task.get("taskId"), str)
        or task.get("status") is None
    ):
        raise ToolFailure(
            f"the server's answer to {method} is not a task (no taskId and status)"
        )
    return dict(task)


async def _cancel(session: Any, task_id: str) -> None:
    """Ask the server to stop a task this connection no longer waits for; what it says back does not matter."""
    anyio = mcp_module("anyio")
    # A server that cannot cancel it has still been told.
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(_CANCEL_WAIT),
        suppress(Exception),
    ):
        await _send(session, "tasks/cancel", {"taskId": task_id}, _CANCEL_WAIT)


async def call_as_task(
    session: Any,
    name: str,
    arguments: Any,
    timeout: float,
    on_status: Status | None = None,
) -> Any:
    """Call `name` as an MCP task and wait for its result (a CallToolResult); ToolFailure for a task that ended
    without one. Bounded by the caller's deadline; each request by `timeout`. Each new statusMessage of the task
    goes to `on_status` as progress (a count of them, no total, the message)."""
    types = mcp_types()
    # The server keeps the task (and its result) this long: past the call's own time limit.
    params = {
        "name": name,
        "arguments": dict(arguments) if isinstance(arguments, Mapping) else arguments,
        "task": {"ttl": int((timeout + 60) * 1000)},
    }
    answer = await _send(session, "tools/call", params, timeout)
    if "task" not in answer:  # a server may answer in place; that is the tool's result
        return types.CallToolResult.model_validate(answer, by_name=False)
    followed = _Followed(session, _task_of(answer, "tools/call"), timeout, on_status)
    try:
        await followed.to_the_end()
    finally:
        # Abandoned, or not followed to its end: the server may stop it.
        if followed.answer is None:
            await _cancel(session, followed.task["taskId"])
    if followed.failure is not None:
        error = followed.failure
        if not isinstance(error, mcp_module("mcp.shared.exceptions").MCPError):
            raise error
        ended = followed.task["status"]
        ended = ended if ended in ("failed", "cancelled") else "ended"
        why = followed.task.get("statusMessage") if ended != "ended" else None
        raise ToolFailure(f"the task {ended} without a result: {why or error.message}")
    return types.CallToolResult.model_validate(followed.answer, by_name=False)


class _Followed:
    """One task followed to its end: polled with tasks/get for its status, its result asked for with tasks/result
    once it ends or needs input (that request waits for the end, and carries the server's questions meanwhile)."""

    def __init__(
        self,
        session: Any,
        task: dict[str, Any],
        timeout: float,
        on_status: Status | None,
    ) -> None:
        self.session, self.task, self.timeout, self.on_status = (
            session,
            task,
            timeout,
            on_status,
        )
        self.answer: dict[str, Any] | None = None
        self.failure: Exception | None = None
        self._said: list[str] = []

    async def _fetch(self, done: Any) -> None:
        try:
            self.answer = await _send(
                self.session,
                "tasks/result",
                {"taskId": self.task["taskId"]},
                self.timeout,
            )
        except Exception as error:  # noqa: BLE001 - kept, and raised outside the task group unwrapped
            self.failure = error
        done.set()

    async def _report(self) -> None:
        message = self.task.get("statusMessage")
        if (
            self.on_status is not None
            and isinstance(message, str)
            and message not in self._said[-1:]
        ):
            self._said.append(message)
            await self.on_status(float(len(self._said)), None, message)

    async def to_the_end(self) -> None:
        anyio = mcp_module("anyio")
        done = anyio.Event()
        async with anyio.create_task_group() as group:
            fetching = False
            while True:
                await self._report()
                if not fetching and self.task["status"] in (
                    *_TERMINAL,
                    "input_required",
                ):
                    group.start_soon(self._fetch, done)
                    fetching = True
                if self.task["status"] in _TERMINAL:
                    break  # the group waits for the result
                with anyio.move_on_after(_poll_interval(self.task)):
                    await done.wait()
                if done.is_set():
                    break
                try:
                    answer = await _send(
                        self.session,
                        "tasks/get",
                        {"taskId": self.task["taskId"]},
                        self.timeout,
                    )
                    self.task = _task_of(answer, "tasks/get")
                except Exception as error:  # noqa: BLE001 - raised by the caller, not as an exception group
                    self.failure = error
                    group.cancel_scope.cancel()
                    break
