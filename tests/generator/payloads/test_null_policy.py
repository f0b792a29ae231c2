"""One answer for null: `toolgen validate` and dispatch decide the same on the same recorded calls.

Null for an optional argument whose schema does not allow null is refused, as JSON Schema says; only a tool sent
in OpenAI strict mode (`strict: true`, or `export: strict: true` for every tool) reads it as the argument left
out, because the schema that mode sends makes every optional argument nullable (docs/generated-package.md, "Null and absent arguments").
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from support.projects import Project

import toolgen
from toolgen.core.diagnostics import Severity

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
        "days": {"type": "integer", "minimum": 1},
        "note": {"type": ["string", "null"]},
        "where": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["street"],
        },
    },
    "required": ["city"],
}
# (arguments, accepted by a tool sent as written, accepted by a tool sent in strict mode)
RECORDS = [
    ({"city": "Paris"}, True, True),
    ({"city": "Paris", "unit": None}, False, True),
    ({"city": "Paris", "days": None}, False, True),
    ({"city": "Paris", "note": None}, True, True),  # the schema allows null here: a value, not "absent"
    ({"city": "Paris", "where": {"street": "x", "zip": None}}, False, True),
    ({"city": None}, False, False),  # required: null is never "absent"
    ({"city": "Paris", "where": {"street": None}}, False, False),
    ({"city": "Paris", "days": 0, "unit": None}, False, False),  # null read as absent leaves days wrong
]


def _tools(strict: bool | None) -> list[dict[str, Any]]:
    tool = {"name": "forecast", "inputSchema": SCHEMA}
    return [tool if strict is None else {**tool, "strict": strict}]


@contextmanager
def _sdk(project: Project) -> Iterator[ModuleType]:
    generated = str(project.root / "generated")
    sys.path.insert(0, generated)
    try:
        yield importlib.import_module(project.package)
    finally:
        sys.path.remove(generated)
        for name in [m for m in sys.modules if m == project.package or m.startswith(project.package + ".")]:
            del sys.modules[name]


def _verdicts(project: Project) -> tuple[list[bool], list[bool], list[Any]]:
    """What `toolgen validate` and dispatch say of each record, and the arguments each handler got."""
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "forecast", "arguments": json.dumps(arguments)}}
        for i, (arguments, _, _) in enumerate(RECORDS)
    ]
    path = project.write("calls.jsonl", "".join(json.dumps(call) + "\n" for call in calls))
    findings = list(toolgen.validate([path], kind="tool-call", root=project.root))
    refused_lines = {d.line for d in findings if d.severity is Severity.ERROR}
    validated = [i + 1 not in refused_lines for i in range(len(RECORDS))]
    with _sdk(project) as sdk:
        tools = sdk.Tools()
        seen: list[Any] = []

        @tools.forecast.handler
        def forecast(args: Any, ctx: Any) -> str:
            seen.append(args)
            return "sunny"

        dispatched = [not tools.dispatch(call).is_error for call in calls]
    return validated, dispatched, seen


@pytest.mark.parametrize(
    ("strict", "export_strict"),
    [(None, False), (False, False), (True, False), (None, True)],
    ids=["as-written", "strict-false", "strict-true", "export-strict"],
)
def test_validate_and_dispatch_give_one_answer_for_null(
    make_project: Callable[..., Project], strict: bool | None, export_strict: bool
) -> None:
    project = make_project(package=f"nulls_{'strict' if strict else 'plain'}_{int(export_strict)}")
    if export_strict:
        project.write("toolgen.yaml", (project.root / "toolgen.yaml").read_text() + "export:\n  strict: true\n")
    project.write("schemas/tools.json", json.dumps({"tools": _tools(strict)}))
    toolgen.build(project.root)
    validated, dispatched, seen = _verdicts(project)
    null_as_absent = strict is True or export_strict
    expected = [sent_strict if null_as_absent else as_written for _, as_written, sent_strict in RECORDS]
    assert validated == expected
    assert dispatched == expected
    if null_as_absent:
        # A null read as absent is absent for the handler too: the default applies, the field was not set.
        second = seen[1]
        assert second.unit == "c" and "unit" not in second.model_fields_set


def test_a_refused_null_says_to_leave_the_argument_out(make_project: Callable[..., Project]) -> None:
    project = make_project(package="nulls_message")
    project.write("schemas/tools.json", json.dumps({"tools": _tools(None)}))
    toolgen.build(project.root)
    path = project.write(
        "call.json",
        json.dumps(
            {
                "id": "c",
                "type": "function",
                "function": {"name": "forecast", "arguments": json.dumps({"city": "Paris", "days": None})},
            }
        ),
    )
    findings = list(toolgen.validate([path], kind="tool-call", root=project.root))
    assert [(d.rule, d.severity) for d in findings] == [("arguments-invalid", Severity.ERROR)]
    assert "/days" in findings[0].message and "null" in findings[0].message
    with _sdk(project) as sdk:
        tools = sdk.Tools()
        tools.forecast.handler(lambda args, ctx: "sunny")
        outcome = tools.dispatch(json.loads(path.read_text()))
        assert outcome.error is not None and outcome.error.kind == "invalid_arguments"
        assert [p.pointer for p in outcome.error.problems] == ["/days"]


@pytest.mark.parametrize("strict", [None, True])
def test_tools_added_at_run_time_follow_the_same_rule(
    make_project: Callable[..., Project], strict: bool | None
) -> None:
    project = make_project(package=f"nulls_added_{strict}")
    project.write("schemas/tools.json", json.dumps({"tools": _tools(None)}))
    toolgen.build(project.root)
    with _sdk(project) as sdk:
        tools = sdk.Tools()
        seen: list[Any] = []
        tools.add("search", SCHEMA, lambda args, ctx: seen.append(args) or "ok", strict=strict)
        for arguments, as_written, sent_strict in RECORDS:
            call = {"id": "c", "type": "function", "function": {"name": "search", "arguments": json.dumps(arguments)}}
            assert (not tools.dispatch(call).is_error) == (sent_strict if strict else as_written), arguments
        if strict:
            assert seen[1] == {"city": "Paris"}
