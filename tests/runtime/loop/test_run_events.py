"""Typed run events: one frozen dataclass per kind, one JSON form (to_json / event_from_json) that round-trips every
event a run makes, refuses what is no event with a reason, and still reads events stored by the release before
events had a version (a database that release wrote, kept as a fixture)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import sqlite3
import typing
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.projects import REPO_ROOT

OLD_DATABASE = REPO_ROOT / "tests" / "fixtures" / "serve" / "runs-before-versions.sqlite"
ENVELOPE = {"type", "conversation_id", "seq", "time", "trace_id", "span_id"}


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        kinds=importlib.import_module(f"{name}._runtime.loop.event_kinds"),
    )


def a_run(sdk: SimpleNamespace, **settings: Any) -> tuple[Any, list[Any]]:
    """Two model steps, two parallel calls (one failing), one needing approval and denied."""
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        if args.location == "Nowhere":
            raise ValueError("no such place")
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=20.0, unit="celsius")

    turn = sdk.runtime.assistant_turn(
        "Looking.",
        sdk.runtime.tool_call("get_current_weather", {"location": "Paris"}, id="call_1"),
        sdk.runtime.tool_call("get_current_weather", {"location": "Nowhere"}, id="call_2"),
    )
    model = sdk.runtime.ScriptedModel([turn, "Paris is mild; Nowhere is not a place."])
    events: list[Any] = []
    result = sdk.runtime.run(
        [{"role": "user", "content": "Weather in Paris and Nowhere?"}],
        model,
        tools,
        on_event=events.append,
        **settings,
    )
    return result, events


@pytest.mark.parametrize("stream", [False, True])
def test_every_event_of_a_run_is_its_kind_and_round_trips_through_its_json_form(
    sdk: SimpleNamespace, stream: bool
) -> None:
    result, events = a_run(sdk, stream=stream)
    assert result.stop_reason == "finished"
    kinds = {event.type for event in events}
    assert {"run_started", "model_call_started", "text_delta", "tool_call_finished", "run_finished"} <= kinds
    for event in events:
        assert type(event) is sdk.kinds.EVENT_CLASSES[event.type]
        form = event.to_json()
        assert form["version"] == sdk.runtime.EVENTS_VERSION
        assert set(form["data"]) == {event.JSON_NAMES.get(name, name) for name in event.FIELDS}
        # Through text as SSE and the store carry it.
        again = sdk.runtime.event_from_json(json.loads(json.dumps(form)))
        assert again == event, (event, again)
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.seq = 0
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    finished = [e for e in events if e.type == "model_call_finished"]
    assert finished and all(e.model == "scripted" for e in finished), finished


def test_the_stream_pieces_made_on_the_fast_path_equal_those_the_constructor_makes(sdk: SimpleNamespace) -> None:
    _, events = a_run(sdk, stream=True)
    deltas = [e for e in events if e.type in ("text_delta", "reasoning_delta", "tool_call_delta")]
    assert deltas, "a streamed run with calls has text and call pieces"
    for event in deltas:
        fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
        assert type(event)(**fields) == event
        assert set(vars(event)) == set(fields)


def test_each_kind_is_a_frozen_dataclass_with_a_literal_type_and_the_union_names_them_all(sdk: SimpleNamespace) -> None:
    classes = sdk.kinds.EVENT_CLASSES
    assert tuple(classes) == typing.get_args(sdk.kinds.EventType)
    assert set(typing.get_args(sdk.runtime.RunEvent)) == set(classes.values())
    for kind, cls in classes.items():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        hints = typing.get_type_hints(cls)
        assert typing.get_args(hints["type"]) == (kind,), kind
        assert cls.__doc__ and cls.__doc__.strip(), f"{cls.__name__} has no docstring"
        assert set(cls.FIELDS) | ENVELOPE == {f.name for f in dataclasses.fields(cls)}


def test_an_errors_type_keeps_its_json_name(sdk: SimpleNamespace) -> None:
    event = sdk.runtime.ErrorEvent(conversation_id="c", seq=4, message="boom", error_type="overloaded", retry=2)
    form = event.to_json()
    assert form["type"] == "error" and form["data"]["type"] == "overloaded" and form["data"]["retry"] == 2
    assert sdk.runtime.event_from_json(form) == event


@pytest.mark.parametrize(
    ("form", "said"),
    [
        ([], "a run event is a JSON object"),
        (
            {"type": "text_delta", "seq": 1, "data": {"text": "a"}, "version": 2},
            "version 2; this release reads version 1",
        ),
        ({"type": "telepathy", "seq": 1, "data": {}}, "'telepathy' is no kind of run event"),
        ({"type": "text_delta", "seq": 1, "data": []}, "data must be a JSON object"),
        ({"type": "text_delta", "seq": 1, "data": {"text": "a", "colour": 1}}, "has no field 'colour'"),
        ({"type": "text_delta", "seq": 1, "data": {}}, "needs the field 'text'"),
        ({"type": "text_delta", "seq": "1", "data": {"text": "a"}}, "seq must be a whole number"),
        ({"type": "text_delta", "seq": True, "data": {"text": "a"}}, "seq must be a whole number"),
    ],
)
def test_what_is_no_event_is_refused_with_the_reason(sdk: SimpleNamespace, form: Any, said: str) -> None:
    with pytest.raises(sdk.runtime.EventFormError, match=said.replace("(", r"\(")):
        sdk.runtime.event_from_json(form)


def test_events_stored_by_the_release_before_versions_are_still_read(sdk: SimpleNamespace) -> None:
    store = importlib.import_module(f"{sdk.package.__name__}._runtime.serve.store")
    database = sqlite3.connect(OLD_DATABASE)
    rows = database.execute(
        "SELECT e.seq, e.type, e.data, e.time, e.trace_id, e.span_id, r.conversation_id "
        "FROM toolgen_run_events e JOIN toolgen_runs r ON r.id = e.run_id ORDER BY e.run_id, e.seq"
    ).fetchall()
    assert len(rows) > 100
    seen = set()
    for seq, kind, data, at, trace, span, conversation in rows:
        stored = store.StoredEvent(seq, kind, json.loads(data), at, trace, span)
        event = stored.event(conversation)
        seen.add(type(event).__name__)
        assert event.seq == seq and event.type == kind and event.conversation_id == conversation
        # What the old row held comes back under the same names; fields added since take their defaults.
        assert {k: v for k, v in event.data.items() if k in json.loads(data)} == json.loads(data)
    assert {"ToolCallFinishedEvent", "ApprovalDecidedEvent", "ModelCallFinishedEvent", "RunFinishedEvent"} <= seen
