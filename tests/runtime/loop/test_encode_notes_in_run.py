"""What the encoder moves or drops for a wire reaches the run as `note` events, over real HTTP on 127.0.0.1.

On openai-chat a tool message holds text only: an image a tool returns goes into a user message after the tool
results (wires/placement.py). The body sent holds it there, and run() and arun() each report the move once as a
`note` naming the part; a ScriptedModel run, which encodes nothing, has no such note.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, queue, serving

USER = [{"role": "user", "content": "Take a snapshot of the dashboard."}]
IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "media_type": "image/png"}
MODES = ["sync", "async"]


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        argparse=importlib.import_module("argparse"),
        app=importlib.import_module(f"{name}._runtime.app.main"),
    )


def _completion(message: dict[str, Any], finish: str) -> Answer:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    return Answer(json.dumps(body).encode())


CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "snapshot", "arguments": "{}"}}],
}
CALL_AGAIN = {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "id": "call_2"}]}
DONE = {"role": "assistant", "content": "The dashboard is green."}


@pytest.fixture
def server() -> Iterator[LocalServer]:
    # Three model calls: the tool call, then one more step (a second call) so the note's repetition shows,
    # then the answer.
    answers = [_completion(CALL, "tool_calls"), _completion(CALL_AGAIN, "tool_calls"), _completion(DONE, "stop")]
    yield from serving(queue(*answers))


def _tools(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()
    tools.add("snapshot", {"type": "object"}, lambda args, ctx: "ignored")
    tools.entry("snapshot").result_converter(lambda _: [{"type": "text", "text": "the dashboard:"}, IMAGE])
    return tools


def _drive(sdk: SimpleNamespace, mode: str, model: Any, tools: Any, events: list[Any]) -> Any:
    if mode == "sync":
        return sdk.runtime.run(USER, model, tools, stream=False, on_event=events.append)
    return asyncio.run(sdk.runtime.arun(USER, model, tools, stream=False, on_event=events.append))


@pytest.mark.parametrize("mode", MODES)
def test_an_image_moved_out_of_a_tool_result_is_a_note_of_the_run(
    sdk: SimpleNamespace, server: LocalServer, mode: str
) -> None:
    model = sdk.runtime.HTTPModel(server.base + "/v1", "m", wire="openai-chat", api_key="sk-test")
    events: list[Any] = []
    try:
        result = _drive(sdk, mode, model, _tools(sdk), events)
    finally:
        model.close()
    assert result.stop_reason == "finished" and result.text == "The dashboard is green."

    # What the server got at the second call: the tool message holds the text, the image follows in a user message.
    second = json.loads(server.seen[1].body)
    tool, carrier = second["messages"][2], second["messages"][3]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert all(part.get("type") == "text" for part in tool["content"]), tool
    assert carrier["role"] == "user"
    assert carrier["content"][0] == {"type": "text", "text": "The result of tool call call_1 (snapshot) also holds:"}
    assert carrier["content"][1]["type"] == "image_url"
    assert carrier["content"][1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="

    notes = [e for e in events if e.type == "note"]
    # The first request had nothing out of place; the second and third hold the first result's image, the third
    # also the second result's: one note per distinct part, not one per model call.
    assert [n.data["message"] for n in notes] == [
        "/messages/2/content/1: openai-chat takes no image in a tool result; moved to a user message after the "
        "tool results, behind a text naming its call",
        "/messages/4/content/1: openai-chat takes no image in a tool result; moved to a user message after the "
        "tool results, behind a text naming its call",
    ]
    assert all(n.data["setting"] is None and n.data["wire"] == "openai-chat" for n in notes)
    # Each note belongs to the model call whose request moved the part: it follows that call's start.
    order = [e.type for e in events]
    starts = [i for i, kind in enumerate(order) if kind == "model_call_started"]
    assert order.index("note") == starts[1] + 1
    assert order.index("note", starts[1] + 2) == starts[2] + 1
    # The note is a run event like any other: it serializes, and its SSE form names it.
    assert "event: note\n" in sdk.runtime.sse_encode(notes[0])


def test_the_command_line_printer_shows_notes_on_stderr(sdk: SimpleNamespace) -> None:
    import io

    out, err = io.StringIO(), io.StringIO()
    options = sdk.argparse.Namespace(events=False, stream=True)
    printer = sdk.app._Printer(options, out, err)
    event = sdk.runtime.NoteEvent(conversation_id="c", seq=1, message="/messages/2/content/1: moved")
    printer(event)
    assert err.getvalue() == "note: /messages/2/content/1: moved\n" and out.getvalue() == ""


@pytest.mark.parametrize("mode", MODES)
def test_a_scripted_run_has_no_encoding_notes(sdk: SimpleNamespace, mode: str) -> None:
    turn = sdk.runtime.assistant_turn(None, sdk.runtime.tool_call("snapshot", {}, id="call_1"))
    model = sdk.runtime.ScriptedModel([turn, "The dashboard is green."])
    events: list[Any] = []
    result = _drive(sdk, mode, model, _tools(sdk), events)
    assert result.stop_reason == "finished" and result.text == "The dashboard is green."
    # The image reached the model where the tool put it: nothing was encoded, so nothing moved.
    tool = model.requests[1].messages[2]
    assert tool["role"] == "tool" and tool["content"][1] == IMAGE
    assert [e for e in events if e.type == "note"] == []


# A served (durable) run: the same loop, its model calls made in DBOS steps. The process prints the run's events.
DURABLE = """
import json, sys, time
from pathlib import Path
from toolgen.runtime import DurableRuns, HTTPModel, Registry, RunOptions

here, base = Path(sys.argv[1]), sys.argv[2]
registry = Registry({})
registry.add("snapshot", {"type": "object"}, lambda args, ctx: "ignored")
registry.entry("snapshot").result_converter(lambda _: [{"type": "text", "text": "the dashboard:"}, IMAGE])
model = HTTPModel(base, "m", wire="openai-chat", api_key="sk-test")
runs = DurableRuns(
    registry, model, database_url=f"sqlite:///{here / 'runs.sqlite'}", name="notes-test", options=RunOptions(stream=False)
)
run_id = runs.start([{"role": "user", "content": "Take a snapshot of the dashboard."}], None)
deadline = time.monotonic() + 60
while run_id not in runs.store.runs_with_status("finished") and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps([[e.type, dict(e.data)] for e in runs.store.events_after(run_id, 0)]))
runs.close()
model.close()
"""


def test_a_served_run_notes_the_move_too(server: LocalServer, tmp_path: Any) -> None:
    import subprocess
    import sys

    pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
    script = tmp_path / "durable_notes.py"
    script.write_text(DURABLE.replace("IMAGE", repr(IMAGE)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path), server.base + "/v1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout.strip().splitlines()[-1])
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "run_finished", kinds
    notes = [data for kind, data in events if kind == "note"]
    assert [n["message"].split(":")[0] for n in notes] == ["/messages/2/content/1", "/messages/4/content/1"]
    assert all("moved to a user message" in n["message"] and n["wire"] == "openai-chat" for n in notes)
    second = json.loads(server.seen[1].body)
    assert second["messages"][3]["role"] == "user" and second["messages"][3]["content"][1]["type"] == "image_url"
