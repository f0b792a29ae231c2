"""Deep immutability of the generated models: every container of every message kind, of the tool definition and
of a tool's arguments and result is a tuple or a read-only dict, at any depth, and refuses every change in place;
model_copy(update=...) makes a changed copy; dumps, validation errors and the plain validators stay as they were."""

from __future__ import annotations

import copy
import importlib
import json
import pickle
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pydantic
import pytest
from support.projects import Project

import toolgen
from toolgen.codegen.targets.model_rewrites import rewrite_models
from toolgen.runtime import FrozenDict

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
}
# Provider extras hold whatever a provider sent: objects and arrays at any depth.
EXTRAS = {"openai-chat": {"cache": [1, {"k": ["v", {"deep": []}]}], "seen": True}, "signatures": ["s1", "s2"]}

MESSAGES = {
    "system": {"role": "system", "content": [{"type": "text", "text": "Be brief."}], "name": "ops", "extras": EXTRAS},
    "user": {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is on these?"},
            {"type": "image", "url": "https://example.com/a.png", "detail": "low"},
            {"type": "audio", "data": "AAAA", "format": "wav"},
            {"type": "file", "file_id": "f1", "filename": "a.pdf"},
        ],
        "extras": EXTRAS,
    },
    "assistant": {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "Look it up.", "signature": "sig"},
            {"type": "text", "text": "On it."},
        ],
        "tool_calls": [CALL, {**CALL, "id": "c2", "function": {"name": "todo_read", "arguments": "{}"}}],
        "extras": {"anthropic": {"blocks": [{"type": "server_tool_use", "input": {"q": ["a", "b"]}}]}},
    },
    "tool": {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "text", "text": "21 degrees"}],
        "name": "get_current_weather",
        "is_error": False,
        "extras": EXTRAS,
    },
}
DEFINITION = {
    "name": "search",
    "input_schema": {
        "type": "object",
        "properties": {"q": {"type": "array", "items": {"type": "string"}}},
        "required": ["q"],
    },
    "output_schema": {"type": "object", "additionalProperties": {"type": "integer"}},
    "meta": {"tags": ["web", "read"], "owner": {"team": "search", "oncall": ["a"]}},
    "annotations": {"readOnlyHint": True},
}


def _frozen_dict(value: Any) -> bool:
    """A FrozenDict: toolgen's own, or the copy in a generated package's runtime."""
    kind = type(value)
    return kind.__name__ == "FrozenDict" and kind.__module__.endswith("runtime.models.frozen")


