"""Every definition of the tooldefs corpus builds into importable models or is rejected with a clear diagnostic."""

from __future__ import annotations

import pytest

from toolgen.normalize import STANDARD_TYPES
from toolgen.schemawalk import walk

from conftest import shared_dir
from tooldefs_build import Report, classify_runs, distinct_definitions

CLEAR_RULES = {"tool-dialect", "tool-shape", "schema-invalid", "pattern-unsupported", "nonstandard-type"}


@pytest.fixture(scope="module")
def definitions() -> list[dict[str, object]]:
    return [raw for _, raw in distinct_definitions(shared_dir("tooldefs"))]


@pytest.fixture(scope="module")
def reports(definitions: list[dict[str, object]]) -> dict[str, Report]:
    """Built with normalized types, and as written through the front end alone: one pool runs both, so that the
    short front-end jobs fill the time the last builds would leave a core idle."""
    normalized, as_written = classify_runs(definitions, [(True, True), (False, False)])
    return {"normalized": normalized, "as written": as_written}


def _schema_of(raw: dict[str, object]) -> object:
    function = raw.get("function")
    source = function if isinstance(function, dict) else raw
    return source.get("parameters", source.get("inputSchema"))


def _has_nonstandard_type(schema: object) -> bool:
    for sub, _ in walk(schema):
        if isinstance(sub, dict) and "type" in sub:
            names = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
            if any(not isinstance(n, str) or n not in STANDARD_TYPES for n in names):
                return True
    return False


def test_with_normalized_types_every_definition_builds_or_is_rejected_clearly(
    definitions: list[dict[str, object]], reports: dict[str, Report]
) -> None:
    report = reports["normalized"]
    assert len(report.outcomes) == len(definitions)
    for outcome in report.outcomes:
        if not outcome.built:
            assert outcome.rule in CLEAR_RULES, (outcome, definitions[outcome.key])
            assert outcome.message
    # Non-standard types are the corpus's most common problem: normalization must make those build.
    typed = [i for i, raw in enumerate(definitions) if _has_nonstandard_type(_schema_of(raw))]
    assert typed
    still_rejected = [
        i for i in typed if not report.outcomes[i].built and report.outcomes[i].rule == "nonstandard-type"
    ]
    assert still_rejected == []


def test_as_written_a_nonstandard_type_is_never_accepted_silently(
    definitions: list[dict[str, object]], reports: dict[str, Report]
) -> None:
    report = reports["as written"]
    assert len(report.outcomes) == len(definitions)
    for index, raw in enumerate(definitions):
        if _has_nonstandard_type(_schema_of(raw)):
            outcome = report.outcomes[index]
            assert not outcome.built, raw
            assert outcome.rule in {"nonstandard-type", "tool-dialect", "tool-shape"}, outcome
