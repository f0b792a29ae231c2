"""Unicode property escapes (`\\p{...}`) in schema patterns: translated for Python's re, checked, or refused."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
from support.projects import Project

import toolgen
from toolgen.core.errors import InvalidInputError
from toolgen.runtime.schema.ecma_regex import has_property_escapes, python_patterns, unsupported


def test_general_categories_become_ranges_inside_and_outside_classes() -> None:
    patterns = ["^\\p{Letter}+$", "^[\\p{Lu}\\d]+$", "^\\P{L}+$", "^\\p{gc=Nd}$", "^[^\\p{General_Category=Ll}]$"]
    python = python_patterns(patterns)
    letters, upper_or_digit, not_letters, digit, not_lower = (re.compile(python[p]) for p in patterns)
    assert letters.search("πéa") and not letters.search("a1")
    assert upper_or_digit.search("É9") and not upper_or_digit.search("É9a")
    assert not_letters.search("12 !") and not not_letters.search("1a")
    assert digit.search("٣") and not digit.search("x")  # ARABIC-INDIC DIGIT THREE is Nd
    assert not_lower.search("A") and not not_lower.search("a")


def test_only_real_escapes_count_and_other_properties_are_named() -> None:
    assert not has_property_escapes("a\\\\p{L}")  # an escaped backslash, then the text p{L}
    assert python_patterns(["a\\\\p{L}", "^x$"]) == {}
    assert unsupported("\\p{Script=Greek}\\p{L}\\p{Alphabetic}") == ["Script=Greek", "Alphabetic"]
    with pytest.raises(ValueError, match="Script=Greek"):
        python_patterns(["\\p{Script=Greek}"])


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Iterator[Callable[[str, str], ModuleType]]:
    added: list[str] = []

    def build(package: str, tools: str) -> ModuleType:
        project = make_project(package)
        project.write("schemas/tools.yaml", tools)
        toolgen.build(project.root)
        added.append(str(project.root / "generated"))
        sys.path.insert(0, added[-1])
        return importlib.import_module(package)

    yield build
    for path in added:
        sys.path.remove(path)


def test_a_tool_with_property_escapes_checks_them_and_quotes_the_pattern_as_written(
    built: Callable[[str, str], ModuleType],
) -> None:
    sdk = built(
        "ecma_t_tool",
        """\
        tools:
          - name: greet
            inputSchema:
              type: object
              properties:
                name: {type: string, pattern: "^\\\\p{Lu}\\\\p{Ll}+$"}
                tags:
                  type: object
                  patternProperties: {"^\\\\p{L}+$": {type: integer}}
              required: [name]
        """,
    )
    assert sdk.validate_tool_arguments("greet", {"name": "Émile", "tags": {"π": 1, "123": "x"}}).name == "Émile"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("greet", {"name": "émile", "tags": {"ß": "x"}})
    problems = {p.pointer: p.message for p in caught.value.problems}
    assert problems["/name"] == "expected a string matching '^\\p{Lu}\\p{Ll}+$', got \"émile\""
    assert "/tags/ß" in problems
    # Providers get the pattern as written.
    assert sdk.TOOLS["greet"].input_schema["properties"]["name"]["pattern"] == "^\\p{Lu}\\p{Ll}+$"


def test_a_property_without_a_table_is_refused_where_it_is_written(make_project: Callable[..., Project]) -> None:
    project = make_project("ecma_t_script")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: greek
            inputSchema:
              type: object
              properties: {word: {type: string, pattern: "^\\\\p{Script=Greek}+$"}}
        """,
    )
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [diagnostic] = [d for d in caught.value.diagnostics if d.rule == "pattern-unsupported"]
    assert diagnostic.pointer == "/tools/0/inputSchema/properties/word/pattern"
    assert "'Script=Greek'" in diagnostic.message and "General_Category" in diagnostic.message
    assert not (project.root / "generated").exists()


def test_a_message_extension_with_a_property_escape_is_refused(make_project: Callable[..., Project]) -> None:
    project = make_project("ecma_t_ext")
    project.write(
        "schemas/tools.yaml",
        "tools:\n  - name: noop\n    inputSchema: {type: object}\n",
    )
    project.write("ext/message.yaml", 'properties:\n  tenant: {type: string, pattern: "^\\\\p{L}+$"}\n')
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + "extend:\n  message: ext/message.yaml\n")
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [diagnostic] = [d for d in caught.value.diagnostics if d.rule == "pattern-unsupported"]
    assert diagnostic.path == "ext/message.yaml" and diagnostic.pointer == "/properties/tenant/pattern"


def test_escapes_under_a_property_named_like_a_data_keyword_and_in_closed_maps(
    built: Callable[[str, str], ModuleType],
) -> None:
    sdk = built(
        "ecma_t_names",
        """\
        tools:
          - name: odd
            inputSchema:
              type: object
              properties:
                default: {type: string, pattern: "^\\\\p{L}+$"}
                keys:
                  type: object
                  patternProperties: {"^\\\\p{Lu}": {type: integer}}
                  additionalProperties: false
              x-meta: {pattern: "^\\\\p{Script=Greek}$"}
        """,
    )
    assert sdk.validate_tool_arguments("odd", {"default": "abc", "keys": {"Ab": 1}}).default == "abc"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("odd", {"default": "a1", "keys": {"ab": 1}})
    problems = {p.pointer: p.message for p in caught.value.problems}
    assert problems["/default"] == "expected a string matching '^\\p{L}+$', got \"a1\""
    # A key no pattern matches is refused where it is; no sentence quotes a translated pattern.
    assert problems["/keys/ab"] == "expected no value here (not an allowed field), got 1"
    assert not any("U0000" in message for message in problems.values())


def test_an_escape_in_a_message_extension_pattern_properties_key_is_refused(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("ecma_t_ext_keys")
    project.write("schemas/tools.yaml", "tools:\n  - name: noop\n    inputSchema: {type: object}\n")
    project.write(
        "ext/message.yaml",
        'properties:\n  labels: {type: object, patternProperties: {"^\\\\p{Lu}": {type: string}}}\n',
    )
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + "extend:\n  message: ext/message.yaml\n")
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [diagnostic] = [d for d in caught.value.diagnostics if d.rule == "pattern-unsupported"]
    assert diagnostic.pointer == "/properties/labels/patternProperties/^\\p{Lu}"
