"""`toolgen lint`: provider limits found at build time, each with its rule, provider and line:col."""

from __future__ import annotations

import json

from support.projects import Project

import toolgen

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
    # allOf cannot be strict, so export sends the tool with strict: false: an error, and the rewrites it would
    # have made are moot.
    assert (
        "schemas/lint.yaml:20:13: error openai-strict-keyword [openai-chat] strict mode cannot express this (strict mode does not support 'allOf'); export sends the tool with strict: false"
        in lines
    )
    assert not any("openai-strict-required" in line for line in lines)
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
    # Everything here export rewrites by itself: warnings saying what it will do, at the keyword, exit 0.
    assert lines == [
        "schemas/trip.yaml:8:16: warning gemini-type [gemini] export rewrites this: type ['string', 'null'] sent as nullable",
        "schemas/trip.yaml:9:16: warning gemini-type [gemini] export rewrites this: const sent as a one-value enum",
        "schemas/trip.yaml:10:38: warning gemini-ref [gemini] export rewrites this: $ref #/$defs/Stop inlined",
        "schemas/trip.yaml:10:61: warning gemini-keyword [gemini] export rewrites this: dropped uniqueItems (not in Gemini's subset; checked on dispatch)",
        "schemas/trip.yaml:11:18: warning gemini-composition [gemini] export rewrites this: oneOf sent as anyOf (Gemini's subset has only anyOf)",
        "schemas/trip.yaml:12:17: warning gemini-type [gemini] export rewrites this: non-string enum/const dropped (Gemini enums are strings; checked on dispatch)",
        "schemas/trip.yaml:13:7: warning gemini-keyword [gemini] export rewrites this: dropped additionalProperties (not in Gemini's subset; checked on dispatch)",
    ]
    assert project.cli("lint", "--provider", "gemini", "--gemini-schema", "openapi").returncode == 0
    assert (
        project.cli("lint", "--provider", "gemini", "--gemini-schema", "openapi", "--fail-on", "warning").returncode
        == 1
    )
    exported = project.cli("export", "--format", "gemini", "--gemini-schema", "openapi")
    assert exported.returncode == 0
    assert "plan_trip: /properties/budget: oneOf sent as anyOf" in exported.stderr


def _notes(stderr: str) -> set[str]:
    return {line.removeprefix("toolgen: note: ") for line in stderr.splitlines() if line.startswith("toolgen: note: ")}


def _rewrites(findings: tuple[toolgen.Diagnostic, ...], tool: str) -> set[str]:
    """Each lint warning as the export note that says the same: `tool: pointer: text`."""
    texts = set()
    for finding in findings:
        text = finding.message.split("] export rewrites this: ", 1)[1]
        pointer = finding.pointer.split("/inputSchema", 1)[1]
        for keyword in ("type", "const", "enum", "oneOf", "allOf", "$ref", "uniqueItems", "additionalProperties"):
            pointer = pointer.removesuffix(f"/{keyword}")
        texts.add(f"{tool}: {pointer or '/'}: {text}")
    return texts


def test_lint_warns_of_exactly_the_rewrites_export_makes(project: Project) -> None:
    project.write("schemas/trip.yaml", GEMINI)
    findings = toolgen.lint(project.root, providers=("gemini",), gemini="openapi")
    assert {f.severity.value for f in findings} == {"warning"}
    exported = project.cli("export", "--format", "gemini", "--gemini-schema", "openapi")
    # But the annotation dropped ($schema), which constrains no argument: export's note alone says so.
    annotation = "plan_trip: /: dropped $schema (not in Gemini's subset; annotations, they constrain no argument)"
    assert annotation in _notes(exported.stderr)
    assert not [f for f in findings if f.rule == "gemini-annotation"]
    assert _rewrites(findings, "plan_trip") == _notes(exported.stderr) - {annotation}
    strict = STRICT_FIXABLE
    project.write("schemas/trip.yaml", strict)
    findings = toolgen.lint(project.root, providers=("openai",))
    assert {(f.rule, f.severity.value) for f in findings} == {
        ("openai-strict-additional-properties", "warning"),
        ("openai-strict-required", "warning"),
        ("openai-strict-keyword", "warning"),
    }
    exported = project.cli("export", "--format", "openai")
    assert _rewrites(findings, "book") == _notes(exported.stderr)


