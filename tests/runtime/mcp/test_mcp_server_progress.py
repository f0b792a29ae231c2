"""toolgen's MCP server sends a tool's progress reports as `notifications/progress` for the call's token: to the
official client over stdio and streamable HTTP, in order, each above the last, the last before the result; and
the forwarder's coalescing, checked in this process."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from support.mcp_helpers import DEADLINE, child_env, http_server

mcp = pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install -e '.[mcp]'")
types = pytest.importorskip("mcp.types")

from toolgen.runtime.mcp.server_progress import (  # noqa: E402
    ProgressForwarder,
    forwarded_progress,
    progress_token,
)
from toolgen.runtime.tools.progress import MAX_PROGRESS_MESSAGE  # noqa: E402

# A server of tools that report progress. A gated tool reports step i and then waits until the client has written
# `seen-i` into the folder argv[1] names (its progress callback does), so every step is seen, however fast the
# steps come; an ungated one reports as fast as it can.
SERVER = """\
import asyncio
import sys
import time
from pathlib import Path

from toolgen.runtime import Registry, serve_mcp

GATES = Path(sys.argv[1])
STEPS = {"type": "object", "properties": {"steps": {"type": "integer"}, "gated": {"type": "boolean"}}}
EMPTY = {"type": "object", "properties": {}}
kept = []


def seen(step):
    return (GATES / f"seen-{step}").exists()


def steps_sync(args, ctx):
    for step in range(1, args["steps"] + 1):
        ctx.report_progress(step, args["steps"], f"step {step}")
        deadline = time.monotonic() + 30
        while args.get("gated") and not seen(step) and time.monotonic() < deadline:
            time.sleep(0.01)
    return {"steps": args["steps"]}


async def steps_async(args, ctx):
    for step in range(1, args["steps"] + 1):
        ctx.report_progress(step, args["steps"], f"step {step}")
        deadline = time.monotonic() + 30
        while args.get("gated") and not seen(step) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
    return {"steps": args["steps"]}


def hostile(args, ctx):
    for report in (
        (float("nan"),), ("5",), (10, None, "ten"), (7,), (float("inf"),), (10, None, "ten again"), (None,),
        (12, None, "x" * 10_000), (True,), (-3,), (20, 15, "done"), (14, 15, "back"), (b"16",),
    ):
        ctx.report_progress(*report)
    ctx.report_progress(progress=15, total=float("nan"), message=42)  # not above 15
    return {"ok": True}


def fails(args, ctx):
    ctx.report_progress(1, 2, "half")
    raise RuntimeError("broke halfway")


def keeps(args, ctx):
    kept.append(ctx)
    return {"kept": True}


def late(args, ctx):
    # The context of a call that has answered: what it reports now goes nowhere.
    kept[0].report_progress(1_000, None, "too late")
    return {"late": True}


registry = Registry({})
registry.add("steps_sync", STEPS, steps_sync)
registry.add("steps_async", STEPS, steps_async)
for name, handler in (("hostile", hostile), ("fails", fails), ("keeps", keeps), ("late", late)):
    registry.add(name, EMPTY, handler)
if "--http" in sys.argv:
    host, _, port = sys.argv[-1].rpartition(":")
    serve_mcp(registry, transport="http", host=host, port=int(port))
else:
    serve_mcp(registry)
