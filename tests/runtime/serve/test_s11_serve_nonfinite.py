"""Every JSON the service sends is strict (RFC 8259, what a browser's JSON.parse takes): a NaN or Infinity, which JSON
has no form for, is written as null and the JSON says where, in the SSE events, the run's answer and the store alike."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.projects import SOURCE_PACKAGE

from toolgen.runtime.loop.events import (
    FinalMessageEvent,
    ModelCallFinishedEvent,
    TextDeltaEvent,
    event_from_json,
    finite_json,
    sse_encode,
)

NAN, INF = float("nan"), float("inf")


def _refuse(word: str) -> Any:
    raise AssertionError(f"{word} is not JSON")


def strict(text: str | bytes) -> Any:
    """`text` read as JSON.parse reads it: NaN, Infinity and -Infinity are no JSON."""
    return json.loads(text, parse_constant=_refuse)


def _sse_json(text: str) -> tuple[str, int, dict[str, Any]]:
    """One SSE text's event name, id and (strict) JSON."""
    fields: dict[str, list[str]] = {}
    assert text.endswith("\n\n"), text
    for line in text[:-2].split("\n"):
        key, _, value = line.partition(": ")
        fields.setdefault(key, []).append(value)
    return fields["event"][0], int(fields["id"][0]), strict("\n".join(fields["data"]))


NOTE = "a number JSON cannot carry (NaN or Infinity) is sent as null: "


def _finished(seq: int = 4) -> ModelCallFinishedEvent:
    return ModelCallFinishedEvent(
        conversation_id="c1",
        seq=seq,
        time=1.8e9,
        step=1,
        attempt=1,
        duration_ms=INF,
        usage={"input_tokens": 3, "cost": NAN, "per/part": [1.5, -INF]},
        model="m",
    )


# -- sse_encode --


def test_sse_encode_writes_nan_and_infinity_as_null_and_the_event_says_where() -> None:
    name, seq, form = _sse_json(sse_encode(_finished()))
    assert (name, seq) == ("model_call_finished", 4)
    assert form["data"] == {
        "step": 1,
        "attempt": 1,
        "duration_ms": None,
        "finish_reason": None,
        "usage": {"input_tokens": 3, "cost": None, "per/part": [1.5, None]},
        "model": "m",
    }
    assert form["notes"] == [
        NOTE + "Infinity at /data/duration_ms, NaN at /data/usage/cost, -Infinity at /data/usage/per~1part/1"
    ]
    # The one JSON form still reads it (the note is beside `data`, not in it).
    again = event_from_json(form)
    assert isinstance(again, ModelCallFinishedEvent) and again.duration_ms is None
    assert again.usage == {"input_tokens": 3, "cost": None, "per/part": [1.5, None]}


def test_sse_encode_of_a_finite_event_is_as_before_without_notes() -> None:
    text = sse_encode(TextDeltaEvent(conversation_id="c1", seq=2, time=None, text="a\nb"))
    assert text == (
        'event: text_delta\nid: 2\ndata: {"version":1,"type":"text_delta","conversation_id":"c1","seq":2,'
        '"time":null,"trace_id":null,"span_id":null,"data":{"text":"a\\nb"}}\n\n'
    )


def test_sse_encode_of_nan_beside_a_lone_surrogate_is_strict_ascii_json() -> None:
    event = FinalMessageEvent(
        conversation_id="c1",
        seq=9,
        message={"role": "assistant", "content": "Pa\ud800ris é", "score": NAN, NAN: 1},
        stop_reason="finished",
    )
    text = sse_encode(event)
    text.encode("utf-8")  # what the wire carries
    _, _, form = _sse_json(text)
    assert form["data"]["message"] == {"role": "assistant", "content": "Pa\ud800ris é", "score": None, "NaN": 1}
    assert form["notes"] == [NOTE + "NaN at /data/message/score, NaN at /data/message/NaN"]


def test_finite_json_copies_only_what_it_changes() -> None:
    kept = {"a": [1, 2.5, "x"], "b": {"c": None}}
    value, replaced = finite_json(kept)
    assert value is kept and replaced == []
    value, replaced = finite_json({"a": [1, INF], "b": kept["b"]})
    assert value == {"a": [1, None], "b": {"c": None}} and value["b"] is kept["b"]
    assert replaced == [("/a/1", INF)]


# -- the store --


@pytest.fixture
def store(tmp_path: Path) -> Any:
    pytest.importorskip("sqlalchemy", reason="the serve extra (sqlalchemy) is not installed")
    from toolgen.runtime.serve.store import RunStore

    opened = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        yield opened
    finally:
        opened.close()


def _rows(database: Path, query: str, *args: Any) -> list[Any]:
    with sqlite3.connect(database) as connection:
        return connection.execute(query, args).fetchall()


def test_the_store_keeps_strict_json_and_a_run_read_back_says_what_it_said(store: Any, tmp_path: Path) -> None:
    from toolgen.runtime.serve.store_rows import event_row

    database = tmp_path / "runs.sqlite"
    state = {"messages": [{"role": "user", "content": "hi", "weight": NAN}], "metrics": {"seconds": INF}}
    store.create_run("r1", "c1", state)
    store.write("r1", [event_row(_finished(1), 1)])

    [(kept_state,)] = _rows(database, "SELECT state FROM toolgen_runs WHERE id = 'r1'")
    [(data, sse)] = _rows(database, "SELECT data, sse FROM toolgen_run_events WHERE run_id = 'r1'")
    note = NOTE + "NaN at /messages/0/weight, Infinity at /metrics/seconds"
    assert strict(kept_state)["notes"] == [note]
    assert strict(data)["duration_ms"] is None and strict(data)["usage"]["cost"] is None
    # What the stream sends, live or read again later: the same text sse_encode makes, the note with it.
    assert sse == sse_encode(_finished(1))
    assert store.sse_after("r1", "c1", 0) == [sse]

    run = store.run("r1")
    assert run.state["messages"][0] == {"role": "user", "content": "hi", "weight": None}
    assert run.state["notes"] == [note]
    # Written again as it was read (a restart's replay): the note stays, once.
    store.update_run("r1", "running", run.state)
    assert store.run("r1").state["notes"] == [note]