def _walk(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every value reachable from `value` (models' fields and extra fields, items, dict values), with its place."""
    yield where, value
    if isinstance(value, pydantic.BaseModel):
        for name, item in {**value.__dict__, **(value.__pydantic_extra__ or {})}.items():
            yield from _walk(item, f"{where}.{name}")
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{where}[{key!r}]")


def _changes(container: Any) -> list[Callable[[], Any]]:
    """Every way to change a list or a dict in place, aimed at `container`."""
    if isinstance(container, dict):
        key = next(iter(container), "k")
        return [
            lambda: container.__setitem__("new", 1),
            lambda: container.__delitem__(key),
            lambda: container.update({"new": 1}),
            lambda: container.pop(key),
            lambda: container.popitem(),
            lambda: container.clear(),
            lambda: container.setdefault("new", 1),
            lambda: container.__ior__({"new": 1}),
        ]
    return [
        lambda: container.append(1),
        lambda: container.extend([1]),
        lambda: container.insert(0, 1),
        lambda: container.remove(container[0]),
        lambda: container.pop(),
        lambda: container.clear(),
        lambda: container.sort(),
        lambda: container.reverse(),
        lambda: container.__setitem__(0, 1),
        lambda: container.__delitem__(0),
    ]


def _assert_frozen_through(model: pydantic.BaseModel) -> int:
    """Every container `model` holds is a tuple or a FrozenDict, every change of one and every assignment to a
    model raises, and the model's data is what it was; returns how many containers were tried."""
    before = model.model_dump()
    tried = 0
    for where, value in list(_walk(model)):
        assert not isinstance(value, (list, set)), f"{where}: a {type(value).__name__}"
        assert not isinstance(value, dict) or _frozen_dict(value), f"{where}: a {type(value).__name__}"
        if isinstance(value, (tuple, dict)) and value:
            tried += 1
            for change in _changes(value):
                with pytest.raises((TypeError, AttributeError)):
                    change()
            if isinstance(value, dict):
                value.__init__({"new": 1})  # filled once, by __new__: changes nothing
                assert "new" not in value
        if isinstance(value, pydantic.BaseModel):
            for name in type(value).model_fields:
                with pytest.raises(pydantic.ValidationError, match="frozen"):
                    setattr(value, name, None)
                with pytest.raises(pydantic.ValidationError, match="frozen"):
                    delattr(value, name)
            if value.model_extra:
                with pytest.raises(TypeError):
                    value.model_extra["new"] = 1
    assert model.model_dump() == before
    return tried


def _plain_types(value: Any, where: str = "") -> None:
    """Dumped data holds lists and dicts, as before: no tuple or FrozenDict reaches the caller."""
    assert type(value) is not tuple and not _frozen_dict(value), f"{where}: a {type(value).__name__} in a dump"
    if isinstance(value, list):
        for index, item in enumerate(value):
            _plain_types(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _plain_types(item, f"{where}[{key!r}]")


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_every_container_of_every_message_kind_refuses_change(source_package: ModuleType, kind: str) -> None:
    message = source_package.validate_message(MESSAGES[kind])
    assert _assert_frozen_through(message) >= 5
    assert type(message.content) is tuple and _frozen_dict(message.extras.model_extra)
    assert message.model_dump(exclude_unset=True) == MESSAGES[kind]


def test_the_tool_definition_the_conversation_and_the_small_models_refuse_change(source_package: ModuleType) -> None:
    definition = source_package.validate_tool_definition(DEFINITION)
    assert _assert_frozen_through(definition) >= 8
    assert definition.input_schema["properties"]["q"]["items"] == {"type": "string"}
    assert definition.meta["owner"]["oncall"] == ("a",)
    conversation = source_package.models.Messages.model_validate(list(MESSAGES.values()))
    assert type(conversation.root) is tuple
    assert _assert_frozen_through(conversation) >= 20
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        conversation.root = ()
    for model in (
        source_package.validate_tool_call(CALL),
        source_package.validate_usage({"input_tokens": 3, "output_tokens": 4, "reasoning_tokens": 1}),
        source_package.models.Finish.model_validate({"reason": "stop", "raw": "end_turn"}),
    ):
        _assert_frozen_through(model)
    # The parsed arguments are a new value on each call: changing one changes no message.
    call = source_package.validate_tool_call(CALL)
    parsed = call.function.parsed_arguments()
    parsed["location"] = "Rome"
    assert call.function.parsed_arguments() == {"location": "Paris"}


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_dumps_are_the_lists_and_dicts_given_and_read_back_equal(source_package: ModuleType, kind: str) -> None:
    model_type = type(source_package.validate_message(MESSAGES[kind]))
    message = model_type.model_validate(MESSAGES[kind])
    dumped = message.model_dump(exclude_unset=True)
    assert dumped == MESSAGES[kind]
    _plain_types(message.model_dump())
    _plain_types(message.model_dump(mode="json"))
    assert json.loads(message.model_dump_json(exclude_unset=True)) == MESSAGES[kind]
    assert model_type.model_validate(dumped) == message
    assert model_type.model_validate_json(message.model_dump_json()) == message
    assert pickle.loads(pickle.dumps(message)) == message and copy.deepcopy(message) == message
    # Frozen all the way down, a message can be hashed and kept in a set.
    assert hash(message) == hash(model_type.model_validate(MESSAGES[kind]))
    assert len({message, model_type.model_validate(MESSAGES[kind])}) == 1


def test_model_copy_changes_a_copy_and_freezes_what_it_is_given(source_package: ModuleType) -> None:
    message = source_package.validate_message(MESSAGES["assistant"])
    call = source_package.validate_tool_call({**CALL, "id": "c9"})
    changed = message.model_copy(update={"tool_calls": [*message.tool_calls, call], "refusal": "no"})
    assert type(changed.tool_calls) is tuple and [c.id for c in changed.tool_calls] == ["c1", "c2", "c9"]
    assert [c.id for c in message.tool_calls] == ["c1", "c2"] and message.refusal is None
    extras = message.extras.model_copy(update={"added": {"a": [1, {"b": []}]}})
    assert extras.model_extra is not None and extras.model_extra["added"] == {"a": (1, {"b": ()})}
    _assert_frozen_through(message.model_copy(update={"extras": extras}, deep=True))
    definition = source_package.validate_tool_definition(DEFINITION)
    retagged = definition.model_copy(update={"meta": {"tags": ["new"]}})
    assert _frozen_dict(retagged.meta) and retagged.meta["tags"] == ("new",)
    assert definition.meta["tags"] == ("web", "read")
    _assert_frozen_through(retagged)
    # Built without validation, a model is frozen all the same.
    built = type(message).model_construct(role="assistant", tool_calls=[call], extras=None, content=[])
    assert type(built.tool_calls) is tuple and built.content == ()
    root = source_package.models.Messages.model_construct([message])
    assert type(root.root) is tuple


def test_tuples_and_read_only_dicts_are_taken_where_lists_and_dicts_are(source_package: ModuleType) -> None:
    models = source_package.models
    message = source_package.validate_message(MESSAGES["assistant"])
    again = models.AssistantMessage(
        role="assistant", content=message.content, tool_calls=message.tool_calls, extras=message.extras
    )
    assert again == message
    definition = source_package.validate_tool_definition(DEFINITION)
    assert models.ToolDefinition(name="search", inputSchema=definition.input_schema, meta=definition.meta).meta == (
        DEFINITION["meta"] | {"tags": ("web", "read"), "owner": {"team": "search", "oncall": ("a",)}}
    )
    # A read-only dict is a dict: JSON encoders and isinstance checks take it as one.
    assert (
        isinstance(definition.meta, dict)
        and json.loads(json.dumps(definition.input_schema)) == DEFINITION["input_schema"]
    )


# What the generated validators said before containers were frozen, and what pydantic said under them.
BAD = [
    (
        "validate_message",
        {"role": "assistant", "tool_calls": "x"},
        [("/tool_calls", 'expected an array, got "x"')],
    ),
    (
        "validate_message",
        {"role": "user", "content": {"type": "text", "text": "a"}},
        [("/content", 'expected a string or an array, got {"type": "text", "text": "a"}')],
    ),
    (
        "validate_message",
        {"role": "user", "content": [{"type": "text"}, {"type": "image", "url": 5}]},
        [
            ("/content/0/text", "expected a value (it is required), got nothing"),
            ("/content/1/url", "expected a string, got 5"),
        ],
    ),
    (
        "validate_message",
        {"role": "tool", "tool_call_id": "a", "content": [], "extras": []},
        [("/extras", "expected an object, got []")],
    ),
    (
        "validate_tool_definition",
        {"name": "t", "inputSchema": [], "meta": [1]},
        [("/inputSchema", "expected a boolean or an object, got []"), ("/meta", "expected an object, got [1]")],
    ),
    ("validate_messages", {"role": "user"}, [("", 'expected an array, got {"role": "user"}')]),
]


@pytest.mark.parametrize(("function", "data", "problems"), BAD)
def test_validation_problems_are_those_of_lists_and_dicts(
    source_package: ModuleType, function: str, data: Any, problems: list[tuple[str, str]]
) -> None:
    with pytest.raises(source_package.ToolgenValidationError) as caught:
        getattr(source_package, function)(data)
    assert [(p.pointer, p.message) for p in caught.value.problems] == problems


def test_pydantic_s_own_errors_still_speak_of_lists_and_dicts(source_package: ModuleType) -> None:
    models = source_package.models

    def errors(model: type[pydantic.BaseModel], data: Any) -> list[tuple[str, tuple[Any, ...], str]]:
        with pytest.raises(pydantic.ValidationError) as caught:
            model.model_validate(data)
        return [(e["type"], e["loc"], e["msg"]) for e in caught.value.errors()]

    assert errors(models.AssistantMessage, {"role": "assistant", "tool_calls": "x"}) == [
        ("list_type", ("tool_calls",), "Input should be a valid list")
    ]
    assert errors(models.ToolDefinition, {"name": "t", "inputSchema": {}, "meta": 1}) == [
        ("dict_type", ("meta",), "Input should be a valid dictionary")
    ]
    assert errors(models.RunCommandArgs, {"program": "ls", "args": ["a"] * 65}) == [
        ("too_long", ("args",), "List should have at most 64 items after validation, not 65")
    ]


TOOLS = """\
tools:
  - name: plan_trip
    inputSchema:
      type: object
      properties:
        stops: {type: array, items: {type: string}, minItems: 1, maxItems: 3}
        legs:
          type: array
          items:
            type: object
            properties:
              via: {type: array, items: {type: string}, default: []}
              times: {type: array, items: {type: array, items: {type: integer}}}
            required: [times]
        prefs: {type: object}
        budget: {type: object, additionalProperties: {type: array, items: {type: number}}, minProperties: 1}
        note: {description: Anything at all.}
        seats: {type: object, properties: {level: {type: string}}, additionalProperties: {type: array, items: {type: integer}}}
        tags: {type: array, items: {type: string}, default: [a, b]}
      required: [stops]
    outputSchema:
      type: object
      properties:
        rows: {type: array, items: {type: object}}
        by_day: {type: object, additionalProperties: {type: object}}
"""
ARGS = {
    "stops": ["Paris", "Rome"],
    "legs": [{"via": ["Lyon"], "times": [[8, 30], [12]]}, {"times": []}],
    "prefs": {"seat": "window", "avoid": ["night", {"train": ["slow"]}]},
    "budget": {"food": [10.5, 20.0]},
    "note": [{"free": {"form": [1]}}],
    "seats": {"level": "second", "car": [12, 14]},
    "shoes": ["an", {"extra": "key"}],
}


@pytest.fixture(scope="module")
def trip_sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("deep_frozen")
    project = Project(root, "deep_frozen_sdk")
    project.write("schemas/trip.yaml", TOOLS)
    toolgen.build(project.root)
    sys.path.insert(0, str(project.root / "generated"))
    try:
        yield importlib.import_module("deep_frozen_sdk")
    finally:
        sys.path.remove(str(project.root / "generated"))
        for name in [m for m in sys.modules if m.startswith("deep_frozen_sdk")]:
            del sys.modules[name]


def test_a_tools_arguments_and_result_are_frozen_all_the_way_down(trip_sdk: ModuleType) -> None:
    args = trip_sdk.validate_tool_arguments("plan_trip", ARGS)
    assert _assert_frozen_through(args) >= 12
    assert args.legs[1].via == () and args.tags == ("a", "b"), "defaults are frozen too"
    assert args.legs[0].times == ((8, 30), (12,)) and args.prefs["avoid"][1] == {"train": ("slow",)}
    assert args.model_extra == {"shoes": ("an", {"extra": "key"})}
    assert args.seats.model_extra == {"car": (12, 14)}, "typed extra fields are frozen too"
    dumped = args.model_dump(exclude_unset=True)
    assert dumped == ARGS and json.loads(args.model_dump_json(exclude_unset=True)) == ARGS
    _plain_types(args.model_dump())
    assert type(args).model_validate(dumped) == args
    changed = args.model_copy(update={"stops": ["Oslo"], "prefs": {"seat": ["aisle"]}})
    assert changed.stops == ("Oslo",) and changed.prefs == {"seat": ("aisle",)} and args.stops == ("Paris", "Rome")
    _assert_frozen_through(changed)
    # A handler may hand back what its frozen arguments hold: checked as the JSON it stands for.
    spec = trip_sdk.TOOLS["plan_trip"]
    echoed = spec.check_result({"rows": (args.prefs,), "by_day": FrozenDict({"mon": args.prefs})})
    assert echoed.model_dump(exclude_unset=True) == {"rows": [ARGS["prefs"]], "by_day": {"mon": ARGS["prefs"]}}
    assert spec.check_arguments({"stops": args.stops, "prefs": args.prefs}, json_text=False).stops == ("Paris", "Rome")
    result = trip_sdk.validate_tool_result("plan_trip", {"rows": [{"a": [1]}], "by_day": {"mon": {"x": {"y": []}}}})
    assert _assert_frozen_through(result) >= 4
    assert result.model_dump() == {"rows": [{"a": [1]}], "by_day": {"mon": {"x": {"y": []}}}}


def test_a_list_s_or_dict_s_bounds_keep_their_errors_and_the_plain_validator_stays(trip_sdk: ModuleType) -> None:
    def problems(data: Any) -> list[tuple[str, str]]:
        with pytest.raises(trip_sdk.ToolgenValidationError) as caught:
            trip_sdk.validate_tool_arguments("plan_trip", data)
        return [(p.pointer, p.message) for p in caught.value.problems]

    assert problems({"stops": []}) == [("/stops", "expected at least 1 item, got []")]
    assert problems({"stops": ["a"] * 4}) == [("/stops", 'expected at most 3 items, got ["a", "a", "a", "a"]')]
    assert problems({"stops": ["a"], "budget": {}}) == [("/budget", "expected at least 1 field, got {}")]
    assert problems({"stops": ["a"], "legs": [{"times": [[1, "2"]]}]}) == [
        ("/legs/0/times/0/1", 'expected an integer, got "2"')
    ]
    models = trip_sdk.models
    with pytest.raises(pydantic.ValidationError) as caught:
        models.PlanTripArgs.model_validate({"stops": [], "budget": {}})
    assert [(e["type"], e["msg"]) for e in caught.value.errors()] == [
        ("too_short", "List should have at least 1 item after validation, not 0"),
        ("too_short", "Dictionary should have at least 1 item after validation, not 0"),
    ]
    schema = models.PlanTripArgs.model_json_schema()["properties"]
    assert schema["stops"]["minItems"] == 1 and schema["stops"]["maxItems"] == 3
    # The conversions to tuples and read-only dicts are no obstacle to the validator built of plain data.
    plain = trip_sdk._runtime.plain_validator(models.PlanTripArgs.__pydantic_core_schema__)
    assert plain is not None and plain.isinstance_python(ARGS, strict=True)
    assert not plain.isinstance_python({"stops": []}, strict=True)
    messages = trip_sdk._runtime.plain_validator(models.Messages.__pydantic_core_schema__)
    assert messages is not None and messages.isinstance_python(list(MESSAGES.values()), strict=True)


def test_the_rewrite_freezes_types_and_moves_length_bounds_but_leaves_values() -> None:
    head = (
        "# header\nfrom __future__ import annotations\n\nfrom typing import Annotated, Any\n"
        "from pydantic import Field, RootModel\nfrom sdk._runtime import SchemaModel\n\n\n"
    )
    body = (
        "class Trip(SchemaModel):\n"
        "    stops: Annotated[list[str] | None, Field(description='list[str] or dict', max_length=3, min_length=1)] = None\n"
        "    budget: Annotated[dict[str, list[Any]], Field(min_length=1)]\n"
        "    name: Annotated[str, Field(min_length=1)]\n"
        "    note: Any = None\n\n\n"
        "class Seats(SchemaModel):\n"
        "    __annotations__ = {'__pydantic_extra__': Dict[str, list[int]]}\n\n\n"
        "class ToolgenRoot(RootModel[Any]):\n    root: Any\n"
    )
    rewritten = rewrite_models(head + body, "ToolgenRoot", (), frozenset(), "sdk")
    assert "\nfrom sdk._runtime import FrozenAny, FrozenList, FrozenMap, FrozenSize\n" in rewritten
    assert (
        "    stops: Annotated[FrozenList[str] | None, Field(description='list[str] or dict'),"
        " FrozenSize(max_length=3, min_length=1)] = None\n" in rewritten
    )
    assert "    budget: Annotated[FrozenMap[str, FrozenList[FrozenAny]], FrozenSize(min_length=1)]\n" in rewritten
    assert "    name: Annotated[str, Field(min_length=1)]\n" in rewritten, "a string's bounds stay in its Field"
    assert "    note: FrozenAny = None\n" in rewritten
    assert "    __annotations__ = {'__pydantic_extra__': Dict[str, FrozenList[int]]}\n" in rewritten


def test_a_read_only_dict_is_a_dict_that_cannot_change() -> None:
    data = FrozenDict({"a": [1, {"b": [2]}], "c": {"d": {3}}})
    assert data == {"a": (1, {"b": (2,)}), "c": {"d": frozenset({3})}} and isinstance(data, dict)
    assert type(data["a"][1]) is FrozenDict and type(data["c"]) is FrozenDict
    assert json.dumps(FrozenDict({"a": [1, {"b": [2]}]})) == '{"a": [1, {"b": [2]}]}'
    for change in _changes(data):
        with pytest.raises(TypeError, match="cannot be changed in place"):
            change()
    mutable = dict(data)
    mutable["new"] = 1
    assert "new" not in data and type(data | {"x": 1}) is dict
    assert pickle.loads(pickle.dumps(data)) == data and copy.deepcopy(data) == data and copy.copy(data) is data
    assert FrozenDict.fromkeys(["k"], [1]) == {"k": (1,)} and hash(FrozenDict({"k": 1})) == hash(FrozenDict(k=1))


# A tool with a field named `list`: the models module then imports the builtin under another name
# (`from builtins import list as list_aliased`) and every model of the module writes that: its containers must be
# frozen as much as the plain name's are.
BUILTIN_NAMED = """\
  - name: name_the_builtins
    description: A field named like a builtin.
    inputSchema:
      type: object
      properties:
        list:
          anyOf:
            - {type: object, properties: {a: {type: string}}}
            - {type: "null"}
        stops: {type: array, items: {type: string}, minItems: 1}
"""


@pytest.fixture(scope="module")
def shadowed_sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("deep_frozen_shadowed")
    project = Project(root, "shadowed_sdk")
    project.write("schemas/trip.yaml", TOOLS + BUILTIN_NAMED)
    toolgen.build(project.root)
    generated = project.root / "generated"
    assert not [p for p in generated.rglob("*.py") if "_aliased" in p.read_text(encoding="utf-8")]
    sys.path.insert(0, str(generated))
    try:
        yield importlib.import_module("shadowed_sdk")
    finally:
        sys.path.remove(str(generated))
        for name in [m for m in sys.modules if m.startswith("shadowed_sdk")]:
            del sys.modules[name]


def test_a_field_named_like_a_builtin_leaves_every_model_frozen(shadowed_sdk: ModuleType) -> None:
    args = shadowed_sdk.validate_tool_arguments("plan_trip", ARGS)
    assert _assert_frozen_through(args) >= 12
    named = shadowed_sdk.validate_tool_arguments("name_the_builtins", {"list": {"a": "x"}, "stops": ["a", "b"]})
    assert named.stops == ("a", "b") and named.list.a == "x"
    with pytest.raises(shadowed_sdk.ToolgenValidationError) as caught:
        shadowed_sdk.validate_tool_arguments("name_the_builtins", {"stops": []})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [("/stops", "expected at least 1 item, got []")]
