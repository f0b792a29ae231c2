"""`toolgen validate --summary` on this machine: per tool calls, invalid calls by rule, results missing; the same
findings as without it, the same report whether the file is read in one process or in blocks on every core."""

from __future__ import annotations

import json

import pytest
from support.projects import Project

import toolgen
from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.payloads.validation import report as validate_report
from toolgen.payloads.validation.local import Tally
from toolgen.payloads.validation.report import validate_with_summary
from toolgen.payloads.validation.summary import MAX_UNKNOWN_TOOLS, OTHER_UNKNOWN, Summary, ToolStats

CALL = '{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": "%s"}}'
GOOD_ARGS = '{\\"location\\": \\"Oslo\\"}'
ANSWER = '{"role": "tool", "tool_call_id": "%s", "content": "21 C"}'
CONVERSATIONS = [
    # a valid call with its result; a bad call with its result; a call with no result; an unknown tool; not JSON
    f'[{{"role": "assistant", "tool_calls": [{CALL % ("a", "get_current_weather", GOOD_ARGS)}]}}, {ANSWER % "a"}]',
    f'[{{"role": "assistant", "tool_calls": [{CALL % ("b", "get_current_weather", "{}")}]}}, {ANSWER % "b"}]',
    f'[{{"role": "assistant", "tool_calls": [{CALL % ("c", "get_current_weather", GOOD_ARGS)}]}}]',
    f'[{{"role": "assistant", "tool_calls": [{CALL % ("d", "nope", "{}")}]}}, {ANSWER % "d"}]',
    '[{"role": "user", "content": ',
]


def test_the_table_and_the_json_count_calls_invalid_calls_by_rule_and_results_missing(project: Project) -> None:
    project.write("logs/chat.jsonl", "\n".join(CONVERSATIONS) + "\n")
    table = project.cli("validate", "--summary", "logs/chat.jsonl", "--as", "messages")
    assert table.returncode == 3, table.stderr  # the exit code is the one without --summary: a record is not JSON
    assert table.stdout.splitlines() == [
        "| tool | calls | invalid calls | invalid % | invalid calls by rule | results missing |",
        "| --- | ---: | ---: | ---: | --- | ---: |",
        # The call with no result is invalid too: `--as messages` pairs every call with its result.
        "| get_current_weather | 3 | 2 | 66.7% | arguments-invalid 1, pairing-invalid 1 | 1 |",
        "| nope (unknown) | 1 | 1 | 100.0% | unknown-tool 1 | 0 |",
        "",
        "| rule | findings |",
        "| --- | ---: |",
        "| arguments-invalid | 1 |",
        "| json-invalid | 1 |",
        "| pairing-invalid | 1 |",
        "| unknown-tool | 1 |",
        "",
        "5 record(s) as messages: 3 invalid, 1 unreadable",
    ]
    report = json.loads(
        project.cli("validate", "--summary", "--format", "json", "logs/chat.jsonl", "--as", "messages").stdout
    )
    assert report["records"] == 5 and report["invalid"] == 3 and report["unreadable"] == 1
    assert report["tools"][0] == {
        "tool": "get_current_weather",
        "known": True,
        "calls": 3,
        "invalid_calls": 2,
        "invalid_by_rule": {"arguments-invalid": 1, "pairing-invalid": 1},
        "results_missing": 1,
    }
    assert report["findings_by_rule"] == {
        "arguments-invalid": 1,
        "json-invalid": 1,
        "pairing-invalid": 1,
        "unknown-tool": 1,
    }
    github = project.cli("validate", "--summary", "--format", "github", "logs/chat.jsonl", "--as", "messages")
    assert github.returncode == 2 and "--summary prints a table" in github.stderr


def test_kinds_without_results_say_so_and_a_tool_never_called_has_a_row(project: Project) -> None:
    project.write("calls.jsonl", CALL % ("a", "nope", "{}") + "\n")
    report = json.loads(
        project.cli("validate", "--summary", "--format", "json", "calls.jsonl", "--as", "tool-call").stdout
    )
    assert [(t["tool"], t["calls"], t["results_missing"]) for t in report["tools"]] == [
        ("get_current_weather", 0, None),
        ("nope", 1, None),
    ]


def test_provider_requests_are_counted_on_their_canonical_calls(project: Project) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_current_weather", "arguments": '{"location": 5}'}}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]}
    project.write("wire.jsonl", json.dumps(body) + "\n")
    summary = Summary()
    found = list(
        validate_with_summary(
            [project.root / "wire.jsonl"], kind="openai-chat.request", root=project.root, summary=summary
        )
    )
    assert [d.rule for d in found] == ["pairing-invalid", "arguments-invalid"]
    assert summary.tools["get_current_weather"] == ToolStats(
        True, calls=1, invalid=1, by_rule={"arguments-invalid": 1, "pairing-invalid": 1}, results_missing=1
    )


def test_blocks_on_every_core_give_the_findings_and_report_of_one_process(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = project.write("big.jsonl", "\n".join(CONVERSATIONS * 400) + "\n")
    plain_tally = Tally()
    plain = list(toolgen.validate([log], kind="messages", root=project.root, workers=1, tally=plain_tally))
    serial, serial_tally = Summary(), Tally()
    in_one = list(validate_with_summary([log], kind="messages", root=project.root, summary=serial, tally=serial_tally))
    monkeypatch.setattr(validate_report, "PARALLEL_THRESHOLD", 1000)
    monkeypatch.setattr(validate_report, "BLOCK_BYTES", 5000)
    blocks, blocks_tally = Summary(), Tally()
    in_blocks = list(
        validate_with_summary([log], kind="messages", root=project.root, workers=2, summary=blocks, tally=blocks_tally)
    )
    assert in_one == in_blocks == plain and serial_tally == blocks_tally == plain_tally
    assert serial == blocks and serial.tools["get_current_weather"].calls == 3 * 400


def test_invented_tool_names_cannot_grow_the_report_without_bound() -> None:
    names = [f"invented_{n:03}" for n in range(MAX_UNKNOWN_TOOLS + 5)]
    whole = Summary()
    for name in names:
        part = Summary()
        part.tools[name] = ToolStats(False, calls=1)
        whole.merge(part)
    assert len(whole.tools) == MAX_UNKNOWN_TOOLS + 1 and whole.tools[OTHER_UNKNOWN].calls == 5
    assert [name for name, _ in whole.rows()][-1] == OTHER_UNKNOWN
    whole.add_finding(Diagnostic("f", 1, 1, Severity.ERROR, "unknown-tool", "x"))
    table = whole.table("tool-call", Tally(records=25, invalid=25))
    assert "| invented_000 (unknown) | 1 | 0 | 0.0% | - | - |" in table and "| unknown-tool | 1 |" in table