def test_an_sse_text_an_earlier_release_kept_with_nan_is_sent_again_strict(store: Any, tmp_path: Path) -> None:
    from toolgen.runtime.serve.store_rows import event_row

    database = tmp_path / "runs.sqlite"
    store.create_run("r1", "c1", {"messages": []})
    store.write("r1", [event_row(_finished(1), 1)])
    # What a release before events were strict kept: NaN in the data and in its SSE text.
    lax = json.dumps({"step": 1, "attempt": 1, "duration_ms": NAN, "usage": None}, separators=(",", ":"))
    lax_sse = f'event: model_call_finished\nid: 1\ndata: {{"version":1,"seq":1,"data":{lax}}}\n\n'
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE toolgen_run_events SET data = ?, sse = ? WHERE run_id = 'r1'", (lax, lax_sse))

    [text] = store.sse_after("r1", "c1", 0)
    _, _, form = _sse_json(text)
    assert form["data"]["duration_ms"] is None
    assert form["notes"] == [NOTE + "NaN at /data/duration_ms"]


# -- a served run --

NAN_TOOLS = """
from {package} import Tools

def tools():
    bound = Tools()

    @bound.get_current_weather.handler
    def weather(args, ctx):
        number = {{"Paris": float("nan"), "London": float("inf")}}.get(args.location, float("-inf"))
        return {{"location": args.location, "temperature": number, "unit": "celsius"}}

    return bound
"""


def _stream(server: Any, run_id: str) -> list[tuple[str, int, dict[str, Any]]]:
    """The run's SSE events, each data read strictly."""
    found = []
    with server.client.stream("GET", f"/runs/{run_id}/events") as answer:
        assert answer.status_code == 200
        block: list[str] = []
        for line in answer.iter_lines():
            if line == "":
                if block and not all(part.startswith(":") for part in block):
                    found.append(_sse_json("\n".join(block) + "\n\n"))
                block = []
            else:
                block.append(line)
    return found


def test_a_served_tool_returning_nan_and_infinity_ends_its_call_as_an_error_and_every_json_is_strict(
    tmp_path: Path, serve: Callable[..., Any]
) -> None:
    from support.serve_helpers import over

    (tmp_path / "nan_tools.py").write_text(NAN_TOOLS.format(package=SOURCE_PACKAGE), encoding="utf-8")
    database = tmp_path / "runs.sqlite"
    server = serve("--database", f"sqlite:///{database}", "--tools", "nan_tools:tools")
    run_id = server.start_run("What is the weather in Paris, London and Rome?")
    server.wait_for(run_id, over)

    answer = server.client.get(f"/runs/{run_id}")
    assert answer.status_code == 200
    state = strict(answer.content)
    assert (state["status"], state["stop_reason"]) == ("finished", "finished")
    assert "notes" not in state  # nothing was replaced: the results never reached the run as numbers
    tools = [m for m in state["messages"] if m["role"] == "tool"]
    assert [m.get("is_error") for m in tools] == [True, True, True]
    why = (
        "Error: the tool's result could not be sent back: ValueError: Out of range float values are not JSON compliant"
    )
    assert {m["content"] for m in tools} == {why}

    events = _stream(server, run_id)
    assert [seq for _, seq, _ in events] == list(range(1, len(events) + 1))
    finished = [form["data"] for name, _, form in events if name == "tool_call_finished"]
    assert [(data["status"], data["error_kind"], data["content"]) for data in finished] == [
        ("error", data["error_kind"], why) for data in finished
    ]
    assert events[-1][0] == "run_finished"
    assert strict(server.client.get("/runs", params={"limit": 10}).content)["runs"][0]["id"] == run_id

    # What the store keeps is strict too, and so is what it sends of an event an earlier release kept with NaN.
    for (text,) in _rows(database, "SELECT state FROM toolgen_runs"):
        strict(text)
    for data, sse in _rows(database, "SELECT data, sse FROM toolgen_run_events WHERE run_id = ?", run_id):
        strict(data)
        _sse_json(sse)
    [(seq, data, sse)] = _rows(
        database,
        "SELECT seq, data, sse FROM toolgen_run_events WHERE run_id = ? AND type = 'model_call_finished' "
        "ORDER BY seq LIMIT 1",
        run_id,
    )

    def nan(text: str) -> str:
        return re.sub(r'"duration_ms":[^,}]+', '"duration_ms":NaN', text, count=1)

    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE toolgen_run_events SET data = ?, sse = ? WHERE run_id = ? AND seq = ?",
            (nan(data), nan(sse), run_id, seq),
        )
    again = {seq_: form for _, seq_, form in _stream(server, run_id)}
    assert again[seq]["data"]["duration_ms"] is None
    assert again[seq]["notes"] == [NOTE + "NaN at /data/duration_ms"]
    assert "Traceback" not in server.log()
