# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A served call's progress: the handler's `ctx.report_progress()` sent to the MCP client as `notifications/progress`.

A client that sends `_meta.progressToken` with `tools/call` gets the call's reports for that token; without a
token nothing is set up and nothing is sent. The reports reach the sink already made sane (tools/progress.py),
from whatever thread the handler runs on (a sync handler runs in a pool): the sink keeps the latest report under a
lock and wakes one sender task on the server's event loop, which sends the reports in order; those that arrive
while one is being sent are coalesced, the latest kept. The sink never waits and never raises.

MCP requires the progress value to increase with each notification: a report whose progress is not above the
highest one kept so far is not sent (nor is one with the same progress and a new message). When the handler has
returned, the report still held is sent before the result; reports made after that are dropped. A notification
that cannot be sent (the client is gone) is dropped: it never fails the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ..tools.progress import ProgressSink
from .sdk import mcp_module

# A report as sent: progress, total (None: unknown), message.
Report = tuple[float, float | None, str | None]
# How a report goes to the client: one notification, awaited.
Send = Callable[[float, float | None, str | None], Awaitable[None]]


def progress_token(params: Any) -> str | int | None:
    """The request's `_meta.progressToken`, or None; a bool is none (True is no token 1), as the SDK reads it."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    if isinstance(token, bool) or not isinstance(token, str | int):
        return None
    return token


class ProgressForwarder:
    """One call's reports on their way to the client: `report` is the sink (any thread), `run` the sender."""

    def __init__(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        self._send = send
        self._loop = loop
        self._lock = threading.Lock()
        self._ready = asyncio.Event()
        # The latest report not yet taken by the sender.
        self._held: Report | None = None
        # The progress of the latest report kept: MCP wants each one sent above the last.
        self._highest: float | None = None
        # The sender was woken for what is held: no need to wake it again.
        self._woken = False
        self._closed = False

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        """Keep a report for the sender, and wake it; never waits, never raises."""
        try:
            with self._lock:
                if self._closed or (
                    self._highest is not None and progress <= self._highest
                ):
                    return
                self._highest = progress
                self._held = (progress, total, message)
                if self._woken:
                    return
                self._woken = True
            self._loop.call_soon_threadsafe(self._ready.set)
        except Exception:  # noqa: BLE001, S110 - a closed event loop: the report is lost, the tool goes on
            pass

    def close(self) -> None:
        """The handler has returned: later reports are dropped, and the sender stops once what is held is sent.
        Call it on the event loop's thread."""
        with self._lock:
            self._closed = True
        self._ready.set()

    async def run(self) -> None:
        """Send the reports as they come, until closed and nothing is held."""
        while True:
            await self._ready.wait()
            with self._lock:
                self._ready.clear()
                self._woken = False
                report, self._held = self._held, None
                closed = self._closed
            if report is not None:
                # A send that fails (the client is gone) loses the report: the call still answers, or tries to.
                with contextlib.suppress(Exception):
                    await self._send(*report)
            if closed:
                return


@contextlib.asynccontextmanager
async def forwarded_progress(ctx: Any) -> AsyncIterator[ProgressSink | None]:
    """The sink for a call's ToolContext while its handler runs, sending to the request's progress token (None
    without one); on leaving, what is held is sent before the caller answers."""
    token = progress_token(ctx.params)
    if token is None:
        yield None
        return

    async def send(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.send_progress_notification(
            token, progress, total, message, related_request_id=ctx.request_id
        )

    forwarder = ProgressForwarder(send, asyncio.get_running_loop())
    async with mcp_module("anyio").create_task_group() as group:
        group.start_soon(forwarder.run)
        try:
            yield forwarder.report
        finally:
            forwarder.close()