"""

Report = tuple[float, float | None, str | None]


def in_time(function: Callable[..., Any], *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await function(*args)

    return anyio.run(bounded)


class Listener:
    """The client's side: each call's progress as its callback got it, and every progress notification that came."""

    def __init__(self, gates: Path) -> None:
        self.gates = gates
        self.notifications = 0

    async def messages(self, message: Any) -> None:
        if isinstance(message, types.ProgressNotification):
            self.notifications += 1

    async def call(self, client: Any, tool: str, arguments: dict[str, Any]) -> tuple[Any, list[Report]]:
        """The call with a progress callback: its result, and the reports seen, each before the result."""
        seen: list[Report] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))
            (self.gates / f"seen-{value:g}").touch()

        result = await client.call_tool(tool, arguments, progress_callback=progress)
        for gate in self.gates.iterdir():
            gate.unlink()
        return result, list(seen)


def _script(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "gates").mkdir()
    script = tmp_path / "progress_server.py"
    script.write_text(SERVER, encoding="utf-8")
    return script, tmp_path / "gates"


def _steps(count: int) -> list[Report]:
    return [(float(step), float(count), f"step {step}") for step in range(1, count + 1)]


async def _session(server: Any, gates: Path, mode: str) -> dict[str, Any]:
    listener = Listener(gates)
    seen: dict[str, Any] = {}
    async with mcp.Client(server, read_timeout_seconds=DEADLINE, mode=mode, message_handler=listener.messages) as c:
        for tool in ("steps_sync", "steps_async"):
            seen[f"{tool} gated"] = await listener.call(c, tool, {"steps": 4, "gated": True})
            seen[f"{tool} burst"] = await listener.call(c, tool, {"steps": 50})
        seen["no token"] = await c.call_tool("steps_sync", {"steps": 3, "gated": False})
        seen["hostile"] = await listener.call(c, "hostile", {})
        seen["fails"] = await listener.call(c, "fails", {})
        seen["keeps"] = await listener.call(c, "keeps", {})
        seen["late"] = await c.call_tool("late", {})
    seen["called back"] = sum(len(value[1]) for value in seen.values() if isinstance(value, tuple))
    seen["notifications"] = listener.notifications
    return seen


def _structured(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _check_session(seen: dict[str, Any]) -> None:
    for tool in ("steps_sync", "steps_async"):
        # Gated: every report, in order, with its total and message, each before the result.
        result, reports = seen[f"{tool} gated"]
        assert _structured(result) == {"steps": 4}
        assert reports == _steps(4)
        # As fast as the tool can: coalesced, in order, and the last report always arrives before the result.
        result, reports = seen[f"{tool} burst"]
        assert _structured(result) == {"steps": 50}
        assert reports and reports[-1] == (50.0, 50.0, "step 50")
        assert all(report in _steps(50) for report in reports)
        assert [value for value, _, _ in reports] == sorted({value for value, _, _ in reports})
    assert _structured(seen["no token"]) == {"steps": 3}
    # Only sane values, each above the last: NaN, strings, bools and decreasing numbers never go out.
    result, reports = seen["hostile"]
    assert _structured(result) == {"ok": True}
    cut = "x" * (MAX_PROGRESS_MESSAGE - 30) + f"... ({10_000 - MAX_PROGRESS_MESSAGE + 30} characters cut)"
    sane = [(10.0, None, "ten"), (12.0, None, cut), (15.0, 15.0, "done")]
    assert reports and reports[-1] == sane[-1]
    assert all(report in sane for report in reports)
    assert [value for value, _, _ in reports] == sorted({value for value, _, _ in reports})
    # A handler that raised: its report still went out before the error.
    result, reports = seen["fails"]
    assert result.is_error and "broke halfway" in result.content[0].text
    assert reports == [(1.0, 2.0, "half")]
    assert _structured(seen["keeps"][0]) == {"kept": True} and seen["keeps"][1] == []
    assert _structured(seen["late"]) == {"late": True}
    # Every notification that reached the client was one a progress callback was given: none came for the call
    # without a token, nor for the report made after its call had answered.
    assert seen["notifications"] == seen["called back"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_progress_reaches_the_official_client_over_stdio_in_both_protocol_eras(tmp_path: Path, mode: str) -> None:
    script, gates = _script(tmp_path)
    server = mcp.StdioServerParameters(
        command=sys.executable, args=[str(script), str(gates)], cwd=str(tmp_path), env=child_env()
    )
    _check_session(in_time(_session, server, gates, mode))


async def _gated_over_http(url: str, gates: Path) -> list[tuple[Any, list[Report]]]:
    listener = Listener(gates)
    async with mcp.Client(url, read_timeout_seconds=DEADLINE) as client:
        return [
            await listener.call(client, tool, {"steps": 3, "gated": True}) for tool in ("steps_sync", "steps_async")
        ]


def test_progress_reaches_the_official_client_over_streamable_http(tmp_path: Path) -> None:
    script, gates = _script(tmp_path)
    with http_server((sys.executable, str(script), str(gates)), tmp_path, child_env()) as url:
        seen = in_time(_gated_over_http, url, gates)
    for result, reports in seen:
        assert _structured(result) == {"steps": 3}
        assert reports == _steps(3)


# ---- the forwarder, in this process ----


def test_the_progress_token_is_read_as_the_sdk_reads_it() -> None:
    assert progress_token({"_meta": {"progressToken": "t-1"}}) == "t-1"
    assert progress_token({"_meta": {"progressToken": 0}}) == 0
    for params in (None, {}, {"_meta": None}, {"_meta": {"progressToken": True}}, {"_meta": {"progressToken": 1.5}}):
        assert progress_token(params) is None


def test_without_a_token_no_sink_is_set_up() -> None:
    async def sink() -> Any:
        async with forwarded_progress(SimpleNamespace(params={"name": "steps_sync"})) as sink:
            return sink

    assert anyio.run(sink) is None


class Sent:
    """What a forwarder sent; a send waits for `release` when `hold` is set, and fails when `fail` is."""

    def __init__(self) -> None:
        self.reports: list[Report] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.hold = False
        self.fail = False

    async def send(self, value: float, total: float | None, message: str | None) -> None:
        self.reports.append((value, total, message))
        self.started.set()
        if self.hold:
            await self.release.wait()
        if self.fail:
            raise BrokenPipeError("the client is gone")


def test_reports_made_while_one_is_sent_are_coalesced_to_the_latest() -> None:
    async def scenario() -> list[Report]:
        sent = Sent()
        sent.hold = True
        forwarder = ProgressForwarder(sent.send, asyncio.get_running_loop())
        sender = asyncio.ensure_future(forwarder.run())
        forwarder.report(1, 10, "one")
        await sent.started.wait()  # 1 is being sent, held up
        for value in (2, 3, 4):
            forwarder.report(value, 10, f"at {value}")
        forwarder.report(4, 10, "same value, new message")  # not above 4: dropped
        forwarder.report(2, 10, "back")  # below: dropped
        sent.release.set()
        forwarder.close()  # the handler returned: 4 is still sent, before run() ends
        forwarder.report(9, 10, "too late")
        await sender
        return sent.reports

    assert asyncio.run(scenario()) == [(1, 10, "one"), (4, 10, "at 4")]


def test_a_send_that_fails_never_stops_the_sender() -> None:
    async def scenario() -> list[Report]:
        sent = Sent()
        sent.fail = True
        forwarder = ProgressForwarder(sent.send, asyncio.get_running_loop())
        sender = asyncio.ensure_future(forwarder.run())
        forwarder.report(1, None, None)
        await sent.started.wait()
        forwarder.report(2, None, "still sent")
        forwarder.close()
        await sender
        return sent.reports

    assert asyncio.run(scenario()) == [(1, None, None), (2, None, "still sent")]


def test_reports_from_many_threads_go_out_increasing_ending_with_the_highest() -> None:
    async def scenario() -> list[Report]:
        sent = Sent()
        forwarder = ProgressForwarder(sent.send, asyncio.get_running_loop())
        sender = asyncio.ensure_future(forwarder.run())

        def reporter(start: int) -> None:
            for value in range(start, 4_000, 4):
                forwarder.report(value, None, None)

        threads = [threading.Thread(target=reporter, args=(start,)) for start in range(4)]
        await asyncio.to_thread(lambda: [(t.start(), t.join()) for t in threads])
        forwarder.close()
        await sender
        return sent.reports

    reports = asyncio.run(scenario())
    values = [value for value, _, _ in reports]
    assert values == sorted(set(values)) and values[-1] == 3_999


def test_a_report_once_the_event_loop_is_closed_is_lost_without_a_word() -> None:
    loop = asyncio.new_event_loop()
    forwarder = ProgressForwarder(Sent().send, loop)
    loop.close()
    forwarder.report(1, None, "nowhere")  # call_soon_threadsafe raises on a closed loop: swallowed
