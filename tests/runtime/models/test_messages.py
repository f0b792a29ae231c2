"""One sentence shape for every validation problem: the same bad value reads the same whichever check found it.

The paths: pydantic's errors (the generated validators), jsonschema's (the JSON Schema check and run-time tools),
toolgen's own checks (wire bodies, the models' own validators) and the generator's meta-schema checks.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
from support.projects import Project

import toolgen
from toolgen.runtime import schema_problems, schema_validator

SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "code": {"type": "string", "pattern": "^\\d{3}$"},
                    "size": {"type": "integer", "minimum": 1},
                    "unit": {"enum": ["cm", "in"]},
                },
                "required": ["name"],
            },
        }
    },
}
BAD = {"items": [{"name": 5, "code": "12a", "size": 0, "unit": "mm"}, {}]}
EXPECTED = {
    "/items/0/name": "expected a string, got 5",
    "/items/0/code": "expected a string matching '^\\d{3}$', got \"12a\"",
    "/items/0/size": "expected at least 1, got 0",
    "/items/0/unit": "expected 'cm' or 'in', got \"mm\"",
    "/items/1/name": "expected a value (it is required), got nothing",
}


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The package built and imported once for this module: its tests only read it."""
    root = tmp_path_factory.mktemp("messages") / "project"
    root.mkdir()
    project = Project(root, "messages_t_sdk")
    project.write("schemas/tools.json", json.dumps({"name": "order", "description": "d", "inputSchema": SCHEMA}))
    toolgen.build(project.root)
    sys.path.insert(0, str(project.root / "generated"))
    try:
        yield importlib.import_module("messages_t_sdk")
    finally:
        sys.path.remove(str(project.root / "generated"))
        for name in [m for m in sys.modules if m.startswith("messages_t_")]:
            del sys.modules[name]


def test_pydantic_and_jsonschema_say_the_same_sentences(sdk: ModuleType) -> None:
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("order", BAD)
    by_models = {p.pointer: p.message for p in caught.value.problems}
    by_jsonschema = {p.pointer: p.message for p in schema_problems(schema_validator(SCHEMA), BAD)}
    assert by_models == EXPECTED
    assert by_jsonschema == EXPECTED
    assert str(caught.value).splitlines()[1] == "  /items/0/code: expected a string matching '^\\d{3}$', got \"12a\""


def test_a_tool_added_at_run_time_reports_through_jsonschema_in_the_same_words(sdk: ModuleType) -> None:
    tools = sdk.Tools()
    tools.add("order_later", SCHEMA, lambda args, ctx: "ok")
    call = {"id": "c1", "type": "function", "function": {"name": "order_later", "arguments": json.dumps(BAD)}}
    outcome = tools.dispatch(call, sdk.ToolContext(conversation_id="c"))
    assert {p.pointer: p.message for p in outcome.error.problems} == EXPECTED


def test_an_extra_field_reads_the_same_from_both(sdk: ModuleType) -> None:
    closed = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    (problem,) = schema_problems(schema_validator(closed), {"a": 1, "b": 2})
    assert (problem.pointer, problem.message) == ("/b", "expected no value here (not an allowed field), got 2")
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message({"role": "user", "content": "hi", "b": 2})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/b", "expected no value here (not an allowed field), got 2")
    ]


def test_toolgen_own_checks_take_the_shape(sdk: ModuleType) -> None:
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": 5, "arguments": "{}"}}],
                },
            }
        ],
    }
    with pytest.raises(ValueError, match=r"^/choices/0/message/tool_calls/0/function/name: expected .*, got 5$"):
        importlib.import_module("messages_t_sdk.adapters").decode(body, "openai-chat")
    # The models' own check: an optional argument whose schema does not allow null.
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("order", {"items": None})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/items", "expected a value other than null (leave the field out instead), got null")
    ]


def test_the_generator_says_its_shape_errors_in_the_same_words(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/tools.json", json.dumps({"tools": [{"name": 5, "inputSchema": {"type": "object"}}]}))
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    messages = [d.message for d in caught.value.diagnostics]
    assert "/tools/0/name: expected a string, got 5" in messages, messages
    project.write(
        "schemas/tools.json",
        json.dumps(
            {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "minLength": "1"}}}}
        ),
    )
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    (finding,) = caught.value.diagnostics
    assert finding.rule == "schema-invalid"
    assert finding.message == '/inputSchema/properties/a/minLength: expected an integer, got "1"'
