"""`toolgen lint`: provider limits found at build time, each with its rule, provider and line:col."""

from __future__ import annotations

import json

import toolgen

from conftest import Project

TOOLS = """\
tools:
  - name: weather.current
    description: Weather.
    inputSchema: {type: object, properties: {city: {type: string}}, required: [city]}
  - name: weather_current
    description: Weather again.
    inputSchema: {type: object}
  - name: strict_one
    description: Strict.
    strict: true
    inputSchema:
      type: object
      properties:
        a: {type: string}
        b:
          type: object
          properties: {c: {type: integer}}
          additionalProperties: false
          required: [c]
        d: {allOf: [{type: string}]}
      required: [a, b]
  - name: no_description
    inputSchema: {type: object}
"""


def test_findings_name_rule_provider_and_place(project: Project) -> None:
    project.write("schemas/lint.yaml", TOOLS)
    result = project.cli("lint", "--provider", "openai", "--provider", "gemini")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert (
        "schemas/lint.yaml:2:11: error name-pattern [openai-chat] tool name 'weather.current' must be 1-64 letters, digits, '_' or '-'"
        in lines
    )
    assert not any("[gemini]" in line and "name-pattern" in line for line in lines)  # Gemini allows dots
    assert (
        "schemas/lint.yaml:5:11: error name-duplicate-normalized [openai-chat] tool names 'weather.current' and 'weather_current' both become 'weather_current'"
        in lines
    )
    assert (
        "schemas/lint.yaml:12:7: error openai-strict-additional-properties [openai-chat] this object must set additionalProperties: false"
        in lines
    )
    assert (
        "schemas/lint.yaml:20:9: error openai-strict-required [openai-chat] property 'd' must be required (make it nullable to keep it optional)"
        in lines
    )
    assert (
        "schemas/lint.yaml:20:13: error openai-strict-keyword [openai-chat] 'allOf' is not supported in strict mode"
        in lines
    )
    assert "schemas/lint.yaml:22:11: warning description-missing tool has no description" in lines
    assert lines == sorted(
        lines, key=lambda line: (line.split(":")[0], int(line.split(":")[1]), int(line.split(":")[2]))
    )
    assert not any("property 'b'" in line for line in lines)  # b is required and closed


def test_rules_follow_the_providers_in_the_config(project: Project) -> None:
    project.write("schemas/lint.yaml", TOOLS)
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "lint:\n  providers: [mcp]\n"
    )
    findings = toolgen.lint(project.root)
    assert {f.rule for f in findings} == {"description-missing"}  # MCP accepts dots; strict is OpenAI's


def test_json_and_github_formats_and_a_clean_project(project: Project) -> None:
    clean = project.cli("lint", "--format", "json")
    assert clean.returncode == 0 and json.loads(clean.stdout) == []
    project.write("schemas/lint.yaml", TOOLS)
    as_json = json.loads(project.cli("lint", "--format", "json").stdout)
    assert {"path", "line", "col", "severity", "rule", "message", "pointer"} <= set(as_json[0])
    github = project.cli("lint", "--format", "github").stdout.splitlines()
    assert any(line.startswith("::error file=schemas/lint.yaml,line=2,col=11,title=name-pattern::") for line in github)


GEMINI = """\
tools:
  - name: plan_trip
    description: Plan a trip.
    inputSchema:
      $schema: https://json-schema.org/draft/2020-12/schema
      type: object
      properties:
        when: {type: [string, "null"], format: date}
        mode: {const: train}
        stops: {type: array, items: {$ref: "#/$defs/Stop"}, uniqueItems: true}
        budget: {oneOf: [{type: integer}, {type: string}]}
        seats: {enum: [1, 2]}
      additionalProperties: false
      $defs:
        Stop: {type: object, properties: {city: {type: string}}}
"""


def test_gemini_subset_rules_at_the_keyword(project: Project) -> None:
    project.write("schemas/trip.yaml", GEMINI)
    assert project.cli("lint", "--provider", "gemini").returncode == 0  # parametersJsonSchema takes it as written
    lines = project.cli("lint", "--provider", "gemini", "--gemini-schema", "openapi").stdout.splitlines()
    assert lines == [
        "schemas/trip.yaml:8:16: error gemini-type [gemini] `parameters` takes one type name; use nullable: true for a null alternative",
        "schemas/trip.yaml:9:16: error gemini-type [gemini] 'const' is not supported by `parameters`; a one-value string enum is",
        "schemas/trip.yaml:10:38: error gemini-ref [gemini] '$ref' is not supported by `parameters`; inline it (export --gemini-schema openapi does)",
        "schemas/trip.yaml:10:61: error gemini-keyword [gemini] 'uniqueItems' is not in Gemini's `parameters` schema subset",
        "schemas/trip.yaml:11:18: error gemini-composition [gemini] 'oneOf' is not supported by `parameters`; only anyOf is",
        "schemas/trip.yaml:12:17: error gemini-type [gemini] `parameters` enums hold strings only",
        "schemas/trip.yaml:13:7: error gemini-keyword [gemini] 'additionalProperties' is not in Gemini's `parameters` schema subset",
        "schemas/trip.yaml:14:7: error gemini-ref [gemini] '$defs' is not supported by `parameters`; inline it (export --gemini-schema openapi does)",
    ]
    exported = project.cli("export", "--format", "gemini", "--gemini-schema", "openapi")
    assert exported.returncode == 0
    assert "plan_trip: /properties/budget: oneOf sent as anyOf" in exported.stderr


def test_overlong_description_for_openai(project: Project) -> None:
    long = "x" * 1025
    project.write(
        "schemas/long.yaml", f"tools:\n  - name: wordy\n    description: {long}\n    inputSchema: {{type: object}}\n"
    )
    lines = project.cli("lint", "--provider", "openai").stdout.splitlines()
    assert lines == [
        "schemas/long.yaml:3:18: error description-length [openai-chat] description has 1025 characters; openai-chat accepts at most 1024"
    ]
    assert project.cli("lint", "--provider", "anthropic").returncode == 0