STRICT_FIXABLE = """name: book
description: Book a seat.
strict: true
inputSchema:
  type: object
  properties:
    seat: {type: string}
    meal: {oneOf: [{type: string}, {type: integer}]}
  required: [seat]
"""


def test_a_union_type_gets_the_hint_export_follows(project: Project) -> None:
    project.write(
        "schemas/value.yaml",
        "name: put\ndescription: d\ninputSchema:\n  type: object\n  properties:\n    v: {type: [string, number]}\n",
    )
    (finding,) = toolgen.lint(project.root, providers=("gemini",), gemini="openapi")
    assert finding.severity.value == "warning" and finding.rule == "gemini-type"
    assert finding.message == "[gemini] export rewrites this: type ['string', 'number'] sent as anyOf"
    assert (finding.line, finding.col) == (6, 9)
    assert "nullable" not in finding.message


def test_what_export_cannot_rewrite_is_an_error_saying_what_it_sends_instead(project: Project) -> None:
    project.write(
        "schemas/tree.yaml",
        """\
        name: tree
        description: A recursive tree.
        inputSchema:
          type: object
          properties:
            root: {$ref: "#/$defs/Node"}
          $defs:
            Node: {type: object, properties: {children: {type: array, items: {$ref: "#/$defs/Node"}}}}
        """,
    )
    result = project.cli("lint", "--provider", "gemini", "--gemini-schema", "openapi")
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    assert (
        " error gemini-ref [gemini] `parameters` cannot express this (recursive $ref '#/$defs/Node' cannot be inlined); export sends the tool as parametersJsonSchema"
        in line
    )
    exported = project.cli("export", "--format", "gemini", "--gemini-schema", "openapi")
    assert "tree: sent as parametersJsonSchema" in exported.stderr


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


PATTERNS = """\
tools:
  - name: patterned
    description: Patterns.
    inputSchema:
      type: object
      properties:
        a: {type: string, pattern: "^(a+)+$"}
        b: {type: string, pattern: "(\\\\w+\\\\s?)+$"}
        c: {type: string, pattern: "^(a|a)*$"}
        d: {type: string, pattern: "^[a-z]+(-[a-z]+)?$"}
        e: {type: string, pattern: "(a)?(?(1)b|c)"}
      patternProperties:
        "^(b*)*$": {type: integer}
    outputSchema: {type: string, pattern: "^(?=c)(c?)+$"}
"""


def test_patterns_a_backtracking_engine_can_take_exponential_time_on_are_warned_of(project: Project) -> None:
    project.write("schemas/patterns.yaml", PATTERNS)
    result = project.cli("lint", "--provider", "openai")
    assert result.returncode == 0, result.stdout + result.stderr  # warnings: the checks toolgen runs are bounded
    found = [line for line in result.stdout.splitlines() if " pattern-" in line]
    risk = (
        ": a backtracking regex engine (Python's re, most ECMA-262 ones) can take exponential time on a long "
        "string that almost matches; toolgen's own checks stay bounded, other validators of this schema may not"
    )
    at = "/tools/0/inputSchema/properties"
    assert found == [
        f"schemas/patterns.yaml:7:36: warning pattern-backtracking pattern '^(a+)+$' at {at}/a/pattern has a repeat inside a repeat{risk}",
        f"schemas/patterns.yaml:8:36: warning pattern-backtracking pattern '(\\w+\\s?)+$' at {at}/b/pattern has a repeat inside a repeat{risk}",
        f"schemas/patterns.yaml:9:36: warning pattern-backtracking pattern '^(a|a)*$' at {at}/c/pattern has a repeated choice whose options can match the same text{risk}",
        f"schemas/patterns.yaml:11:36: warning pattern-unchecked at {at}/e/pattern: the pattern '(a)?(?(1)b|c)' cannot be checked: unsupported group '(?(' at position 6; every value it applies to is reported unchecked",
        f"schemas/patterns.yaml:13:9: warning pattern-backtracking pattern '^(b*)*$' at /tools/0/inputSchema/patternProperties/^(b*)*$ has a repeat inside a repeat{risk}",
        f"schemas/patterns.yaml:14:43: warning pattern-backtracking pattern '^(?=c)(c?)+$' at /tools/0/outputSchema/pattern has a repeat of what can match nothing{risk}",
    ]
